/* runner.c — ksearch-runner: the sandboxed child that loads one artifact and
 * runs it on every workload (DESIGN.md: Evaluation).
 *
 *   ksearch-runner JOB.json        results as JSON lines on fd 3 (protocol.h)
 *
 * Order matters: everything that needs the file system or new threads
 * happens first (task, artifact, OpenMP pool, reference files), then the
 * sandbox closes (rlimits + seccomp), then untrusted code runs. Correctness
 * per seed: fresh inputs, NaN-filled outputs, guard bytes around every
 * buffer, inputs compared with a copy afterwards, outputs compared with the
 * cached reference. Timing runs on a seed never used for correctness, and its
 * output is checked again after the timed repetitions.
 *
 * Device backends (backend.h: dev_alloc set, e.g. OpenCL) get one device
 * buffer per tensor, with its own guard bytes; before each checked call the
 * inputs and the NaN-filled outputs are uploaded, after it outputs and inputs
 * are downloaded into the host buffers and the device guards are checked, so
 * the host checks below apply unchanged. The timed loop does no transfers.
 * The reference is C on every backend, so reference jobs always run on c.
 *
 *   ksearch-runner --opencl-build REQUEST.json | --opencl-roofline THREADS
 * are the OpenCL backend's compiler and roofline children (opencl/tool.c);
 *   ksearch-runner --cuda-roofline SUPPORT.cubin
 * is the CUDA backend's roofline child (cuda/roofline_cuda.c).
 */
#include "backend/backend.h"
#include "backend/cuda/cu.h"
#include "backend/opencl/ocl.h"
#include "eval/correctness.h"
#include "eval/protocol.h"
#include "eval/sandbox.h"
#include "eval/timing.h"
#include "task/inputs.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void ks_runner_openmp_start(int threads);
void ks_runner_flush(volatile unsigned char *buf, size_t n, int pass);
int ks_runner_can_evict(void);
void ks_runner_evict(unsigned char *const *p, const size_t *bytes, int n);

#define GUARD 4096
#define GUARD_BYTE 0xCB

typedef struct gbuf {
  unsigned char *base, *data;
  size_t bytes, total;
} gbuf;

static FILE *g_out; /* the result pipe (fd 3) */

static void emit(json_t *ev) {
  char *s = json_dumps(ev, JSON_COMPACT);
  fprintf(g_out, "%s\n", s);
  fflush(g_out);
  free(s);
  json_decref(ev);
}

static int fail_setup(const ks_err *err) {
  emit(json_pack("{s:s, s:i, s:s}", "event", "error", "code", err->code,
                 "message", err->msg));
  return 2;
}

static bool gbuf_alloc(gbuf *g, size_t bytes) {
  size_t page = 4096, body = (bytes + page - 1) / page * page;
  g->total = body + 2 * GUARD;
  g->base = mmap(NULL, g->total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->base == MAP_FAILED) {
    g->base = NULL;
    return false;
  }
  g->data = g->base + GUARD;
  g->bytes = bytes;
  memset(g->base, GUARD_BYTE, GUARD);
  memset(g->data + bytes, GUARD_BYTE, g->total - GUARD - bytes);
  return true;
}

static void gbuf_free(gbuf *g) {
  if (g->base)
    munmap(g->base, g->total);
  memset(g, 0, sizeof *g);
}

/* Returns 0 if intact, else the signed offset of the first changed byte
 * relative to the start (<0) or the end (>0) of the data. */
static long gbuf_guard_check(const gbuf *g) {
  for (long i = GUARD - 1; i >= 0; i--)
    if (g->base[i] != GUARD_BYTE)
      return i - GUARD;
  size_t tail = g->total - GUARD - g->bytes;
  for (size_t i = 0; i < tail; i++)
    if (g->data[g->bytes + i] != GUARD_BYTE)
      return (long)i + 1;
  return 0;
}

static size_t llc_bytes(void) {
  size_t best = 0;
  for (int i = 0; i < 8; i++) {
    char p[128], *txt;
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (ks_read_file(p, &txt, NULL, NULL))
      continue;
    size_t v = strtoull(txt, NULL, 10);
    if (strchr(txt, 'K'))
      v <<= 10;
    else if (strchr(txt, 'M'))
      v <<= 20;
    if (v > best)
      best = v;
    free(txt);
  }
  return best ? best : (32u << 20);
}

typedef struct wl_state {
  const ks_task *task;
  const ks_workload *w;
  int64_t numel_in[KS_MAX_TENSORS], numel_out[KS_MAX_TENSORS];
  gbuf in[KS_MAX_TENSORS], out[KS_MAX_TENSORS];
  void *copy[KS_MAX_TENSORS], *ref[KS_MAX_TENSORS];
  void *bufs[2 * KS_MAX_TENSORS]; /* what run() gets: host or device */
  double scalars[KS_MAX_SCALARS];
  const ks_backend_i *be; /* device backends: dev[] are their buffers */
  void *handle;
  void *dev[2 * KS_MAX_TENSORS];
} wl_state;

static void wl_free(wl_state *s) {
  for (int i = 0; i < 2 * KS_MAX_TENSORS; i++)
    if (s->dev[i])
      s->be->dev_free(s->handle, s->dev[i]);
  for (int i = 0; i < s->task->n_inputs; i++) {
    gbuf_free(&s->in[i]);
    free(s->copy[i]);
  }
  for (int i = 0; i < s->task->n_outputs; i++) {
    gbuf_free(&s->out[i]);
    free(s->ref[i]);
  }
}

static bool wl_alloc(wl_state *s, bool want_ref) {
  const ks_task *t = s->task;
  for (int i = 0; i < t->n_inputs; i++) {
    s->numel_in[i] = ks_tensor_numel(t, &t->inputs[i], s->w);
    size_t b = (size_t)s->numel_in[i] * ks_dtype_size(t->inputs[i].dtype);
    if (!gbuf_alloc(&s->in[i], b) || !(s->copy[i] = malloc(b ? b : 1)))
      return false;
    s->bufs[i] = s->in[i].data;
  }
  for (int i = 0; i < t->n_outputs; i++) {
    s->numel_out[i] = ks_tensor_numel(t, &t->outputs[i], s->w);
    size_t b = (size_t)s->numel_out[i] * ks_dtype_size(t->outputs[i].dtype);
    if (!gbuf_alloc(&s->out[i], b))
      return false;
    if (want_ref && !(s->ref[i] = malloc(b ? b : 1)))
      return false;
    s->bufs[t->n_inputs + i] = s->out[i].data;
  }
  for (int i = 0; i < t->n_scalars; i++)
    s->scalars[i] = t->scalars[i].value;
  if (s->be) { /* device buffers replace the host pointers in bufs */
    for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
      const gbuf *g = i < t->n_inputs ? &s->in[i] : &s->out[i - t->n_inputs];
      s->dev[i] = s->be->dev_alloc(s->handle, g->bytes, GUARD, GUARD_BYTE);
      if (!s->dev[i])
        return false;
      s->bufs[i] = s->dev[i];
    }
  }
  return true;
}

/* Device backends: inputs and the NaN-filled outputs go to the device. */
static bool dev_upload(wl_state *s, char *reason, size_t n) {
  const ks_task *t = s->task;
  for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
    const gbuf *g = i < t->n_inputs ? &s->in[i] : &s->out[i - t->n_inputs];
    if (!s->be->upload(s->handle, s->dev[i], g->data, g->bytes)) {
      snprintf(reason, n, "could not upload %s %s to the device",
               i < t->n_inputs ? "input" : "output",
               i < t->n_inputs ? t->inputs[i].name
                               : t->outputs[i - t->n_inputs].name);
      return false;
    }
  }
  return true;
}

/* Device backends, after a call: the backend's own verdict (launch errors,
 * its scratch guards), the device guards, then outputs and inputs back into
 * the host buffers for wl_check_integrity and wl_compare. */
static bool dev_collect(wl_state *s, char *reason, size_t n) {
  const ks_task *t = s->task;
  if (s->be->dev_check && !s->be->dev_check(s->handle, reason, n))
    return false;
  for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
    bool is_in = i < t->n_inputs;
    const char *name =
        is_in ? t->inputs[i].name : t->outputs[i - t->n_inputs].name;
    long off = s->be->dev_guard_check(s->handle, s->dev[i]);
    if (off) {
      snprintf(reason, n,
               "wrote %s %s %s (device guard bytes changed at offset %+ld)",
               off > 0 ? "past the end of" : "before the start of",
               is_in ? "input" : "output", name, off);
      return false;
    }
    gbuf *g = is_in ? &s->in[i] : &s->out[i - t->n_inputs];
    if (!s->be->download(s->handle, s->dev[i], g->data, g->bytes)) {
      snprintf(reason, n, "could not download %s %s from the device",
               is_in ? "input" : "output", name);
      return false;
    }
  }
  return true;
}

static void wl_prepare(wl_state *s, uint64_t seed) {
  const ks_task *t = s->task;
  for (int i = 0; i < t->n_inputs; i++) {
    ks_inputs_fill(t, &t->inputs[i], s->w, seed, s->in[i].data);
    memcpy(s->copy[i], s->in[i].data, s->in[i].bytes);
  }
  for (int i = 0; i < t->n_outputs; i++)
    ks_output_poison(&t->outputs[i], s->out[i].data, s->numel_out[i]);
}

/* Guards and inputs after calls; returns false with a reason. */
static bool wl_check_integrity(wl_state *s, char *reason, size_t n) {
  const ks_task *t = s->task;
  for (int i = 0; i < t->n_inputs; i++) {
    long off = gbuf_guard_check(&s->in[i]);
    if (off) {
      snprintf(reason, n,
               "wrote %s input %s (guard bytes changed at offset %+ld)",
               off > 0 ? "past the end of" : "before the start of",
               t->inputs[i].name, off);
      return false;
    }
    if (memcmp(s->copy[i], s->in[i].data, s->in[i].bytes)) {
      snprintf(reason, n, "modified input %s (inputs are read-only)",
               t->inputs[i].name);
      return false;
    }
  }
  for (int i = 0; i < t->n_outputs; i++) {
    long off = gbuf_guard_check(&s->out[i]);
    if (off) {
      snprintf(reason, n,
               "wrote %s output %s (guard bytes changed at offset %+ld)",
               off > 0 ? "past the end of" : "before the start of",
               t->outputs[i].name, off);
      return false;
    }
  }
  return true;
}

static bool read_all(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)got);
    if (r <= 0)
      return false;
    got += (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char *)buf + put, n - put);
    if (r <= 0)
      return false;
    put += (size_t)r;
  }
  return true;
}

/* Compares every output with the reference for one seed. */
static bool wl_compare(wl_state *s, int *const *fds, int seed_slot,
                       double *max_abs, double *max_rel, char *reason,
                       size_t n) {
  const ks_task *t = s->task;
  for (int i = 0; i < t->n_outputs; i++) {
    if (!read_all(fds[seed_slot][i], s->ref[i], s->out[i].bytes)) {
      snprintf(reason, n, "reference output %s unreadable", t->outputs[i].name);
      return false;
    }
    ks_compare c;
    ks_compare_outputs(t->outputs[i].name, t->outputs[i].dtype, s->out[i].data,
                       s->ref[i], s->numel_out[i],
                       ks_task_tolerance(t, t->outputs[i].dtype), &c);
    if (c.max_abs_err > *max_abs)
      *max_abs = c.max_abs_err;
    if (c.max_rel_err > *max_rel)
      *max_rel = c.max_rel_err;
    if (!c.ok) {
      ks_strlcpy(reason, c.reason, n);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strncmp(argv[1], "--opencl-", 9))
    return ks_opencl_tool_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "--cuda-roofline"))
    return ks_cu_roofline_child(argc, argv);
  g_out = fdopen(KS_RESULT_FD, "w");
  if (!g_out) {
    fprintf(stderr, "ksearch-runner: fd 3 must be the result pipe\n");
    return 2;
  }
  ks_err err = {0};
  if (argc != 2) {
    ks_err_set(&err, KS_ERR_INPUT, "usage: ksearch-runner JOB.json");
    return fail_setup(&err);
  }
  char *text;
  if (ks_read_file(argv[1], &text, NULL, &err))
    return fail_setup(&err);
  json_error_t je;
  json_t *jj = json_loads(text, 0, &je);
  free(text);
  ks_job job;
  if (!jj) {
    ks_err_set(&err, KS_ERR_INTERNAL, "job: %s", je.text);
    return fail_setup(&err);
  }
  if (ks_job_from_json(jj, &job, &err))
    return fail_setup(&err);
  json_decref(jj);

  ks_task task;
  if (ks_task_load(job.task_path, &task, &err))
    return fail_setup(&err);
  /* the reference is C on every backend (DESIGN.md: Vocabulary) */
  const ks_backend_i *be = ks_backend_get(job.reference ? "c" : job.backend);
  if (!be) {
    ks_err_set(&err, KS_ERR_INPUT, "unknown backend %s", job.backend);
    return fail_setup(&err);
  }
  void *handle = NULL;
  if (be->load(job.artifact, &task, &handle, &err))
    return fail_setup(&err);
  ks_runner_openmp_start(job.threads > 0 ? job.threads : ks_nproc());

  /* reference files: opened now, while opening is still allowed */
  int n_slots = job.n_seeds + 1; /* correctness seeds, then the timing seed */
  int **fds[KS_MAX_WORKLOADS];
  bool need[KS_MAX_WORKLOADS][KS_MAX_SEEDS + 1];
  for (int wi = 0; wi < job.n_workloads; wi++) {
    const ks_workload *w = &task.workloads[job.workloads[wi]];
    fds[wi] = ks_xcalloc((size_t)n_slots, sizeof(int *));
    for (int s = 0; s < n_slots; s++) {
      uint64_t seed = s < job.n_seeds ? job.seeds[s] : job.timing_seed;
      fds[wi][s] = ks_xcalloc((size_t)task.n_outputs, sizeof(int));
      need[wi][s] = false;
      for (int o = 0; o < task.n_outputs; o++) {
        char path[PATH_MAX];
        ks_ref_file(&job, &task, w, seed, task.outputs[o].name, path,
                    sizeof path);
        if (job.reference) {
          if (ks_file_exists(path)) {
            fds[wi][s][o] = -1;
            continue;
          }
          char tmp[PATH_MAX + 32];
          snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
          fds[wi][s][o] = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
          need[wi][s] = true;
        } else {
          fds[wi][s][o] = open(path, O_RDONLY);
        }
        if (fds[wi][s][o] < 0) {
          ks_err_set(&err, KS_ERR_IO, "%s: %s", path, strerror(errno));
          return fail_setup(&err);
        }
      }
    }
  }
  /* device buffers are a second copy of every tensor, plus the device
   * runtime's own arenas and worker stacks */
  bool device = be->dev_alloc != NULL;
  /* host backends on CPUs with clflush evict the task's buffers exactly;
   * the rest stream a flush buffer of twice the last-level cache, capped:
   * some virtual machines report a last-level cache of hundreds of MiB
   * that is not really there */
  bool exact_evict = job.topt.flush && !device && ks_runner_can_evict();
  size_t flush_n = job.topt.flush && !exact_evict ? 2 * llc_bytes() : 0;
  if (flush_n > (128u << 20))
    flush_n = 128u << 20;
  unsigned char *flush_buf = flush_n ? malloc(flush_n) : NULL;
  if (flush_buf)
    memset(flush_buf, 1, flush_n);
  int64_t mem_limit = job.mem_limit_bytes;
  if (device && mem_limit > 0) {
    int64_t most = 0;
    for (int wi = 0; wi < job.n_workloads; wi++) {
      const ks_workload *w = &task.workloads[job.workloads[wi]];
      int64_t b = 0;
      for (int i = 0; i < task.n_inputs; i++)
        b += ks_tensor_numel(&task, &task.inputs[i], w) *
             (int64_t)ks_dtype_size(task.inputs[i].dtype);
      for (int i = 0; i < task.n_outputs; i++)
        b += ks_tensor_numel(&task, &task.outputs[i], w) *
             (int64_t)ks_dtype_size(task.outputs[i].dtype);
      most = b > most ? b : most;
    }
    mem_limit += most + (1LL << 30);
    /* a GPU driver reserves tens of GiB of address space for its own
     * mappings before the limit is set; the limit counts from there (no
     * host code of a GPU candidate runs: this bounds the runner itself) */
    if (ks_backend_device_class(be) == KS_DEV_GPU) {
      long pages = 0;
      FILE *f = fopen("/proc/self/statm", "r");
      if (f && fscanf(f, "%ld", &pages) != 1)
        pages = 0;
      if (f)
        fclose(f);
      mem_limit += (int64_t)pages * 4096;
    }
  }
  if (ks_sandbox_limits(mem_limit, job.cpu_limit_s, &err) ||
      ks_sandbox_seccomp(KS_RESULT_FD, be, handle, &err))
    return fail_setup(&err);
  emit(json_pack("{s:s}", "event", "loaded"));

  for (int wi = 0; wi < job.n_workloads; wi++) {
    const ks_workload *w = &task.workloads[job.workloads[wi]];
    emit(json_pack("{s:s, s:i}", "event", "workload_start", "index",
                   job.workloads[wi]));
    wl_state st;
    memset(&st, 0, sizeof st);
    st.task = &task;
    st.w = w;
    st.be = device ? be : NULL;
    st.handle = handle;
    char reason[512] = "";
    bool ok = wl_alloc(&st, !job.reference);
    if (!ok)
      snprintf(reason, sizeof reason,
               "ksearch-runner could not allocate the workload's buffers "
               "under the memory limit");
    double max_abs = 0, max_rel = 0;
    for (int s = 0; ok && s < n_slots; s++) {
      bool is_timing_seed = s == job.n_seeds;
      if (job.reference ? !need[wi][s] : is_timing_seed)
        continue;
      uint64_t seed = is_timing_seed ? job.timing_seed : job.seeds[s];
      wl_prepare(&st, seed);
      if (device)
        ok = dev_upload(&st, reason, sizeof reason);
      if (ok) {
        be->run(handle, st.bufs, w->axis, st.scalars);
        be->sync(handle);
      }
      if (ok && device)
        ok = dev_collect(&st, reason, sizeof reason);
      if (ok)
        ok = wl_check_integrity(&st, reason, sizeof reason);
      if (ok && job.reference) {
        for (int o = 0; ok && o < task.n_outputs; o++)
          ok = write_all(fds[wi][s][o], st.out[o].data, st.out[o].bytes);
        if (!ok)
          snprintf(reason, sizeof reason, "cannot write reference output");
      } else if (ok) {
        ok = wl_compare(&st, fds[wi], s, &max_abs, &max_rel, reason,
                        sizeof reason);
      }
      if (!ok && s > 0 && !job.reference) {
        char more[512];
        snprintf(more, sizeof more,
                 "%.440s (seed %d of %d; the earlier seeds "
                 "passed)",
                 reason, s + 1, job.n_seeds);
        ks_strlcpy(reason, more, sizeof reason);
      }
    }
    ks_time_stats ts = {0, 0, 0, 0}, dts = {0, 0, 0, 0};
    if (ok && job.timing) {
      wl_prepare(&st, job.timing_seed);
      if (device)
        ok = dev_upload(&st, reason, sizeof reason);
      for (int i = 0; ok && i < job.topt.warmup; i++) {
        be->run(handle, st.bufs, w->axis, st.scalars);
        be->sync(handle);
      }
      unsigned char *evict_p[2 * KS_MAX_TENSORS];
      size_t evict_b[2 * KS_MAX_TENSORS];
      int evict_n = 0;
      for (int i = 0; exact_evict && i < task.n_inputs + task.n_outputs; i++) {
        const gbuf *g =
            i < task.n_inputs ? &st.in[i] : &st.out[i - task.n_inputs];
        evict_p[evict_n] = g->base;
        evict_b[evict_n++] = g->total;
      }
      int cap = job.topt.max_reps > 0 ? job.topt.max_reps : 1000;
      double *samples = ks_xmalloc(sizeof(double) * (size_t)cap);
      double *dsamples = ks_xmalloc(sizeof(double) * (size_t)cap);
      int n = 0;
      double sum = 0, wall0 = ks_now();
      while (ok && n < cap) {
        if (exact_evict)
          ks_runner_evict(evict_p, evict_b, evict_n);
        else if (flush_buf)
          ks_runner_flush(flush_buf, flush_n, n);
        int64_t t0 = ks_now_ns();
        be->run(handle, st.bufs, w->axis, st.scalars);
        be->sync(handle);
        int64_t t1 = ks_now_ns();
        if (device && be->device_time_ns)
          dsamples[n] = be->device_time_ns(handle);
        samples[n++] = (double)(t1 - t0);
        sum += (double)(t1 - t0) * 1e-9;
        if (n >= job.topt.min_reps && sum >= job.topt.min_time_s)
          break;
        if (n >= job.topt.min_reps && ks_now() - wall0 > job.topt.max_wall_s)
          break;
      }
      ts = ks_time_summarize(samples, n);
      if (device && n > 0)
        dts = ks_time_summarize(dsamples, n);
      free(samples);
      free(dsamples);
      if (ok && device)
        ok = dev_collect(&st, reason, sizeof reason);
      if (ok)
        ok = wl_check_integrity(&st, reason, sizeof reason);
      if (ok && !job.reference) {
        ok = wl_compare(&st, fds[wi], job.n_seeds, &max_abs, &max_rel, reason,
                        sizeof reason);
        if (!ok) {
          char more[600];
          snprintf(more, sizeof more,
                   "%.400s (in the output of the timed runs, on fresh inputs; "
                   "the correctness seeds passed)",
                   reason);
          ks_strlcpy(reason, more, sizeof reason);
        }
      }
    }
    json_t *ev = json_pack(
        "{s:s, s:i, s:b, s:s, s:f, s:f, s:f, s:f, s:f, s:i}", "event",
        "workload", "index", job.workloads[wi], "correct", ok, "reason", reason,
        "max_abs_err", isfinite(max_abs) ? max_abs : 1e300, "max_rel_err",
        isfinite(max_rel) ? max_rel : 1e300, "time_ns_median", ts.median_ns,
        "time_ns_min", ts.min_ns, "time_ns_iqr", ts.iqr_ns, "reps", ts.reps);
    /* device backends: the kernels' own time from profiling events (start
     * of the first to end of the last); time_ns_* stay wall clock, as on
     * the CPU, so speedups over the C reference compare like with like */
    if (device && dts.reps > 0) {
      json_object_set_new(ev, "device_ns_median", json_real(dts.median_ns));
      json_object_set_new(ev, "device_ns_min", json_real(dts.min_ns));
    }
    emit(ev);
    wl_free(&st);
  }
  emit(json_pack("{s:s}", "event", "done"));
  fclose(g_out);
  _exit(0); /* skip atexit handlers of untrusted code */
}
