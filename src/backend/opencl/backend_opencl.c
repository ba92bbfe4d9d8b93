/* backend_opencl.c — the OpenCL backend (DESIGN.md: Backend interface):
 * GPU-style kernels in OpenCL C, on PoCL here and on any OpenCL device.
 *
 * Parent side, build: the candidate's launch lines (launch.h) are evaluated
 * for every workload of the task; the source is compiled with -DPARAM=V in a
 * child (`ksearch-runner --opencl-build`, tool.c) under the build time limit,
 * with PoCL's cache pointed at a fresh folder so a PoCL-cached build never
 * looks instantaneous; the program binary (CL_PROGRAM_BINARIES) is cached
 * under <cache>/build/<hash>/ like the C artifacts, with artifact.json
 * naming it, the device identity, the launch lines and the parameters.
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
 */
#include "backend/backend.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/ocl.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const ks_backend_i ks_backend_c;

#define OCL_FORMAT "ksearch-opencl-1" /* bump when the artifact changes */

/* the two build passes' binaries: large-grid, then "-smallgrid" variants */
static const char *const k_bin_names[2] = {"program.bin",
                                           "program.smallgrid.bin"};

static ks_code ocl_probe(char *device, size_t n, ks_err *err) {
  ks_ocl_dev d;
  ks_code rc = ks_ocl_pick(&d, err);
  if (rc)
    return rc;
  snprintf(device, n, "%s (%s, OpenCL device %d)", d.name, d.platform_name,
           d.index);
  return KS_OK;
}

/* ---- the OpenCL signature of a task, for messages and argument counts */

static const char *ocl_type(ks_dtype t) {
  switch (t) {
  case KS_F32: return "float";
  case KS_F16:
  case KS_BF16: return "ushort";
  case KS_I32: return "int";
  case KS_I64: return "long";
  case KS_U8: return "uchar";
  default: return "void";
  }
}

static int task_nargs(const ks_task *t, bool scratch) {
  int n = t->n_inputs + t->n_outputs + t->n_scalars + (scratch ? 1 : 0);
  for (int i = 0; i < t->n_axes; i++)
    n += !t->axes[i].is_const;
  return n;
}

static void task_signature(const ks_task *t, const char *kernel, bool scratch,
                           ks_buf *out) {
  ks_buf_printf(out, "__kernel void %s(", kernel);
  const char *sep = "";
  for (int i = 0; i < t->n_inputs; i++, sep = ", ")
    ks_buf_printf(out, "%s__global const %s *%s", sep,
                  ocl_type(t->inputs[i].dtype), t->inputs[i].name);
  for (int i = 0; i < t->n_outputs; i++, sep = ", ")
    ks_buf_printf(out, "%s__global %s *%s", sep, ocl_type(t->outputs[i].dtype),
                  t->outputs[i].name);
  for (int i = 0; i < t->n_axes; i++)
    if (!t->axes[i].is_const) {
      ks_buf_printf(out, "%slong %s", sep, t->axes[i].name);
      sep = ", ";
    }
  for (int i = 0; i < t->n_scalars; i++, sep = ", ")
    ks_buf_printf(out, "%s%s %s", sep, ocl_type(t->scalars[i].dtype),
                  t->scalars[i].name);
  if (scratch)
    ks_buf_printf(out, "%s__global void *scratch", sep);
  ks_buf_puts(out, ")");
}

/* ---- parent side: build */

typedef struct plan_info {
  ks_launch_plan plan;
  /* names launch expressions may use besides the axes: the parameters,
   * then numeric `#define NAME V` lines of the source (a run's best/ file
   * has its parameters baked in that way) */
  ks_param_value names[2 * KS_MAX_PARAMS];
  int n_names;
  bool scratch;
  /* distinct local sizes per launch line, for the specialization list */
  char keys[64][32];
  int n_keys;
  size_t locals[KS_LAUNCH_MAX][16][3];
  int n_locals[KS_LAUNCH_MAX];
} plan_info;

/* the parameters, then the source's numeric #defines (launch.h) */
static void source_defines(const ks_candidate *cand, plan_info *pi) {
  pi->n_names = ks_launch_names(cand, pi->names, 2 * KS_MAX_PARAMS);
}

static ks_code plan_for_task(const ks_task *task, const ks_candidate *cand,
                             plan_info *pi, ks_err *err) {
  memset(pi, 0, sizeof *pi);
  source_defines(cand, pi);
  ks_code rc =
      ks_launch_parse(cand->source, cand->path, cand->entry, &pi->plan, err);
  if (!rc && (rc = ks_launch_check_style(&pi->plan, false, cand->path, err)))
    ks_launch_free(&pi->plan);
  if (rc)
    return rc;
  for (int i = 0; i < pi->plan.n; i++)
    pi->scratch |= pi->plan.k[i].scratch != NULL;
  for (int wi = 0; wi < task->n_workloads && !rc; wi++) {
    ks_launch_geom g[KS_LAUNCH_MAX];
    double sb;
    rc = ks_launch_eval(&pi->plan, task, &task->workloads[wi], pi->names,
                        pi->n_names, g, &sb, err);
    if (rc) {
      ks_err_prefix(err, "%s: ", cand->path);
      break;
    }
    for (int k = 0; k < pi->plan.n; k++) {
      char key[32];
      ks_launch_local_key(&g[k], key, sizeof key);
      bool have = false;
      for (int j = 0; j < pi->n_keys; j++)
        have |= !strcmp(pi->keys[j], key);
      if (!have && pi->n_keys < 64)
        ks_strlcpy(pi->keys[pi->n_keys++], key, sizeof pi->keys[0]);
      have = false;
      for (int j = 0; j < pi->n_locals[k]; j++)
        have |= !memcmp(pi->locals[k][j], g[k].local, sizeof g[k].local);
      if (!have && pi->n_locals[k] < 16)
        memcpy(pi->locals[k][pi->n_locals[k]++], g[k].local, sizeof g[k].local);
    }
  }
  if (rc)
    ks_launch_free(&pi->plan);
  return rc;
}

static json_t *params_json(const plan_info *pi) {
  json_t *o = json_object();
  for (int i = 0; i < pi->n_names; i++)
    json_object_set_new(o, pi->names[i].name, json_string(pi->names[i].value));
  return o;
}

static ks_code write_json(const char *path, json_t *j, ks_err *err) {
  char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "%s: cannot format JSON", path);
  ks_code rc = ks_write_file_atomic(path, text, strlen(text), err);
  free(text);
  return rc;
}

/* One run of `ksearch-runner --opencl-build` with its two passes (tool.c):
 * writes the request and classifies how the child ended (0 built, 1 the
 * candidate's fault, 3 the environment). The compiler's output goes to
 * out->log. */
static ks_code build_child(const ks_task *task, const plan_info *pi,
                           const char *dir, const char *src, const char *opts,
                           const char *const spec[2], const char *const bin[2],
                           const ks_ocl_dev *dev, double timeout_s,
                           ks_artifact *out, ks_err *err) {
  char req[PATH_MAX], pcache[PATH_MAX];
  snprintf(req, sizeof req, "%.4000s/request.json", dir);
  snprintf(pcache, sizeof pcache, "%.4000s/pocl-cache.%d", dir, (int)getpid());
  json_t *kernels = json_array();
  for (int k = 0; k < pi->plan.n; k++) {
    json_t *locals = json_array();
    for (int j = 0; j < pi->n_locals[k]; j++)
      json_array_append_new(locals, json_pack("[I,I,I]",
                                              (json_int_t)pi->locals[k][j][0],
                                              (json_int_t)pi->locals[k][j][1],
                                              (json_int_t)pi->locals[k][j][2]));
    ks_buf ksig;
    ks_buf_init(&ksig);
    task_signature(task, pi->plan.k[k].kernel, pi->scratch, &ksig);
    json_array_append_new(kernels,
                          json_pack("{s:s, s:o, s:i, s:s}", "name",
                                    pi->plan.k[k].kernel, "locals", locals,
                                    "nargs", task_nargs(task, pi->scratch),
                                    "signature", ksig.data));
    ks_buf_free(&ksig);
  }
  json_t *j = json_pack("{s:s, s:s, s:[s,s], s:s, s:[s,s], s:s, s:o}", "source",
                        src, "options", opts, "specialize", spec[0], spec[1],
                        "identity", dev->identity, "out", bin[0], bin[1],
                        "pocl_cache", pcache, "kernels", kernels);
  ks_code rc = write_json(req, j, err);
  json_decref(j);
  if (rc)
    return rc;
  char *argv[] = {(char *)ks_runner_path(), "--opencl-build", req, NULL};
  ks_proc_result r;
  ks_buf log;
  ks_buf_init(&log);
  rc = ks_run_capture(argv, dir, timeout_s, &log, &r, err);
  for (int i = 0; i < 2; i++) {
    char pc[PATH_MAX + 8];
    snprintf(pc, sizeof pc, "%.4000s.%d", pcache, i);
    ks_rm_rf(pc);
  }
  const char *text = log.data ? log.data : "(no output)";
  if (rc) {
  } else if (r.timed_out) {
    rc = ks_err_set(err, KS_ERR_CANDIDATE,
                    "OpenCL compile time limit of %.0f s exceeded", timeout_s);
  } else if (r.exited && r.exit_status == 1) {
    rc = ks_err_set(err, KS_ERR_CANDIDATE, "%.1900s", text);
  } else if (r.exited && r.exit_status == 3) {
    rc = ks_err_set(err, KS_ERR_ENV, "%.1900s", text);
  } else if (!(r.exited && r.exit_status == 0)) {
    rc = ks_err_set(err, KS_ERR_CANDIDATE,
                    "the OpenCL compiler died (%s %d):\n%.1700s",
                    r.exited ? "exit status" : "signal",
                    r.exited ? r.exit_status : r.signal, text);
  }
  if (log.data)
    ks_buf_puts(&out->log, log.data);
  ks_buf_free(&log);
  return rc;
}

static ks_code ocl_build(const ks_task *task, const ks_candidate *cand,
                         const char *cache_dir, double timeout_s,
                         ks_artifact *out, ks_err *err) {
  if (!strcmp(cand->backend, "c")) /* the task's reference */
    return ks_backend_c.build(task, cand, cache_dir, timeout_s, out, err);
  memset(out, 0, sizeof *out);
  plan_info *pi = ks_xcalloc(1, sizeof *pi);
  ks_code rc = plan_for_task(task, cand, pi, err);
  if (rc) {
    free(pi);
    err->code = KS_ERR_CANDIDATE; /* a header mistake: compile_error */
    return KS_ERR_CANDIDATE;
  }
  ks_ocl_dev dev;
  if ((rc = ks_ocl_pick(&dev, err))) {
    ks_launch_free(&pi->plan);
    free(pi);
    return rc;
  }
  ks_buf opts, lkeys, key, sig;
  ks_buf_init(&opts);
  ks_buf_init(&lkeys);
  ks_buf_init(&key);
  ks_buf_init(&sig);
  for (int i = 0; i < cand->n_set; i++)
    ks_buf_printf(&opts, "%s-D%s=%s", i ? " " : "", cand->set[i].name,
                  cand->set[i].value);
  for (int i = 0; i < pi->n_keys; i++)
    ks_buf_printf(&lkeys, "%s%s", i ? "," : "", pi->keys[i]);
  task_signature(task, "NAME", pi->scratch, &sig);
  ks_buf_puts(&key, OCL_FORMAT);
  ks_buf_puts(&key, cand->source);
  ks_buf_puts(&key, opts.data ? opts.data : "");
  ks_buf_puts(&key, lkeys.data ? lkeys.data : "");
  ks_buf_puts(&key, sig.data);
  ks_buf_puts(&key, dev.identity);
  ks_hash_hex(ks_hash64(key.data, key.len, 0x6f70656e636cULL), out->hash);
  ks_buf_free(&key);

  char dir[PATH_MAX], src[PATH_MAX];
  snprintf(dir, sizeof dir, "%.3800s/build/%s", cache_dir, out->hash);
  snprintf(out->path, sizeof out->path, "%.4000s/artifact.json", dir);
  snprintf(src, sizeof src, "%.4000s/candidate.cl", dir);
  if (ks_file_exists(out->path)) {
    out->cached = true;
    goto done;
  }
  rc = ks_mkdir_p(dir, err);
  if (!rc)
    rc = ks_write_file_atomic(src, cand->source, strlen(cand->source), err);
  if (!rc && access(ks_runner_path(), X_OK) != 0)
    rc = ks_err_set(err, KS_ERR_ENV,
                    "%s: ksearch-runner not found; it compiles OpenCL "
                    "candidates; run `make` or set KSEARCH_RUNNER",
                    ks_runner_path());
  /* Two passes, side by side in one build child: the large-grid work-group
   * functions and the "-smallgrid" ones (tool.c says why PoCL needs two
   * processes for that); the runner unpacks both binaries. */
  char bin[2][PATH_MAX];
  ks_buf spec[2];
  for (int pass = 0; pass < 2; pass++) {
    ks_buf_init(&spec[pass]);
    for (int i = 0; i < pi->n_keys; i++)
      ks_buf_printf(&spec[pass], "%s%s-goffs0%s", i ? "," : "", pi->keys[i],
                    pass ? "-smallgrid" : "");
    snprintf(bin[pass], sizeof bin[pass], "%.4000s/program.bin.%d.%d", dir,
             (int)getpid(), pass);
  }
  double t0 = ks_now();
  if (!rc) {
    const char *specs[2] = {spec[0].data, spec[1].data};
    const char *bins[2] = {bin[0], bin[1]};
    rc = build_child(task, pi, dir, src, opts.data ? opts.data : "", specs,
                     bins, &dev, timeout_s, out, err);
  }
  out->build_s = ks_now() - t0;
  for (int pass = 0; pass < 2; pass++)
    ks_buf_free(&spec[pass]);
  for (int pass = 0; pass < 2 && !rc; pass++) {
    char final[PATH_MAX];
    snprintf(final, sizeof final, "%.4000s/%s", dir, k_bin_names[pass]);
    if (rename(bin[pass], final) != 0)
      rc = ks_err_set(err, KS_ERR_IO, "%s: %s", final, strerror(errno));
  }
  for (int pass = 0; pass < 2; pass++)
    unlink(bin[pass]);
  if (!rc) {
    json_t *lines = json_array();
    char raw[KS_LAUNCH_MAX][512];
    int nl = ks_launch_lines(cand->source, raw, KS_LAUNCH_MAX);
    for (int i = 0; i < nl; i++)
      json_array_append_new(lines, json_string(raw[i]));
    json_t *j =
        json_pack("{s:s, s:[s,s], s:s, s:s, s:o, s:o, s:b}", "format",
                  OCL_FORMAT, "binaries", k_bin_names[0], k_bin_names[1],
                  "identity", dev.identity, "entry", cand->entry, "launch",
                  lines, "params", params_json(pi), "scratch", pi->scratch);
    rc = write_json(out->path, j, err);
    json_decref(j);
  }
done:
  ks_buf_free(&opts);
  ks_buf_free(&lkeys);
  ks_buf_free(&sig);
  ks_launch_free(&pi->plan);
  free(pi);
  return rc;
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
  char error[600]; /* sticky: the first launch failure */
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
  if (!fmt || strcmp(fmt, OCL_FORMAT) || !json_is_array(bins) ||
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
    return 0;
  long off = 0;
  if (clEnqueueReadBuffer(h->q, b->parent, CL_TRUE, 0, b->guard, tmp, 0, NULL,
                          NULL) == CL_SUCCESS) {
    for (long i = (long)b->guard - 1; i >= 0 && !off; i--)
      if (tmp[i] != b->guard_byte)
        off = i - (long)b->guard;
  }
  if (!off && clEnqueueReadBuffer(h->q, b->parent, CL_TRUE, b->guard + b->bytes,
                                  tail, tmp, 0, NULL, NULL) == CL_SUCCESS) {
    for (size_t i = 0; i < tail && !off; i++)
      if (tmp[i] != b->guard_byte)
        off = (long)i + 1;
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
      snprintf(reason, n,
               "wrote %s the scratch buffer (guard bytes changed at offset "
               "%+ld)",
               off > 0 ? "past the end of" : "before the start of", off);
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
  cl_device_type t = 0;
  if (ks_ocl_pick(&d, &err) != KS_OK ||
      clGetDeviceInfo(d.device, CL_DEVICE_TYPE, sizeof t, &t, NULL) !=
          CL_SUCCESS)
    return KS_DEV_CPU;
  return t & CL_DEVICE_TYPE_GPU ? KS_DEV_GPU : KS_DEV_CPU;
}

const ks_backend_i ks_backend_opencl = {
    .name = "opencl",
    .description = "OpenCL C kernels (work-groups, local memory); PoCL on "
                   "the CPU or any OpenCL GPU",
    .probe = ocl_probe,
    .build = ocl_build,
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
};
