/* backend_cuda.c — the CUDA backend (DESIGN.md: Backend interface, cuda):
 * CUDA C kernels on an NVIDIA GPU through the driver API (cu.h).
 *
 * Parent side, build (build.c): a candidate is one .cu file whose `// ksearch:
 * launch grid=(...) block=(...) [smem=(...)]` lines (launch.h, shared with
 * OpenCL) say which extern "C" __global__ kernels run, in order, over which
 * grid. nvcc compiles it with -DPARAM=V to a cubin for the device's own
 * architecture (sm_90a on an H200; KSEARCH_CUDA_ARCH overrides, for
 * machines without a GPU), in a child under the build time limit; the cubin
 * is cached under <cache>/build/<hash>/ keyed by source, options, toolkit
 * version and device identity, with artifact.json naming it. Only device
 * code is compiled (-cubin): host code in a candidate, main() or system()
 * included, is never built into anything that runs.
 *
 * Runner side (this file), load (before the sandbox closes): the driver is
 * loaded, the primary context created, modules loaded eagerly
 * (CUDA_MODULE_LOADING= EAGER: lazy loading would allocate on the first launch,
 * after the sandbox), one device arena sized for the largest workload
 * allocated, the events created and the flush kernel run once. After the
 * sandbox closes, dev_alloc hands out pieces of the arena, so no cuMemAlloc
 * runs under the filter (cuda_sandbox_rules says what the driver may still
 * call).
 *
 * Per call: the flush kernel reads a buffer of 2x L2 (clean lines), then an
 * event, the candidate's launches on the default stream, an event; sync()
 * synchronizes the whole context (a kernel cannot leave work behind on
 * another stream: there is no host code, and device-side launches need
 * -rdc, which the build does not use) and reads the launch status and the
 * event time. Kernel arguments follow the task's C calling convention:
 * device pointers for tensors (inputs, then outputs), int64 for var axes,
 * scalars as float / int32 / int64, then the scratch pointer when a launch
 * asks for scratch=(bytes). bfloat16 and float16 tensors are 16-bit.
 * Last come the TMA tensor maps of `// ksearch: tensormap` lines
 * (tensormap.h), in line order: each a CUtensorMap the runner encodes with
 * cuTensorMapEncodeTiled over exactly the bytes of one of the call's own
 * buffers (the task says where, how big and of which type: the candidate
 * says only the tile and the swizzle), re-encoded when a buffer moves or
 * the workload changes.
 */
#include "backend/backend.h"
#include "backend/cuda/build.h"
#include "backend/cuda/cu.h"
#include "backend/guard_scan.h"
#include "eval/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_GUARD 4096
#define PAGE 4096

static ks_device_class cuda_device_class(void) { return KS_DEV_GPU; }

/* ---- runner side */

typedef struct cu_buf {
  CUdeviceptr base, data;
  size_t bytes, guard, total;
  unsigned char guard_byte;
  bool own; /* cuMemAlloc'ed, not from the arena */
} cu_buf;

typedef struct cu_handle {
  ks_cu cu;
  ks_cu_dev dev;
  CUcontext ctx;
  CUmodule mod, sup;
  CUfunction fn[KS_LAUNCH_MAX], flush_fn, move_fn[2];
  const ks_task *task;
  plan_info pi;
  ks_launch_geom geom[KS_LAUNCH_MAX];
  double scratch_bytes;
  int64_t axes[KS_MAX_AXES];
  bool have_geom;
  CUdeviceptr arena, flush, sink;
  size_t arena_bytes, arena_used, flush16;
  int live;
  cu_buf scratch;
  ks_tmap_geom tgeom[KS_TMAP_MAX];
  ks_cu_tensormap *tmaps;           /* KS_TMAP_MAX, 64-byte aligned */
  CUdeviceptr tmap_at[KS_TMAP_MAX]; /* the address encoded; 0: none yet */
  CUevent ev[2];
  bool launched;
  double device_ns;
  int nv_fds[64], n_nv_fds;
  char error[600];
} cu_handle;

static void set_err(cu_handle *h, const char *what, CUresult r) {
  if (h->error[0])
    return;
  char b[256];
  snprintf(h->error, sizeof h->error, "%.200s: %s", what,
           ks_cu_errstr(&h->cu, r, b, sizeof b));
}

static void cuda_unload(void *vh);

static ks_code load_fail(cu_handle *h, ks_code rc) {
  cuda_unload(h);
  return rc;
}

static size_t round_page(size_t b) { return (b + PAGE - 1) / PAGE * PAGE; }

/* Device bytes the largest workload needs: every tensor with its guards. */
static size_t arena_need(const ks_task *t) {
  size_t most = 0;
  for (int wi = 0; wi < t->n_workloads; wi++) {
    const ks_workload *w = &t->workloads[wi];
    if (!ks_workload_applies(w, KS_DEV_GPU))
      continue;
    size_t b = 0;
    for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
      const ks_tensor *ts =
          i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
      b += round_page((size_t)ks_tensor_numel(t, ts, w) *
                      ks_dtype_size(ts->dtype)) +
           2 * ARENA_GUARD;
    }
    most = b > most ? b : most;
  }
  return most + PAGE;
}

/* The L2 flush (ks_flush reads 2x L2 of the flush buffer): before every
 * candidate call, every probe move and once at load. */
static CUresult launch_flush(cu_handle *h) {
  unsigned long long n16 = h->flush16;
  void *fa[] = {&h->flush, &n16, &h->sink};
  return h->cu.LaunchKernel(h->flush_fn, (unsigned)h->dev.sm_count * 4, 1, 1,
                            512, 1, 1, 0, NULL, fa, NULL);
}

static ks_code cuda_load(const char *artifact, const ks_task *task, void **out,
                         ks_err *err) {
  *out = NULL;
  /* modules load whole now, not at their first launch (which would
   * allocate device memory after the sandbox closed) */
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  json_error_t je;
  json_t *j = json_load_file(artifact, 0, &je);
  if (!j)
    return ks_err_set(err, KS_ERR_CANDIDATE, "%s: %s", artifact, je.text);
  cu_handle *h = ks_xcalloc(1, sizeof *h);
  h->task = task;
  const char *fmt = json_string_value(json_object_get(j, "format"));
  const char *ident = json_string_value(json_object_get(j, "identity"));
  const char *entry = json_string_value(json_object_get(j, "entry"));
  const char *cubin = json_string_value(json_object_get(j, "cubin"));
  const char *support = json_string_value(json_object_get(j, "support"));
  json_t *lines = json_object_get(j, "launch");
  json_t *params = json_object_get(j, "params");
  json_t *tlines = json_object_get(j, "tensormap"); /* absent: none */
  ks_code rc = KS_OK;
  if (!fmt || strcmp(fmt, CUDA_FORMAT) || !ident || !entry || !cubin ||
      !support || !json_is_array(lines) || !json_is_object(params))
    rc = ks_err_set(err, KS_ERR_CANDIDATE,
                    "%s: not a CUDA artifact of this ksearch (%s)", artifact,
                    fmt ? fmt : "no format");
  for (size_t i = 0; !rc && i < json_array_size(lines); i++) {
    if (h->pi.plan.n >= KS_LAUNCH_MAX)
      break;
    rc =
        ks_launch_parse_line(json_string_value(json_array_get(lines, i)), entry,
                             (int)i + 1, &h->pi.plan.k[h->pi.plan.n], err);
    if (!rc) {
      h->pi.scratch |= h->pi.plan.k[h->pi.plan.n].scratch != NULL;
      h->pi.plan.n++;
    }
  }
  for (size_t i = 0; !rc && i < json_array_size(tlines); i++) {
    json_t *o = json_array_get(tlines, i);
    const char *text = json_string_value(json_object_get(o, "text"));
    if (h->pi.maps.n >= KS_TMAP_MAX || !text) {
      rc = ks_err_set(err, KS_ERR_CANDIDATE, "%s: a bad tensormap entry",
                      artifact);
      break;
    }
    rc = ks_tmap_parse_line(text, task,
                            (int)json_integer_value(json_object_get(o, "line")),
                            &h->pi.maps.m[h->pi.maps.n], err);
    if (!rc)
      h->pi.maps.n++;
  }
  const char *pk;
  json_t *pv;
  json_object_foreach(params, pk, pv) {
    if (h->pi.n_names < 2 * KS_MAX_PARAMS && json_is_string(pv)) {
      ks_strlcpy(h->pi.names[h->pi.n_names].name, pk, 64);
      ks_strlcpy(h->pi.names[h->pi.n_names].value, json_string_value(pv), 64);
      h->pi.n_names++;
    }
  }
  char cubin_path[PATH_MAX], support_path[PATH_MAX], expected[512];
  ks_strlcpy(cubin_path, artifact, sizeof cubin_path);
  char *slash = strrchr(cubin_path, '/');
  size_t at = slash ? (size_t)(slash + 1 - cubin_path) : 0;
  snprintf(cubin_path + at, sizeof cubin_path - at, "%s", cubin ? cubin : "?");
  ks_strlcpy(support_path, support ? support : "", sizeof support_path);
  ks_strlcpy(expected, ident ? ident : "", sizeof expected);
  json_decref(j);
  if (!rc)
    rc = ks_cuda_plan_check(task, &h->pi, artifact, err);
  if (rc)
    return load_fail(h, rc == KS_ERR_INPUT ? KS_ERR_CANDIDATE : rc);

  if ((rc = ks_cu_load(&h->cu, err)) || (rc = ks_cu_pick(&h->cu, &h->dev, err)))
    return load_fail(h, rc);
  if (h->pi.maps.n && !h->cu.TensorMapEncodeTiled)
    return load_fail(h,
                     ks_err_set(err, KS_ERR_ENV,
                                "the CUDA driver lacks cuTensorMapEncodeTiled "
                                "(CUDA 12.0 or newer), which the "
                                "candidate's tensormap lines need"));
  if (h->pi.maps.n) {
    h->tmaps = aligned_alloc(64, sizeof(ks_cu_tensormap) * KS_TMAP_MAX);
    if (!h->tmaps)
      return load_fail(h, ks_err_set(err, KS_ERR_NOMEM, "tensor maps"));
    memset(h->tmaps, 0, sizeof(ks_cu_tensormap) * KS_TMAP_MAX);
  }
  if (strcmp(h->dev.identity, expected))
    return load_fail(h, ks_err_set(err, KS_ERR_ENV,
                                   "%s was built for CUDA device \"%s\" but "
                                   "the device is now \"%s\"",
                                   artifact, expected, h->dev.identity));
  char b[256];
  CUresult r = h->cu.PrimaryCtxRetain(&h->ctx, h->dev.dev);
  if (r == 0)
    r = h->cu.CtxSetCurrent(h->ctx);
  if (r)
    return load_fail(h, ks_err_set(err, KS_ERR_ENV, "CUDA context on %s: %s",
                                   h->dev.name,
                                   ks_cu_errstr(&h->cu, r, b, sizeof b)));
  for (int m = 0; m < 2; m++) {
    char *data = NULL;
    const char *p = m ? support_path : cubin_path;
    if (ks_read_file(p, &data, NULL, err))
      return load_fail(h, m ? KS_ERR_ENV : KS_ERR_CANDIDATE);
    r = h->cu.ModuleLoadData(m ? &h->sup : &h->mod, data);
    free(data);
    if (r)
      return load_fail(h, ks_err_set(err, m ? KS_ERR_ENV : KS_ERR_CANDIDATE,
                                     "%s: the cubin does not load: %s", p,
                                     ks_cu_errstr(&h->cu, r, b, sizeof b)));
  }
  for (int k = 0; k < h->pi.plan.n; k++) {
    const char *name = h->pi.plan.k[k].kernel;
    if ((r = h->cu.ModuleGetFunction(&h->fn[k], h->mod, name)))
      return load_fail(
          h, ks_err_set(err, KS_ERR_CANDIDATE,
                        "kernel %s is not in the cubin (%s); declare it "
                        "extern \"C\" __global__ so that its name is not "
                        "mangled",
                        name, ks_cu_errstr(&h->cu, r, b, sizeof b)));
    if (h->pi.max_smem[k] > 48 * 1024 &&
        (r = h->cu.FuncSetAttribute(h->fn[k], KS_CU_FUNC_MAX_DYN_SMEM,
                                    (int)h->pi.max_smem[k])))
      return load_fail(
          h,
          ks_err_set(err, KS_ERR_CANDIDATE,
                     "kernel %s: %zu bytes of dynamic shared memory: %s "
                     "(this device allows %d per block)",
                     name, h->pi.max_smem[k],
                     ks_cu_errstr(&h->cu, r, b, sizeof b), h->dev.smem_optin));
  }
  if ((r = h->cu.ModuleGetFunction(&h->flush_fn, h->sup, "ks_flush")))
    return load_fail(h, ks_err_set(err, KS_ERR_ENV, "%s: no ks_flush: %s",
                                   support_path,
                                   ks_cu_errstr(&h->cu, r, b, sizeof b)));
  /* the ceiling probe's shapes (probe_move); a support cubin without them
   * leaves the probe off, never the evaluation */
  if (h->cu.ModuleGetFunction(&h->move_fn[0], h->sup, "ks_rl_move") ||
      h->cu.ModuleGetFunction(&h->move_fn[1], h->sup, "ks_rl_move_blocked"))
    h->move_fn[0] = h->move_fn[1] = NULL;
  /* every device allocation now, while the driver may still ioctl */
  h->arena_bytes = arena_need(task) +
                   (h->pi.scratch ? round_page((size_t)h->pi.max_scratch + 1) +
                                        2 * ARENA_GUARD
                                  : 0);
  h->flush16 =
      (size_t)(h->dev.l2_bytes > 0 ? h->dev.l2_bytes : 64 << 20) * 2 / 16;
  if ((r = h->cu.MemAlloc(&h->arena, h->arena_bytes)) ||
      (r = h->cu.MemAlloc(&h->flush, h->flush16 * 16)) ||
      (r = h->cu.MemAlloc(&h->sink, 256)) ||
      (r = h->cu.MemsetD8(h->flush, 0x5a, h->flush16 * 16)) ||
      (r = h->cu.EventCreate(&h->ev[0], 0)) ||
      (r = h->cu.EventCreate(&h->ev[1], 0)))
    return load_fail(h, ks_err_set(err, KS_ERR_ENV,
                                   "CUDA: %zu MiB of device buffers and "
                                   "events: %s",
                                   h->arena_bytes >> 20,
                                   ks_cu_errstr(&h->cu, r, b, sizeof b)));
  if (h->pi.scratch) {
    cu_buf *s = &h->scratch;
    s->bytes = (size_t)h->pi.max_scratch;
    s->guard = ARENA_GUARD;
    s->total = round_page(s->bytes + 1) + 2 * ARENA_GUARD;
    s->guard_byte = 0xFF; /* NaN: a kernel must write scratch first */
    s->base = h->arena + h->arena_bytes - s->total;
    s->data = s->base + s->guard;
    if ((r = h->cu.MemsetD8(s->base, 0xFF, s->total)))
      return load_fail(h, ks_err_set(err, KS_ERR_ENV, "CUDA scratch: %s",
                                     ks_cu_errstr(&h->cu, r, b, sizeof b)));
    h->arena_bytes -= s->total;
  }
  /* warm up ksearch's own path once: copies both ways (the driver's
   * staging buffers), flush, events, synchronize */
  unsigned char probe[256] = {0};
  if ((r = h->cu.MemcpyHtoD(h->sink, probe, sizeof probe)) ||
      (r = h->cu.MemcpyDtoH(probe, h->sink, sizeof probe)))
    return load_fail(h, ks_err_set(err, KS_ERR_ENV, "CUDA copies: %s",
                                   ks_cu_errstr(&h->cu, r, b, sizeof b)));
  if ((r = h->cu.EventRecord(h->ev[0], NULL)) || (r = launch_flush(h)) ||
      (r = h->cu.EventRecord(h->ev[1], NULL)) || (r = h->cu.CtxSynchronize()))
    return load_fail(h, ks_err_set(err, KS_ERR_ENV, "CUDA warm-up: %s",
                                   ks_cu_errstr(&h->cu, r, b, sizeof b)));
  /* one encode now, before the sandbox: whatever the driver sets up on a
   * first call happens here, and a driver whose cuTensorMapEncodeTiled does
   * not take the CUDA 12/13 arguments says so here, not in a candidate's
   * result (a 64 x 64 bf16 map over the arena, box 64 x 8, 128B swizzle) */
  if (h->pi.maps.n) {
    unsigned long long dim[2] = {64, 64}, stride[1] = {128};
    unsigned box[2] = {64, 8}, es[2] = {1, 1};
    if ((r = h->cu.TensorMapEncodeTiled(&h->tmaps[0], 9, 2,
                                        (void *)(uintptr_t)h->arena, dim,
                                        stride, box, es, 0, 3, 3, 0)))
      return load_fail(h, ks_err_set(err, KS_ERR_ENV,
                                     "CUDA: cuTensorMapEncodeTiled refuses a "
                                     "valid 64 x 64 bfloat16 map: %s",
                                     ks_cu_errstr(&h->cu, r, b, sizeof b)));
    memset(h->tmaps, 0, sizeof(ks_cu_tensormap) * KS_TMAP_MAX);
  }
  h->n_nv_fds = ks_sandbox_device_fds("/dev/nvidia", h->nv_fds, 64);
  *out = h;
  return KS_OK;
}

static ks_code set_geometry(cu_handle *h, const int64_t *axes, ks_err *err) {
  if (h->have_geom &&
      !memcmp(h->axes, axes, sizeof(int64_t) * (size_t)h->task->n_axes))
    return KS_OK;
  ks_workload w;
  memset(&w, 0, sizeof w);
  memcpy(w.axis, axes, sizeof(int64_t) * (size_t)h->task->n_axes);
  ks_code rc = ks_launch_eval(&h->pi.plan, h->task, &w, h->pi.names,
                              h->pi.n_names, h->geom, &h->scratch_bytes, err);
  if (!rc)
    rc = ks_tmap_eval(&h->pi.maps, h->task, &w, h->pi.names, h->pi.n_names,
                      h->tgeom, err);
  if (rc)
    return rc;
  memset(h->tmap_at, 0, sizeof h->tmap_at); /* encode again */
  memcpy(h->axes, axes, sizeof(int64_t) * (size_t)h->task->n_axes);
  h->have_geom = true;
  return KS_OK;
}

typedef union cu_arg {
  CUdeviceptr p;
  long long l;
  int i;
  float f;
} cu_arg;

/* Encodes the tensor maps over this call's buffers where a buffer moved or
 * the workload changed (set_geometry clears tmap_at). A workload the TMA
 * cannot address (a stride not a multiple of 16 bytes) gets 128 zero
 * bytes: the kernel must not use that map (tensormap.h). False with
 * h->error set when the driver refuses. */
static bool encode_maps(cu_handle *h, void *const *bufs) {
  for (int i = 0; i < h->pi.maps.n; i++) {
    const ks_tmap *m = &h->pi.maps.m[i];
    const ks_tmap_geom *g = &h->tgeom[i];
    const cu_buf *b = bufs[m->tensor];
    if (h->tmap_at[i] == b->data)
      continue;
    memset(&h->tmaps[i], 0, sizeof h->tmaps[i]);
    if ((uint64_t)b->bytes != g->bytes) { /* ksearch's own bug, not theirs */
      snprintf(h->error, sizeof h->error,
               "tensormap %s (line %d): buffer %s holds %zu bytes, the map "
               "%llu",
               m->name, m->line, m->of, b->bytes, (unsigned long long)g->bytes);
      return false;
    }
    if (g->encodable) {
      unsigned es[KS_TMAP_RANK] = {1, 1, 1, 1, 1};
      CUresult r = h->cu.TensorMapEncodeTiled(
          &h->tmaps[i], g->dtype, (unsigned)g->rank, (void *)(uintptr_t)b->data,
          (const unsigned long long *)g->dim,
          (const unsigned long long *)g->stride, g->box, es,
          0 /* interleave none */, g->swizzle, 3 /* L2 promotion 256 B */,
          0 /* out of bounds: zeros */);
      if (r) {
        char what[300], dims[120] = "", boxes[60] = "";
        for (int d = 0; d < g->rank; d++) {
          size_t dl = strlen(dims), bl = strlen(boxes);
          snprintf(dims + dl, sizeof dims - dl, "%s%llu", d ? "," : "",
                   (unsigned long long)g->dim[d]);
          snprintf(boxes + bl, sizeof boxes - bl, "%s%u", d ? "," : "",
                   g->box[d]);
        }
        snprintf(what, sizeof what,
                 "tensormap %s (line %d) over %s: cuTensorMapEncodeTiled(dims "
                 "(%s), box (%s), swizzle %d)",
                 m->name, m->line, m->of, dims, boxes, m->swizzle);
        set_err(h, what, r);
        return false;
      }
    }
    h->tmap_at[i] = b->data;
  }
  return true;
}

static void cuda_run(void *vh, void *const *bufs, const int64_t *axes,
                     const double *scalars) {
  cu_handle *h = vh;
  h->launched = false;
  if (h->error[0])
    return;
  ks_err err;
  if (set_geometry(h, axes, &err)) {
    snprintf(h->error, sizeof h->error, "launch geometry: %.500s", err.msg);
    return;
  }
  if (h->pi.scratch && h->scratch_bytes > (double)h->scratch.bytes) {
    snprintf(h->error, sizeof h->error,
             "scratch of %.0f bytes asked for a workload the load did not "
             "size for",
             h->scratch_bytes);
    return;
  }
  const ks_task *t = h->task;
  cu_arg a[2 * KS_MAX_TENSORS + KS_MAX_AXES + KS_MAX_SCALARS + 1];
  void *
      args[2 * KS_MAX_TENSORS + KS_MAX_AXES + KS_MAX_SCALARS + 1 + KS_TMAP_MAX];
  int na = 0;
  for (int i = 0; i < t->n_inputs + t->n_outputs; i++)
    a[na++].p = ((cu_buf *)bufs[i])->data;
  for (int i = 0; i < t->n_axes; i++)
    if (!t->axes[i].is_const)
      a[na++].l = axes[i];
  for (int i = 0; i < t->n_scalars; i++) {
    if (t->scalars[i].dtype == KS_F32)
      a[na++].f = (float)scalars[i];
    else if (t->scalars[i].dtype == KS_I32)
      a[na++].i = (int)scalars[i];
    else
      a[na++].l = (long long)scalars[i];
  }
  if (h->pi.scratch)
    a[na++].p = h->scratch.data;
  for (int i = 0; i < na; i++)
    args[i] = &a[i];
  if (h->pi.maps.n && !encode_maps(h, bufs))
    return;
  for (int i = 0; i < h->pi.maps.n; i++)
    args[na + i] = &h->tmaps[i];
  /* L2 holds the flush buffer, not the last call's data */
  CUresult r = launch_flush(h);
  if (r) {
    set_err(h, "the L2 flush kernel", r);
    return;
  }
  if ((r = h->cu.EventRecord(h->ev[0], NULL))) {
    set_err(h, "cuEventRecord", r);
    return;
  }
  bool first = true;
  for (int k = 0; k < h->pi.plan.n; k++) {
    const ks_launch_geom *g = &h->geom[k];
    if (g->skip) /* when=(0) for this workload */
      continue;
    /* one configuration for both entry points: a plain launch is the
     * same configuration without attributes */
    ks_cu_launch_attr at = {.id = KS_CU_LAUNCH_ATTR_PROGRAMMATIC_SERIALIZATION};
    at.value.i = 1;
    ks_cu_launch_config lc = {.grid = {(unsigned)(g->global[0] / g->local[0]),
                                       (unsigned)(g->global[1] / g->local[1]),
                                       (unsigned)(g->global[2] / g->local[2])},
                              .block = {(unsigned)g->local[0],
                                        (unsigned)g->local[1],
                                        (unsigned)g->local[2]},
                              .smem = (unsigned)g->smem,
                              .stream = NULL,
                              .attrs = &at,
                              .n_attrs = 1};
    /* pdl=: may overlap the kernel launched before it in this call, never
     * the flush or the clock's start (the first launch); a driver or GPU
     * without programmatic launch serializes, which griddepcontrol.wait
     * then finds done */
    if (g->pdl && !first && h->cu.LaunchKernelEx && h->dev.cc_major >= 9)
      r = h->cu.LaunchKernelEx(&lc, h->fn[k], args, NULL);
    else
      r = h->cu.LaunchKernel(h->fn[k], lc.grid[0], lc.grid[1], lc.grid[2],
                             lc.block[0], lc.block[1], lc.block[2], lc.smem,
                             NULL, args, NULL);
    first = false;
    if (r) {
      char what[200];
      snprintf(what, sizeof what,
               "kernel %s: cuLaunchKernel(grid=%zu,%zu,%zu block=%zu,%zu,%zu "
               "smem=%zu)",
               h->pi.plan.k[k].kernel, g->global[0] / g->local[0],
               g->global[1] / g->local[1], g->global[2] / g->local[2],
               g->local[0], g->local[1], g->local[2], g->smem);
      set_err(h, what, r);
      return;
    }
  }
  if ((r = h->cu.EventRecord(h->ev[1], NULL))) {
    set_err(h, "cuEventRecord", r);
    return;
  }
  h->launched = true;
}

static void cuda_sync(void *vh) {
  cu_handle *h = vh;
  h->device_ns = 0;
  /* the whole context: whatever a kernel started must be finished */
  CUresult r = h->cu.CtxSynchronize();
  if (r) {
    set_err(h, "the kernels (cuCtxSynchronize)", r);
    return;
  }
  float ms = 0;
  if (h->launched && h->cu.EventElapsedTime(&ms, h->ev[0], h->ev[1]) == 0 &&
      ms > 0)
    h->device_ns = (double)ms * 1e6;
  h->launched = false;
}

/* The ceiling probe (backend.h: probe_move), in a probe-mode executor whose
 * arena nothing else uses: the inputs' bytes at its start, the outputs'
 * after them. Every shape runs after the L2 flush, as every candidate call
 * does on this backend (so `evict` changes nothing here), and the fastest
 * counts. */
static double cuda_probe_move(void *vh, size_t in_bytes, size_t out_bytes,
                              bool evict) {
  (void)evict;
  cu_handle *h = vh;
  unsigned long long na = in_bytes / 16, nb = out_bytes / 16;
  size_t off = (na * 16 + 4095) / 4096 * 4096;
  if (!h->move_fn[0] || na + nb == 0 || off + nb * 16 > h->arena_bytes)
    return 0;
  CUdeviceptr a = h->arena, b = h->arena + off;
  unsigned long long n = na > nb ? na : nb;
  void *ma[] = {&a, &na, &b, &nb, &h->sink};
  unsigned sm = (unsigned)h->dev.sm_count;
  unsigned grid[2] = {sm * 4, (unsigned)((n + 2047) / 2048)};
  double best = 0;
  for (int k = 0; k < 2; k++) {
    float ms = 0;
    if (launch_flush(h) || h->cu.EventRecord(h->ev[0], NULL) ||
        h->cu.LaunchKernel(h->move_fn[k], grid[k], 1, 1, 512, 1, 1, 0, NULL, ma,
                           NULL) ||
        h->cu.EventRecord(h->ev[1], NULL) || h->cu.CtxSynchronize() ||
        h->cu.EventElapsedTime(&ms, h->ev[0], h->ev[1]) || ms <= 0)
      return 0;
    double ns = (double)ms * 1e6;
    best = best == 0 || ns < best ? ns : best;
  }
  return best;
}

static double cuda_device_time(void *vh) {
  return ((cu_handle *)vh)->device_ns;
}

static void cuda_unload(void *vh) {
  cu_handle *h = vh;
  if (!h)
    return;
  if (h->cu.lib) {
    for (int i = 0; i < 2; i++)
      if (h->ev[i])
        h->cu.EventDestroy(h->ev[i]);
    if (h->arena)
      h->cu.MemFree(h->arena);
    if (h->flush)
      h->cu.MemFree(h->flush);
    if (h->sink)
      h->cu.MemFree(h->sink);
    if (h->mod)
      h->cu.ModuleUnload(h->mod);
    if (h->sup)
      h->cu.ModuleUnload(h->sup);
    if (h->ctx)
      h->cu.PrimaryCtxRelease(h->dev.dev);
    ks_cu_unload(&h->cu);
  }
  ks_cuda_plan_free(&h->pi);
  free(h->tmaps);
  free(h);
}

/* ---- device buffers: pieces of the arena with guard bytes around them */

static void *cuda_dev_alloc(void *vh, size_t bytes, size_t guard,
                            unsigned char guard_byte) {
  cu_handle *h = vh;
  cu_buf *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->bytes = bytes;
  b->guard = guard;
  b->total = round_page(bytes ? bytes : 1) + 2 * guard;
  b->guard_byte = guard_byte;
  if (h->arena_used + b->total <= h->arena_bytes) {
    b->base = h->arena + h->arena_used;
    h->arena_used += b->total;
  } else if (h->cu.MemAlloc(&b->base, b->total) == 0) {
    b->own = true; /* outside the sandbox only: needs ioctl */
  } else {
    free(b);
    return NULL;
  }
  b->data = b->base + guard;
  if (h->cu.MemsetD8(b->base, guard_byte, b->total)) {
    if (b->own)
      h->cu.MemFree(b->base);
    free(b);
    return NULL;
  }
  h->live++;
  return b;
}

static void cuda_dev_free(void *vh, void *vb) {
  cu_handle *h = vh;
  cu_buf *b = vb;
  if (!b)
    return;
  if (b->own)
    h->cu.MemFree(b->base);
  if (--h->live == 0)
    h->arena_used = 0; /* the runner frees a workload's buffers together */
  free(b);
}

static bool cuda_upload(void *vh, void *vb, const void *src, size_t bytes) {
  cu_handle *h = vh;
  cu_buf *b = vb;
  if (bytes > b->bytes)
    return false;
  return bytes == 0 || h->cu.MemcpyHtoD(b->data, src, bytes) == 0;
}

static bool cuda_download(void *vh, void *vb, void *dst, size_t bytes) {
  cu_handle *h = vh;
  cu_buf *b = vb;
  if (bytes > b->bytes)
    return false;
  return bytes == 0 || h->cu.MemcpyDtoH(dst, b->data, bytes) == 0;
}

static long cuda_dev_guard_check(void *vh, void *vb) {
  cu_handle *h = vh;
  cu_buf *b = vb;
  size_t tail = b->total - b->guard - b->bytes;
  size_t n = b->guard > tail ? b->guard : tail;
  unsigned char *tmp = malloc(n ? n : 1);
  if (!tmp)
    return KS_GUARD_UNREADABLE;
  long off = KS_GUARD_UNREADABLE;
  if (h->cu.MemcpyDtoH(tmp, b->base, b->guard) == 0) {
    off = ks_guard_scan_head(tmp, b->guard, b->guard_byte);
    if (!off)
      off = h->cu.MemcpyDtoH(tmp, b->data + b->bytes, tail) == 0
                ? ks_guard_scan_tail(tmp, tail, b->guard_byte)
                : KS_GUARD_UNREADABLE;
  }
  free(tmp);
  return off;
}

static bool cuda_dev_check(void *vh, char *reason, size_t n) {
  cu_handle *h = vh;
  if (h->error[0]) {
    snprintf(reason, n, "CUDA: %s", h->error);
    return false;
  }
  if (h->pi.scratch) {
    long off = cuda_dev_guard_check(h, &h->scratch);
    if (off) {
      ks_guard_reason(reason, n, off, "the scratch buffer");
      return false;
    }
  }
  return true;
}

/* What the driver needs after setup, on what it already opened. Every
 * allocation, module load and event exists before the filter, so short
 * calls need nothing (audit on the H200, 2026-12-03: launches, events,
 * copies and synchronization trapped no call). Its helper threads wait in
 * the poll family; and a kernel that runs long makes cuCtxSynchronize block
 * in an ioctl on a /dev/nvidia* descriptor (seen on the H200 with
 * tests/adversarial/cuda/spin.cu), so ioctl is allowed on exactly the
 * descriptors the driver held at load time: no host code of a candidate
 * runs, so only the driver can make those calls.
 * KSEARCH_CUDA_SANDBOX_ALLOW=NR[,NR...] adds call numbers an audit
 * (KSEARCH_SANDBOX_AUDIT) finds, for drivers that need more. */
static ks_code cuda_sandbox_rules(void *vh, void *vctx, ks_err *err) {
  cu_handle *h = vh;
  return ks_sandbox_allow_driver(vctx, h->nv_fds, h->n_nv_fds,
                                 getenv("KSEARCH_CUDA_SANDBOX_ALLOW"), err);
}

const ks_backend_i ks_backend_cuda = {
    .name = "cuda",
    .description = "CUDA C kernels (extern \"C\" __global__, cubin for the "
                   "device's own architecture) on an NVIDIA GPU",
    .probe = ks_cuda_probe,
    .build = ks_cuda_build,
    .load = cuda_load,
    .run = cuda_run,
    .sync = cuda_sync,
    .unload = cuda_unload,
    .dev_alloc = cuda_dev_alloc,
    .dev_free = cuda_dev_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .dev_guard_check = cuda_dev_guard_check,
    .dev_check = cuda_dev_check,
    .device_time_ns = cuda_device_time,
    .sandbox_rules = cuda_sandbox_rules,
    .device_class = cuda_device_class,
    .probe_move = cuda_probe_move,
};
