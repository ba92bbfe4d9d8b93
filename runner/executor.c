/* executor.c — ksearch-runner's executor: runs one artifact on inputs the
 * judge hands it and answers with its own timings, nothing else (DESIGN.md:
 * Evaluation; protocol in src/eval/exec_proto.h).
 *
 * It holds no reference output, compares nothing and decides nothing: the
 * judge (ksearch) does that in its own address space. Order: read the job
 * from the command pipe, load the task, map the input memfd read-only and
 * the output memfd read-write, load device runtimes (OpenCL: context,
 * binaries, worker threads), start the OpenMP pool, then close the sandbox
 * (capabilities dropped, rlimits, Landlock, seccomp with W^X), say "ready",
 * and only then load a C artifact, so that even its constructors run
 * confined. After that it obeys one command at a time. */
#include "backend/backend.h"
#include "backend/guard_scan.h"
#include "eval/exec_proto.h"
#include "eval/sandbox.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void ks_runner_openmp_start(int threads);
void ks_runner_flush(volatile unsigned char *buf, size_t n, int pass);
void ks_runner_evict(unsigned char *const *p, const size_t *bytes, int n);
void ks_runner_warm(unsigned char *const *p, const size_t *bytes,
                    const int *writable, int n);
void ks_probe_move(const unsigned char *const *in, const size_t *in_bytes,
                   int n_in, unsigned char *const *out, const size_t *out_bytes,
                   int n_out, int nontemporal);
double ks_probe_compute(double flops);

typedef struct ex_wl {
  int64_t axes[KS_MAX_AXES];
  double scalars[KS_MAX_SCALARS];
  size_t in_off[KS_MAX_TENSORS], in_bytes[KS_MAX_TENSORS];
  size_t out_off[KS_MAX_TENSORS], out_bytes[KS_MAX_TENSORS];
} ex_wl;

typedef struct ex {
  ks_task task;
  const ks_backend_i *be;
  void *handle;
  bool loaded, device;
  bool dev_probe; /* probe mode on a device: be->probe_move on the handle */
  char mode[16], artifact[PATH_MAX], evict[16];
  unsigned char *in_map, *out_map;
  size_t in_size, out_size;
  int n_wl;
  ex_wl *wl;
  int cur;                       /* workload of the last prep, -1 none */
  void *dev[2 * KS_MAX_TENSORS]; /* device buffers of `cur` */
  unsigned char *flush_buf, *scratch;
  size_t flush_n, scratch_n;
  int flush_pass;
  char line[KS_EXEC_MAX_JOB + 1];
  size_t line_len;
} ex;

/* Read by the SIGSEGV reporter only: which input a faulting store hit. */
static const struct ex *g_fault_ex;

static void put_str(char *buf, size_t *len, size_t cap, const char *s) {
  while (*s && *len < cap)
    buf[(*len)++] = *s++;
}

/* A store into the read-only input mapping faults; say which tensor before
 * dying of the signal (SA_RESETHAND: the store runs again and kills). */
static void on_segv(int sig, siginfo_t *si, void *uctx);

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char buf[KS_EXEC_MAX_LINE];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof buf - 2)
    n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  size_t put = 0;
  while (put < (size_t)n) {
    ssize_t w = write(KS_EXEC_EV_FD, buf + put, (size_t)n - put);
    if (w <= 0)
      _exit(2);
    put += (size_t)w;
  }
}

static void say_error(int code, const char *msg) {
  json_t *s = json_string(msg);
  char *q = json_dumps(s, JSON_ENCODE_ANY);
  say("{\"ev\":\"error\",\"code\":%d,\"message\":%.3000s}", code,
      q ? q : "\"?\"");
  free(q);
  json_decref(s);
}

/* One line from the command pipe (blocking); false at EOF. */
static bool read_line(ex *x, size_t max) {
  x->line_len = 0;
  for (;;) {
    char c;
    ssize_t r = read(KS_EXEC_CMD_FD, &c, 1);
    if (r <= 0)
      return false;
    if (c == '\n')
      break;
    if (x->line_len >= max)
      return false;
    x->line[x->line_len++] = c;
  }
  x->line[x->line_len] = 0;
  return true;
}

static bool parse_pairs(json_t *arr, size_t *off, size_t *bytes, int n) {
  if (!json_is_array(arr) || (int)json_array_size(arr) != n)
    return false;
  for (int i = 0; i < n; i++) {
    json_t *p = json_array_get(arr, (size_t)i);
    off[i] = (size_t)json_integer_value(json_array_get(p, 0));
    bytes[i] = (size_t)json_integer_value(json_array_get(p, 1));
  }
  return true;
}

static ks_code parse_job(ex *x, json_t *j, int *threads, int64_t *mem,
                         double *cpu, bool *landlock, bool *gpu, ks_err *err) {
  const char *mode, *backend, *artifact, *task, *evict;
  json_t *wls;
  json_int_t in_size, out_size, mem_i;
  int ll = 0, g = 0;
  json_error_t je;
  if (json_unpack_ex(j, &je, 0,
                     "{s:s, s:s, s:s, s:s, s:i, s:I, s:F, s:I, s:I, s:s, "
                     "s:b, s:b, s:o}",
                     "mode", &mode, "backend", &backend, "artifact", &artifact,
                     "task", &task, "threads", threads, "mem_limit", &mem_i,
                     "cpu_limit", cpu, "in_size", &in_size, "out_size",
                     &out_size, "evict", &evict, "landlock", &ll, "gpu", &g,
                     "workloads", &wls) != 0)
    return ks_err_set(err, KS_ERR_INTERNAL, "bad job: %s", je.text);
  *mem = mem_i;
  *landlock = ll;
  *gpu = g;
  ks_strlcpy(x->mode, mode, sizeof x->mode);
  ks_strlcpy(x->artifact, artifact, sizeof x->artifact);
  ks_strlcpy(x->evict, evict, sizeof x->evict);
  x->in_size = (size_t)in_size;
  x->out_size = (size_t)out_size;
  ks_code rc = ks_task_load(task, &x->task, err);
  if (rc)
    return rc;
  /* the reference is C on every backend; the probe is C too unless the
   * judge asks for a device probe (backend.h: probe_move) */
  x->be = ks_backend_get(!strcmp(mode, "reference") ? "c" : backend);
  if (!x->be)
    return ks_err_set(err, KS_ERR_INPUT, "unknown backend %s", backend);
  x->n_wl = (int)json_array_size(wls);
  x->wl = ks_xcalloc((size_t)(x->n_wl ? x->n_wl : 1), sizeof *x->wl);
  for (int i = 0; i < x->n_wl; i++) {
    json_t *w = json_array_get(wls, (size_t)i);
    json_t *axes = json_object_get(w, "axes");
    json_t *sc = json_object_get(w, "scalars");
    if ((int)json_array_size(axes) != x->task.n_axes ||
        (int)json_array_size(sc) != x->task.n_scalars ||
        !parse_pairs(json_object_get(w, "in"), x->wl[i].in_off,
                     x->wl[i].in_bytes, x->task.n_inputs) ||
        !parse_pairs(json_object_get(w, "out"), x->wl[i].out_off,
                     x->wl[i].out_bytes, x->task.n_outputs))
      return ks_err_set(err, KS_ERR_INTERNAL, "bad job: workload %d", i);
    for (int a = 0; a < x->task.n_axes; a++)
      x->wl[i].axes[a] = json_integer_value(json_array_get(axes, (size_t)a));
    for (int s = 0; s < x->task.n_scalars; s++)
      x->wl[i].scalars[s] = json_number_value(json_array_get(sc, (size_t)s));
    for (int t = 0; t < x->task.n_inputs; t++)
      if (x->wl[i].in_off[t] + x->wl[i].in_bytes[t] > x->in_size)
        return ks_err_set(err, KS_ERR_INTERNAL, "bad job: input %d", t);
    for (int t = 0; t < x->task.n_outputs; t++)
      if (x->wl[i].out_off[t] + x->wl[i].out_bytes[t] > x->out_size)
        return ks_err_set(err, KS_ERR_INTERNAL, "bad job: output %d", t);
  }
  return KS_OK;
}

static void dev_release(ex *x) {
  for (int i = 0; i < 2 * KS_MAX_TENSORS; i++)
    if (x->dev[i]) {
      x->be->dev_free(x->handle, x->dev[i]);
      x->dev[i] = NULL;
    }
}

/* The pointers a call gets: host views of the memfds, or device buffers. */
static void call_bufs(ex *x, void **bufs) {
  const ex_wl *w = &x->wl[x->cur];
  int ni = x->task.n_inputs;
  for (int i = 0; i < ni; i++)
    bufs[i] = x->device ? x->dev[i] : x->in_map + w->in_off[i];
  for (int i = 0; i < x->task.n_outputs; i++)
    bufs[ni + i] = x->device ? x->dev[ni + i] : x->out_map + w->out_off[i];
}

static void evict(ex *x) {
  const ex_wl *w = &x->wl[x->cur];
  if (!strcmp(x->evict, "clflush")) {
    unsigned char *p[2 * KS_MAX_TENSORS];
    size_t b[2 * KS_MAX_TENSORS];
    int n = 0;
    for (int i = 0; i < x->task.n_inputs; i++) {
      p[n] = x->in_map + w->in_off[i];
      b[n++] = w->in_bytes[i];
    }
    for (int i = 0; i < x->task.n_outputs; i++) {
      p[n] = x->out_map + w->out_off[i];
      b[n++] = w->out_bytes[i];
    }
    ks_runner_evict(p, b, n);
  } else if (x->flush_buf) {
    ks_runner_flush(x->flush_buf, x->flush_n, x->flush_pass++);
  }
}

/* Host backends without eviction: the workload's bytes into the caches of
 * the threads, as the old in-process harness's repeated calls left them
 * (the judge wrote the inputs and the poison from its own core). */
static void warm(ex *x) {
  const ex_wl *w = &x->wl[x->cur];
  unsigned char *p[2 * KS_MAX_TENSORS];
  size_t b[2 * KS_MAX_TENSORS];
  int wr[2 * KS_MAX_TENSORS];
  int n = 0;
  for (int i = 0; i < x->task.n_inputs; i++) {
    p[n] = x->in_map + w->in_off[i];
    wr[n] = 0;
    b[n++] = w->in_bytes[i];
  }
  for (int i = 0; i < x->task.n_outputs; i++) {
    p[n] = x->out_map + w->out_off[i];
    wr[n] = 1;
    b[n++] = w->out_bytes[i];
  }
  ks_runner_warm(p, b, wr, n);
}

/* Device backends: the inputs and the judge's poisoned outputs go up. */
static const char *dev_prep(ex *x, int wl) {
  if (wl != x->cur) {
    dev_release(x);
    x->cur = wl;
    const ex_wl *w = &x->wl[wl];
    for (int i = 0; i < x->task.n_inputs + x->task.n_outputs; i++) {
      bool in = i < x->task.n_inputs;
      size_t bytes = in ? w->in_bytes[i] : w->out_bytes[i - x->task.n_inputs];
      x->dev[i] =
          x->be->dev_alloc(x->handle, bytes, KS_EXEC_GUARD, KS_EXEC_GUARD_BYTE);
      if (!x->dev[i])
        return "could not allocate device buffers";
    }
  }
  const ex_wl *w = &x->wl[wl];
  for (int i = 0; i < x->task.n_inputs + x->task.n_outputs; i++) {
    bool in = i < x->task.n_inputs;
    int k = in ? i : i - x->task.n_inputs;
    const unsigned char *src =
        in ? x->in_map + w->in_off[k] : x->out_map + w->out_off[k];
    if (!x->be->upload(x->handle, x->dev[i], src,
                       in ? w->in_bytes[k] : w->out_bytes[k]))
      return "could not upload to the device";
  }
  return NULL;
}

/* Device backends after a call: the backend's verdict, guards, outputs back
 * into the output memfd for the judge. Returns NULL or why it failed. */
static const char *dev_collect(ex *x, char *why, size_t n) {
  const ex_wl *w = &x->wl[x->cur];
  if (x->be->dev_check && !x->be->dev_check(x->handle, why, n))
    return why;
  int ni = x->task.n_inputs;
  for (int i = 0; i < ni + x->task.n_outputs; i++) {
    bool in = i < ni;
    const char *name =
        in ? x->task.inputs[i].name : x->task.outputs[i - ni].name;
    long off = x->be->dev_guard_check(x->handle, x->dev[i]);
    if (off) {
      char what[96];
      snprintf(what, sizeof what, "%s %s", in ? "input" : "output", name);
      ks_guard_reason(why, n, off, what);
      return why;
    }
  }
  /* inputs are const: a kernel that writes its device copy is caught here
   * (the host copy is a read-only mapping) */
  for (int i = 0; i < ni; i++) {
    if (w->in_bytes[i] > x->scratch_n) {
      free(x->scratch);
      x->scratch_n = w->in_bytes[i];
      x->scratch = malloc(x->scratch_n);
    }
    if (!x->scratch ||
        !x->be->download(x->handle, x->dev[i], x->scratch, w->in_bytes[i]))
      return "could not download an input to check it";
    if (memcmp(x->scratch, x->in_map + w->in_off[i], w->in_bytes[i])) {
      snprintf(why, n, "modified input %s (inputs are read-only)",
               x->task.inputs[i].name);
      return why;
    }
  }
  for (int i = 0; i < x->task.n_outputs; i++)
    if (!x->be->download(x->handle, x->dev[ni + i], x->out_map + w->out_off[i],
                         w->out_bytes[i])) {
      snprintf(why, n, "could not download output %s", x->task.outputs[i].name);
      return why;
    }
  return NULL;
}

static void probe(ex *x, int wl, int nontemporal) {
  const ex_wl *w = &x->wl[wl];
  const unsigned char *in[KS_MAX_TENSORS];
  unsigned char *out[KS_MAX_TENSORS];
  for (int i = 0; i < x->task.n_inputs; i++)
    in[i] = x->in_map + w->in_off[i];
  for (int i = 0; i < x->task.n_outputs; i++)
    out[i] = x->out_map + w->out_off[i];
  ks_probe_move(in, w->in_bytes, x->task.n_inputs, out, w->out_bytes,
                x->task.n_outputs, nontemporal);
}

static void on_segv(int sig, siginfo_t *si, void *uctx) {
  (void)uctx;
  const ex *x = g_fault_ex;
  const unsigned char *a = si->si_addr;
  if (!x || !x->in_map || a < x->in_map || a >= x->in_map + x->in_size)
    return;
  const char *name = "an input";
  if (x->cur >= 0)
    for (int i = 0; i < x->task.n_inputs; i++) {
      const unsigned char *b = x->in_map + x->wl[x->cur].in_off[i];
      if (a >= b && a < b + x->wl[x->cur].in_bytes[i] + 4096)
        name = x->task.inputs[i].name;
    }
  char buf[256];
  size_t len = 0, cap = sizeof buf - 8;
  put_str(buf, &len, cap, "{\"ev\":\"fault\",\"sig\":");
  buf[len++] = (char)('0' + sig / 10);
  buf[len++] = (char)('0' + sig % 10);
  put_str(buf, &len, cap, ",\"what\":\"modified input ");
  put_str(buf, &len, cap, name);
  put_str(buf, &len, cap, " (inputs are mapped read-only)\"}\n");
  ssize_t w = write(KS_EXEC_EV_FD, buf, len);
  (void)w;
}

static int64_t get_i(json_t *c, const char *k) {
  return json_integer_value(json_object_get(c, k));
}

/* The command loop, once the sandbox is closed. */
static int serve(ex *x) {
  char why[600];
  for (;;) {
    if (!read_line(x, KS_EXEC_MAX_LINE))
      return 0; /* the judge went away */
    json_t *c = json_loadb(x->line, x->line_len, 0, NULL);
    const char *cmd = json_string_value(json_object_get(c, "cmd"));
    int64_t id = get_i(c, "id");
    if (!cmd) {
      json_decref(c);
      return 2;
    }
    if (!strcmp(cmd, "ping")) {
      say("{\"ev\":\"pong\",\"id\":%lld}", (long long)id);
    } else if (!strcmp(cmd, "load")) {
      ks_err err = {0};
      if (!x->loaded && x->be->load(x->artifact, &x->task, &x->handle, &err)) {
        say_error(err.code, err.msg);
        json_decref(c);
        return 2;
      }
      x->loaded = true;
      say("{\"ev\":\"loaded\"}");
    } else if (!strcmp(cmd, "prep")) {
      int wl = (int)get_i(c, "wl");
      if (wl < 0 || wl >= x->n_wl) {
        json_decref(c);
        return 2;
      }
      const char *fail = NULL;
      if (x->device)
        fail = dev_prep(x, wl);
      x->cur = wl;
      if (fail) {
        say_error(KS_ERR_ENV, fail);
        json_decref(c);
        return 2;
      }
      if (json_is_true(json_object_get(c, "evict")))
        evict(x);
      else if (!x->device)
        warm(x);
      say("{\"ev\":\"prepped\",\"id\":%lld}", (long long)id);
    } else if (!strcmp(cmd, "call") && x->cur >= 0 && x->loaded) {
      void *bufs[2 * KS_MAX_TENSORS];
      call_bufs(x, bufs);
      const ex_wl *w = &x->wl[x->cur];
      int64_t t0 = ks_now_ns();
      x->be->run(x->handle, bufs, w->axes, w->scalars);
      x->be->sync(x->handle);
      int64_t t1 = ks_now_ns();
      if (x->device && x->be->device_time_ns)
        say("{\"ev\":\"ret\",\"id\":%lld,\"ns\":%lld,\"dev_ns\":%lld}",
            (long long)id, (long long)(t1 - t0),
            (long long)x->be->device_time_ns(x->handle));
      else
        say("{\"ev\":\"ret\",\"id\":%lld,\"ns\":%lld}", (long long)id,
            (long long)(t1 - t0));
    } else if (!strcmp(cmd, "collect") && x->cur >= 0) {
      const char *fail = x->device ? dev_collect(x, why, sizeof why) : NULL;
      if (fail) {
        json_t *s = json_string(fail);
        char *q = json_dumps(s, JSON_ENCODE_ANY);
        say("{\"ev\":\"collected\",\"id\":%lld,\"fail\":%.3000s}",
            (long long)id, q ? q : "\"?\"");
        free(q);
        json_decref(s);
      } else {
        say("{\"ev\":\"collected\",\"id\":%lld}", (long long)id);
      }
    } else if (!strcmp(cmd, "probe")) {
      int wl = (int)get_i(c, "wl");
      if (wl < 0 || wl >= x->n_wl) {
        json_decref(c);
        return 2;
      }
      x->cur = wl;
      /* fl > 0: a compute probe of that many flops (host only) */
      double fl =
          x->dev_probe ? 0 : json_number_value(json_object_get(c, "fl"));
      if (!(fl > 0 && fl < 1e15))
        fl = 0;
      if (json_is_true(json_object_get(c, "evict")))
        evict(x);
      int64_t ns = 0;
      if (x->dev_probe) { /* device time of ksearch's own kernels; 0: none */
        size_t ib = 0, ob = 0;
        for (int i = 0; i < x->task.n_inputs; i++)
          ib += x->wl[wl].in_bytes[i];
        for (int i = 0; i < x->task.n_outputs; i++)
          ob += x->wl[wl].out_bytes[i];
        ns = (int64_t)x->be->probe_move(x->handle, ib, ob, true);
      } else if (fl > 0) { /* the compute probe: fl flops of FMA chains */
        int64_t t0 = ks_now_ns();
        fl = ks_probe_compute(fl);
        ns = ks_now_ns() - t0;
      } else {
        int64_t t0 = ks_now_ns();
        probe(x, wl, json_is_true(json_object_get(c, "nt")));
        ns = ks_now_ns() - t0;
      }
      if (fl > 0)
        say("{\"ev\":\"probed\",\"id\":%lld,\"ns\":%lld,\"fl\":%.0f}",
            (long long)id, (long long)ns, fl);
      else
        say("{\"ev\":\"probed\",\"id\":%lld,\"ns\":%lld}", (long long)id,
            (long long)ns);
    } else if (!strcmp(cmd, "exit")) {
      json_decref(c);
      return 0;
    } else {
      json_decref(c);
      return 2; /* the judge sends nothing else */
    }
    json_decref(c);
  }
}

int ks_executor_main(void) {
  static ex x; /* large line buffer: not on the stack */
  x.cur = -1;
  ks_err err = {0};
  if (!read_line(&x, KS_EXEC_MAX_JOB)) {
    say_error(KS_ERR_INTERNAL, "no job on the command pipe");
    return 2;
  }
  json_t *j = json_loadb(x.line, x.line_len, 0, NULL);
  int threads = 1;
  int64_t mem = 0;
  double cpu = 0;
  bool landlock = false, gpu = false;
  ks_code rc = j ? parse_job(&x, j, &threads, &mem, &cpu, &landlock, &gpu, &err)
                 : ks_err_set(&err, KS_ERR_INTERNAL, "job is not JSON");
  json_decref(j);
  if (rc) {
    say_error(rc, err.msg);
    return 2;
  }
  x.in_map = mmap(NULL, x.in_size ? x.in_size : 4096, PROT_READ, MAP_SHARED,
                  KS_EXEC_IN_FD, 0);
  x.out_map = mmap(NULL, x.out_size ? x.out_size : 4096, PROT_READ | PROT_WRITE,
                   MAP_SHARED, KS_EXEC_OUT_FD, 0);
  if (x.in_map == MAP_FAILED || x.out_map == MAP_FAILED) {
    ks_err_set(&err, KS_ERR_ENV, "cannot map the judge's buffers: %s",
               strerror(errno));
    say_error(err.code, err.msg);
    return 2;
  }
  g_fault_ex = &x;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  bool probe_mode = !strcmp(x.mode, "probe");
  x.device = !probe_mode && x.be->dev_alloc != NULL;
  /* a device probe loads the candidate's artifact for its context and
   * ksearch's support kernels; none of the candidate's kernels is launched */
  x.dev_probe = probe_mode && x.be->probe_move && x.artifact[0];
  /* device runtimes need files and threads to start; their candidates are
   * device code that runs only when launched. A C artifact is loaded after
   * the sandbox closed when Landlock lets it be opened by path. */
  bool late_load = x.be->load_sandboxed && landlock;
  if ((!probe_mode || x.dev_probe) && !late_load) {
    if ((rc = x.be->load(x.artifact, &x.task, &x.handle, &err))) {
      say_error(rc, err.msg);
      return 2;
    }
    x.loaded = true;
  }
  if (probe_mode && !x.dev_probe)
    x.loaded = true;
  ks_runner_openmp_start(threads > 0 ? threads : ks_nproc());
  if (!strcmp(x.evict, "stream")) {
    x.flush_n = 64u << 20;
    x.flush_buf = malloc(x.flush_n);
    if (x.flush_buf)
      memset(x.flush_buf, 1, x.flush_n);
  }
  /* a GPU driver reserves tens of GiB of address space for its own
   * mappings before the limit is set; the limit counts from there. So do
   * the other backends' runtimes (H200 host, 2026-12-04: on PoCL's CPU
   * device with 16 threads a 32 MiB allocation failed under a 3.1 GiB
   * limit counted without them; glibc's per-thread arenas, capped in
   * runner.c, are the likely other taker). What is mapped now is the
   * runtime's, not the candidate's. */
  /* the judge says whether it is a GPU ("gpu" in the job): asking OpenCL
   * here would list devices again from a process whose driver is loaded */
  if ((!probe_mode || x.dev_probe) && mem > 0) {
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld", &pages) != 1)
      pages = 0;
    if (f)
      fclose(f);
    mem += (int64_t)pages * 4096;
    /* and on a GPU room for what the driver reserves later (its first
     * buffers): address space, not memory; no host code of the candidate
     * runs there to use it */
    if (gpu)
      mem += 64LL << 30;
  }
  ks_sandbox_plan plan = {.be = probe_mode && !x.dev_probe ? NULL : x.be,
                          .handle = x.handle,
                          .mem_bytes = mem,
                          .cpu_s = cpu,
                          .report_fd = KS_EXEC_EV_FD,
                          .landlock = landlock,
                          .read_path = x.artifact};
  if ((rc = ks_sandbox_close(&plan, &err))) {
    say_error(rc, err.msg);
    return 2;
  }
  say("{\"ev\":\"ready\"}");
  int st = serve(&x);
  _exit(st); /* skip atexit handlers of untrusted code */
}
