/* backend_opencl.c — the OpenCL backend (DESIGN.md: Backend interface):
 * GPU-style kernels in OpenCL C, on PoCL here and on any OpenCL device.
 *
 * Parent side, build (build.c): the source is compiled in a child with the
 * workloads' launch lines into a cached program binary.
 *
 * The sandbox problem and its answer: PoCL compiles a work-group function
 * for each (kernel, local size, grid class) lazily, at the first enqueue,
 * and that compilation creates folders and files in its cache and runs
 * /usr/bin/ld (clone3 + execve), none of which the seccomp filter allows. So
 * the build child asks PoCL for every specialization the workloads will use
 * (POCL_BINARY_SPECIALIZE_WG = "<l0>-<l1>-<l2>-goffs0" in a first pass, the
 * same with "-smallgrid" in a second: both grid classes, so PoCL's
 * grid-width rule need not be predicted) and they travel inside the binary. The
 * runner, before its sandbox closes, points POCL_CACHE_DIR at its private
 * folder, unpacks the binary there (clCreateProgramWithBinary), starts PoCL's
 * worker threads (context creation) and checks that every needed work-group
 * function is present; afterwards the first enqueue only opens the .so
 * read-only and maps it (openat O_RDONLY, mmap, mprotect: on the allow-list).
 * Nothing untrusted runs before the sandbox closes; nothing is compiled after
 * it.
 *
 * Kernel arguments follow the C calling convention (DESIGN.md: Task):
 * inputs as `__global const T *`, outputs as `__global T *`, var axes as
 * `long`, scalars as `float`/`int`/`long`, then, when a launch line asks for
 * scratch=(bytes), one `__global` scratch buffer. float16 and bfloat16
 * tensors are `ushort` bit patterns. Every kernel of a sequence takes the
 * same arguments.
 *
 * The reference is C on every backend: a reference build (backend=c) is
 * handed to the c backend, and the runner runs reference jobs on c.
 *
 * Files: build.c (the parent side, ks_ocl_build); this file (the runner
 * side: loading, launching, device buffers) and the backend table.
 */
#include "backend/backend.h"
#include "backend/guard_scan.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/ocl.h"
#include "eval/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static ks_code ocl_probe(char *device, size_t n, ks_err *err) {
  ks_ocl_dev d;
  ks_code rc = ks_ocl_pick_info(&d, err); /* in ksearch: no driver here */
  if (rc)
    return rc;
  snprintf(device, n, "%s (%s, OpenCL device %d)", d.name, d.platform_name,
           d.index);
  return KS_OK;
}

/* ---- runner side */

typedef struct ocl_buf {
  cl_mem parent, sub;
  size_t bytes, guard, total;
  unsigned char guard_byte;
} ocl_buf;

typedef struct ocl_handle {
  const ks_task *task;
  ks_ocl_dev dev;
  cl_context ctx;
  cl_command_queue q;
  cl_program prog, progs[2]; /* prog = progs[0] */
  ks_launch_plan plan;
  cl_kernel kern[KS_LAUNCH_MAX];
  ks_param_value params[2 * KS_MAX_PARAMS];
  int n_params;
  bool scratch_wanted;
  /* geometry of the last workload seen, recomputed when the axes change */
  int64_t axes[KS_MAX_AXES];
  bool have_geom;
  ks_launch_geom geom[KS_LAUNCH_MAX];
  double scratch_bytes;
  ocl_buf *scratch;
  cl_event ev[KS_LAUNCH_MAX];
  int n_ev;
  double device_ns;
  char error[600];          /* sticky: the first launch failure */
  int nv_fds[64], n_nv_fds; /* a GPU driver's descriptors (sandbox_rules) */
} ocl_handle;

static void ocl_unload(void *vh);

/* Does <root>/.../<kernel>/<want>/ hold a .so? PoCL keeps one folder per
 * program and per kernel; the depth is small and fixed. */
static bool find_wg(const char *root, const char *kernel, const char *want,
                    int depth) {
  DIR *d = opendir(root);
  if (!d)
    return false;
  bool found = false;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.3000s/%.255s", root, e->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
      continue;
    if (!strcmp(e->d_name, kernel)) {
      char so[PATH_MAX];
      snprintf(so, sizeof so, "%.3300s/%.60s/%.200s.so", p, want, kernel);
      if (ks_file_exists(so))
        found = true;
    }
    if (!found && depth > 0)
      found = find_wg(p, kernel, want, depth - 1);
  }
  closedir(d);
  return found;
}

static ks_code load_fail(ocl_handle *h, ks_code code) {
  ocl_unload(h);
  return code;
}

static ks_code ocl_load2(const char *artifact, const ks_task *task, void **out,
                         ks_err *err);

/* The OpenCL runtime may install signal handlers: PoCL's LLVM does, for
 * SIGSEGV, SIGXCPU, SIGSYS and more, and on a crash they restore the old
 * handlers (rt_sigaction on SIGSYS: forbidden) before re-raising, so a
 * kernel's segfault would be reported as a forbidden system call and the CPU
 * limit would not kill. The handlers of signals 1..31 are put back as they
 * were before the runtime started: a crashing kernel dies of its signal. */
static ks_code ocl_load(const char *artifact, const ks_task *task, void **out,
                        ks_err *err) {
  struct sigaction before[32];
  for (int sig = 1; sig < 32; sig++)
    if (sigaction(sig, NULL, &before[sig]) != 0)
      before[sig].sa_handler = SIG_ERR;
  ks_code rc = ocl_load2(artifact, task, out, err);
  for (int sig = 1; sig < 32; sig++) {
    struct sigaction now;
    if (before[sig].sa_handler == SIG_ERR || sigaction(sig, NULL, &now) != 0)
      continue;
    if (now.sa_handler != before[sig].sa_handler ||
        (now.sa_flags & SA_SIGINFO) != (before[sig].sa_flags & SA_SIGINFO))
      sigaction(sig, &before[sig], NULL);
  }
  return rc;
}

static ks_code ocl_load2(const char *artifact, const ks_task *task, void **out,
                         ks_err *err) {
  *out = NULL;
  /* PoCL reads these once, at its first call: its cache goes to the runner's
   * private folder (removed after the run), its thread count follows
   * --threads (the parent sets OMP_NUM_THREADS for the runner). */
  char pcache[PATH_MAX];
  const char *tmp = getenv("TMPDIR");
  snprintf(pcache, sizeof pcache, "%.4000s/pocl-cache",
           tmp && *tmp ? tmp : ".");
  setenv("POCL_CACHE_DIR", pcache, 1);
  const char *omp = getenv("OMP_NUM_THREADS");
  if (omp && *omp && !getenv("POCL_MAX_PTHREAD_COUNT"))
    setenv("POCL_MAX_PTHREAD_COUNT", omp, 1);

  json_error_t je;
  json_t *j = json_load_file(artifact, 0, &je);
  if (!j)
    return ks_err_set(err, KS_ERR_CANDIDATE, "%s: %s", artifact, je.text);
  ocl_handle *h = ks_xcalloc(1, sizeof *h);
  h->task = task;
  const char *fmt = json_string_value(json_object_get(j, "format"));
  json_t *bins = json_object_get(j, "binaries");
  const char *ident = json_string_value(json_object_get(j, "identity"));
  const char *entry = json_string_value(json_object_get(j, "entry"));
  json_t *lines = json_object_get(j, "launch");
  json_t *params = json_object_get(j, "params");
  ks_code rc = KS_OK;
  if (!fmt || strcmp(fmt, KS_OCL_FORMAT) || !json_is_array(bins) ||
      json_array_size(bins) != 2 || !ident || !entry || !json_is_array(lines) ||
      !json_is_object(params))
    rc = ks_err_set(err, KS_ERR_CANDIDATE,
                    "%s: not an OpenCL artifact of this ksearch (%s)", artifact,
                    fmt ? fmt : "no format");
  /* launch lines and parameters, parsed as the parent did */
  for (size_t i = 0; !rc && i < json_array_size(lines); i++) {
    if (h->plan.n >= KS_LAUNCH_MAX)
      break;
    rc = ks_launch_parse_line(json_string_value(json_array_get(lines, i)),
                              entry, (int)i + 1, &h->plan.k[h->plan.n], err);
    if (!rc) {
      h->scratch_wanted |= h->plan.k[h->plan.n].scratch != NULL;
      h->plan.n++;
    }
  }
  const char *pk;
  json_t *pv;
  json_object_foreach(params, pk, pv) {
    if (h->n_params < 2 * KS_MAX_PARAMS && json_is_string(pv)) {
      ks_strlcpy(h->params[h->n_params].name, pk, 64);
      ks_strlcpy(h->params[h->n_params].value, json_string_value(pv), 64);
      h->n_params++;
    }
  }
  char binpath[2][PATH_MAX];
  for (int i = 0; !rc && i < 2; i++) {
    const char *name = json_string_value(json_array_get(bins, (size_t)i));
    ks_strlcpy(binpath[i], artifact, sizeof binpath[i]);
    char *slash = strrchr(binpath[i], '/');
    size_t at = slash ? (size_t)(slash + 1 - binpath[i]) : 0;
    snprintf(binpath[i] + at, sizeof binpath[i] - at, "%s", name ? name : "?");
  }
  char expected_identity[768];
  ks_strlcpy(expected_identity, ident ? ident : "", sizeof expected_identity);
  json_decref(j);
  if (rc)
    return load_fail(h, rc);

  if ((rc = ks_ocl_pick(&h->dev, err)))
    return load_fail(h, rc);
  if (strcmp(h->dev.identity, expected_identity))
    return load_fail(h,
                     ks_err_set(err, KS_ERR_ENV,
                                "%s was built for OpenCL device \"%s\" but "
                                "the device is now \"%s\"",
                                artifact, expected_identity, h->dev.identity));
  cl_int e;
  h->ctx = clCreateContext(NULL, 1, &h->dev.device, NULL, NULL, &e);
  if (h->ctx)
    h->q = clCreateCommandQueue(h->ctx, h->dev.device,
                                CL_QUEUE_PROFILING_ENABLE, &e);
  if (!h->q)
    return load_fail(h, ks_err_set(err, KS_ERR_ENV,
                                   "OpenCL context or queue on %s: %s",
                                   h->dev.name, ks_ocl_errstr(e)));
  /* both passes' binaries: on PoCL each unpacks its work-group functions
   * into the same cache folder; kernels come from the first */
  for (int i = 0; i < 2; i++) {
    char *binary = NULL;
    size_t bin_len = 0;
    if (ks_read_file(binpath[i], &binary, &bin_len, err))
      return load_fail(h, KS_ERR_CANDIDATE);
    const unsigned char *bp = (const unsigned char *)binary;
    cl_int bst = CL_SUCCESS;
    h->progs[i] = clCreateProgramWithBinary(h->ctx, 1, &h->dev.device, &bin_len,
                                            &bp, &bst, &e);
    free(binary);
    if (h->progs[i])
      e = clBuildProgram(h->progs[i], 1, &h->dev.device, "", NULL, NULL);
    if (!h->progs[i] || e != CL_SUCCESS)
      return load_fail(h, ks_err_set(err, KS_ERR_CANDIDATE,
                                     "%s: the program binary does not load: %s",
                                     binpath[i], ks_ocl_errstr(e)));
  }
  h->prog = h->progs[0];
  for (int k = 0; k < h->plan.n; k++) {
    h->kern[k] = clCreateKernel(h->prog, h->plan.k[k].kernel, &e);
    if (!h->kern[k])
      return load_fail(h, ks_err_set(err, KS_ERR_CANDIDATE, "kernel %s: %s",
                                     h->plan.k[k].kernel, ks_ocl_errstr(e)));
  }
  /* Every work-group function PoCL will want must be in the binary, or PoCL
   * would compile it after the sandbox closes (and be killed for it). */
  for (int wi = 0; h->dev.is_pocl && wi < task->n_workloads; wi++) {
    ks_launch_geom g[KS_LAUNCH_MAX];
    double sb;
    if ((rc = ks_launch_eval(&h->plan, task, &task->workloads[wi], h->params,
                             h->n_params, g, &sb, err)))
      return load_fail(h, KS_ERR_CANDIDATE);
    for (int k = 0; k < h->plan.n; k++) {
      char key[32], want[64];
      if (g[k].skip)
        continue;
      ks_launch_local_key(&g[k], key, sizeof key);
      for (int v = 0; v < 2; v++) {
        snprintf(want, sizeof want, "%s-goffs0%s", key, v ? "-smallgrid" : "");
        if (!find_wg(pcache, h->plan.k[k].kernel, want, 3))
          return load_fail(
              h,
              ks_err_set(err, KS_ERR_ENV,
                         "%s: PoCL's work-group function %s/%s is not in the "
                         "program binary, so PoCL would compile it inside "
                         "the sandbox; rebuild (remove %s's folder)",
                         artifact, h->plan.k[k].kernel, want, artifact));
      }
    }
  }
  if (!h->dev.is_pocl) /* a GPU driver: its descriptors, for the filter */
    h->n_nv_fds = ks_sandbox_device_fds("/dev/nvidia", h->nv_fds, 64);
  *out = h;
  return KS_OK;
}

static ks_code set_geometry(ocl_handle *h, const int64_t *axes, ks_err *err) {
  if (h->have_geom &&
      !memcmp(h->axes, axes, sizeof(int64_t) * (size_t)h->task->n_axes))
    return KS_OK;
  ks_workload w;
  memset(&w, 0, sizeof w);
  memcpy(w.axis, axes, sizeof(int64_t) * (size_t)h->task->n_axes);
  ks_code rc = ks_launch_eval(&h->plan, h->task, &w, h->params, h->n_params,
                              h->geom, &h->scratch_bytes, err);
  if (rc)
    return rc;
  memcpy(h->axes, axes, sizeof(int64_t) * (size_t)h->task->n_axes);
  h->have_geom = true;
  return KS_OK;
}

static void *ocl_dev_alloc(void *vh, size_t bytes, size_t guard,
                           unsigned char guard_byte);
static void ocl_dev_free(void *vh, void *vb);
static long ocl_dev_guard_check(void *vh, void *vb);

static void ocl_run(void *vh, void *const *bufs, const int64_t *axes,
                    const double *scalars) {
  ocl_handle *h = vh;
  if (h->error[0])
    return;
  ks_err err;
  if (set_geometry(h, axes, &err)) {
    snprintf(h->error, sizeof h->error, "launch geometry: %.500s", err.msg);
    return;
  }
  size_t sb = (size_t)h->scratch_bytes;
  if (h->scratch_wanted && (!h->scratch || h->scratch->bytes < sb)) {
    if (h->scratch)
      ocl_dev_free(h, h->scratch);
    /* 0xFF bytes are NaN: a kernel must write scratch before reading it */
    h->scratch = ocl_dev_alloc(h, sb ? sb : 1, 4096, 0xFF);
    if (!h->scratch) {
      snprintf(h->error, sizeof h->error,
               "cannot allocate %zu bytes of scratch on the device", sb);
      return;
    }
  }
  const ks_task *t = h->task;
  h->n_ev = 0;
  for (int k = 0; k < h->plan.n; k++) {
    if (h->geom[k].skip) /* when=(0) for this workload */
      continue;
    cl_kernel kern = h->kern[k];
    cl_uint a = 0;
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < t->n_inputs + t->n_outputs && e == CL_SUCCESS; i++)
      e = clSetKernelArg(kern, a++, sizeof(cl_mem), &((ocl_buf *)bufs[i])->sub);
    for (int i = 0; i < t->n_axes && e == CL_SUCCESS; i++)
      if (!t->axes[i].is_const) {
        cl_long v = axes[i];
        e = clSetKernelArg(kern, a++, sizeof v, &v);
      }
    for (int i = 0; i < t->n_scalars && e == CL_SUCCESS; i++) {
      if (t->scalars[i].dtype == KS_F32) {
        cl_float v = (cl_float)scalars[i];
        e = clSetKernelArg(kern, a++, sizeof v, &v);
      } else if (t->scalars[i].dtype == KS_I32) {
        cl_int v = (cl_int)scalars[i];
        e = clSetKernelArg(kern, a++, sizeof v, &v);
      } else {
        cl_long v = (cl_long)scalars[i];
        e = clSetKernelArg(kern, a++, sizeof v, &v);
      }
    }
    if (e == CL_SUCCESS && h->scratch_wanted)
      e = clSetKernelArg(kern, a++, sizeof(cl_mem), &h->scratch->sub);
    if (e != CL_SUCCESS) {
      snprintf(h->error, sizeof h->error,
               "kernel %s: argument %u: clSetKernelArg: %s (check the "
               "argument types against the OpenCL calling convention)",
               h->plan.k[k].kernel, a ? a - 1 : 0, ks_ocl_errstr(e));
      return;
    }
    const ks_launch_geom *g = &h->geom[k];
    e = clEnqueueNDRangeKernel(h->q, kern, (cl_uint)g->dims, NULL, g->global,
                               g->local, 0, NULL, &h->ev[h->n_ev]);
    if (e != CL_SUCCESS) {
      snprintf(h->error, sizeof h->error,
               "kernel %s: clEnqueueNDRangeKernel(global=%zu,%zu,%zu "
               "local=%zu,%zu,%zu): %s",
               h->plan.k[k].kernel, g->global[0], g->global[1], g->global[2],
               g->local[0], g->local[1], g->local[2], ks_ocl_errstr(e));
      return;
    }
    h->n_ev++;
  }
  clFlush(h->q);
}

static void ocl_sync(void *vh) {
  ocl_handle *h = vh;
  clFinish(h->q);
  h->device_ns = 0;
  if (h->n_ev > 0) {
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(h->ev[0], CL_PROFILING_COMMAND_START,
                                sizeof start, &start, NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(h->ev[h->n_ev - 1], CL_PROFILING_COMMAND_END,
                                sizeof end, &end, NULL) == CL_SUCCESS &&
        end >= start)
      h->device_ns = (double)(end - start);
  }
  for (int i = 0; i < h->n_ev; i++)
    clReleaseEvent(h->ev[i]);
  h->n_ev = 0;
}

static double ocl_device_time(void *vh) {
  return ((ocl_handle *)vh)->device_ns;
}

static void ocl_unload(void *vh) {
  ocl_handle *h = vh;
  if (!h)
    return;
  if (h->scratch)
    ocl_dev_free(h, h->scratch);
  for (int k = 0; k < KS_LAUNCH_MAX; k++)
    if (h->kern[k])
      clReleaseKernel(h->kern[k]);
  for (int i = 0; i < 2; i++)
    if (h->progs[i])
      clReleaseProgram(h->progs[i]);
  if (h->q)
    clReleaseCommandQueue(h->q);
  if (h->ctx)
    clReleaseContext(h->ctx);
  ks_launch_free(&h->plan);
  free(h);
}

/* ---- device buffers with guard regions: one allocation of guard + data +
 * guard, the kernel sees a sub-buffer of the data; writes past either end
 * land in the guard bytes, which are read back and checked. */

static void *ocl_dev_alloc(void *vh, size_t bytes, size_t guard,
                           unsigned char guard_byte) {
  ocl_handle *h = vh;
  size_t page = 4096, body = (bytes + page - 1) / page * page;
  ocl_buf *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->bytes = bytes;
  b->guard = guard;
  b->total = body + 2 * guard;
  b->guard_byte = guard_byte;
  cl_int e;
  b->parent = clCreateBuffer(h->ctx, CL_MEM_READ_WRITE, b->total, NULL, &e);
  if (b->parent)
    e = clEnqueueFillBuffer(h->q, b->parent, &guard_byte, 1, 0, b->total, 0,
                            NULL, NULL);
  if (b->parent && e == CL_SUCCESS)
    e = clFinish(h->q);
  cl_buffer_region reg = {guard, bytes ? bytes : 1};
  if (b->parent && e == CL_SUCCESS)
    b->sub = clCreateSubBuffer(b->parent, CL_MEM_READ_WRITE,
                               CL_BUFFER_CREATE_TYPE_REGION, &reg, &e);
  if (!b->sub) {
    if (b->parent)
      clReleaseMemObject(b->parent);
    free(b);
    return NULL;
  }
  return b;
}

static void ocl_dev_free(void *vh, void *vb) {
  (void)vh;
  ocl_buf *b = vb;
  if (!b)
    return;
  clReleaseMemObject(b->sub);
  clReleaseMemObject(b->parent);
  free(b);
}

static bool ocl_upload(void *vh, void *vb, const void *src, size_t bytes) {
  ocl_handle *h = vh;
  ocl_buf *b = vb;
  if (bytes > b->bytes)
    return false;
  return bytes == 0 || clEnqueueWriteBuffer(h->q, b->sub, CL_TRUE, 0, bytes,
                                            src, 0, NULL, NULL) == CL_SUCCESS;
}

static bool ocl_download(void *vh, void *vb, void *dst, size_t bytes) {
  ocl_handle *h = vh;
  ocl_buf *b = vb;
  if (bytes > b->bytes)
    return false;
  return bytes == 0 || clEnqueueReadBuffer(h->q, b->sub, CL_TRUE, 0, bytes, dst,
                                           0, NULL, NULL) == CL_SUCCESS;
}

static long ocl_dev_guard_check(void *vh, void *vb) {
  ocl_handle *h = vh;
  ocl_buf *b = vb;
  size_t tail = b->total - b->guard - b->bytes;
  size_t n = b->guard > tail ? b->guard : tail;
  unsigned char *tmp = malloc(n ? n : 1);
  if (!tmp)
    return KS_GUARD_UNREADABLE;
  long off = KS_GUARD_UNREADABLE;
  if (clEnqueueReadBuffer(h->q, b->parent, CL_TRUE, 0, b->guard, tmp, 0, NULL,
                          NULL) == CL_SUCCESS) {
    off = ks_guard_scan_head(tmp, b->guard, b->guard_byte);
    if (!off)
      off = clEnqueueReadBuffer(h->q, b->parent, CL_TRUE, b->guard + b->bytes,
                                tail, tmp, 0, NULL, NULL) == CL_SUCCESS
                ? ks_guard_scan_tail(tmp, tail, b->guard_byte)
                : KS_GUARD_UNREADABLE;
  }
  free(tmp);
  return off;
}

static bool ocl_dev_check(void *vh, char *reason, size_t n) {
  ocl_handle *h = vh;
  if (h->error[0]) {
    snprintf(reason, n, "OpenCL: %s", h->error);
    return false;
  }
  if (h->scratch) {
    long off = ocl_dev_guard_check(h, h->scratch);
    if (off) {
      ks_guard_reason(reason, n, off, "the scratch buffer");
      return false;
    }
  }
  return true;
}

/* CL_DEVICE_TYPE of the picked device: a GPU runs the GPU-sized
 * workloads; PoCL's CPU device does not. */
static ks_device_class ocl_device_class(void) {
  ks_ocl_dev d;
  ks_err err;
  if (ks_ocl_pick_info(&d, &err) != KS_OK)
    return KS_DEV_CPU;
  return d.is_gpu ? KS_DEV_GPU : KS_DEV_CPU;
}

/* PoCL runs in this process's own threads: the common filter. A GPU
 * driver (NVIDIA's) waits in the poll family and talks to its device files,
 * as CUDA's does (eval/sandbox.h). */
static ks_code ocl_sandbox_rules(void *vh, void *vctx, ks_err *err) {
  ocl_handle *h = vh;
  if (h->dev.is_pocl)
    return KS_OK;
  return ks_sandbox_allow_driver(vctx, h->nv_fds, h->n_nv_fds,
                                 getenv("KSEARCH_CUDA_SANDBOX_ALLOW"), err);
}

const ks_backend_i ks_backend_opencl = {
    .name = "opencl",
    .description = "OpenCL C kernels (work-groups, local memory); PoCL on "
                   "the CPU or any OpenCL GPU",
    .probe = ocl_probe,
    .build = ks_ocl_build,
    .load = ocl_load,
    .run = ocl_run,
    .sync = ocl_sync,
    .unload = ocl_unload,
    .dev_alloc = ocl_dev_alloc,
    .dev_free = ocl_dev_free,
    .upload = ocl_upload,
    .download = ocl_download,
    .dev_guard_check = ocl_dev_guard_check,
    .dev_check = ocl_dev_check,
    .device_time_ns = ocl_device_time,
    .device_class = ocl_device_class,
    .sandbox_rules = ocl_sandbox_rules,
};
