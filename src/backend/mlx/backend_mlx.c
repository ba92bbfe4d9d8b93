/* backend_mlx.c — the MLX backend (DESIGN.md: Backend interface, mlx):
 * kernels for MLX (mx.fast.cuda_kernel bodies on Linux, metal_kernel bodies
 * on Apple) and MLX ops (the baselines), run by a Python executor.
 *
 * Parent side only. probe asks `python3 mlx/ksmlx.py probe` (under the data
 * folder; KSEARCH_PYTHON names another interpreter) what MLX runs on here:
 * cuda, metal or cpu; the answer is kept for the process, since the device
 * class of every workload depends on it. build checks nothing MLX would
 * check better: it writes <cache>/build/<hash>/artifact.json holding the
 * candidate's source and parameter values, which the executor reads before
 * its sandbox closes. A kernel-form candidate on a machine whose MLX has no
 * GPU is an environment error (exit 3): MLX custom kernels do not run on the
 * CPU. The executor is mlx/executor.py (executor_argv); it speaks
 * eval/exec_proto.h like ksearch-runner, so load/run/sync here only refuse
 * to be used from ksearch-runner.
 */
#include "backend/backend.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

extern const ks_backend_i ks_backend_c;

#define MLX_FORMAT "ksearch-mlx-1" /* bump when the artifact changes */

/* The probe's answer, once per process (the one piece of state here: a
 * memo of a fact about the machine). */
static struct {
  bool done, ok;
  char device[16]; /* cuda, metal, cpu */
  char version[32];
  char error[1200];
} g_probe;

static const char *python(void) {
  const char *p = getenv("KSEARCH_PYTHON");
  return p && *p ? p : "python3";
}

static void script(char *out, size_t n, const char *name) {
  snprintf(out, n, "%.3900s/mlx/%s", ks_data_dir(), name);
}

static void run_probe(void) {
  if (g_probe.done)
    return;
  g_probe.done = true;
  char path[PATH_MAX];
  script(path, sizeof path, "ksmlx.py");
  if (!ks_file_exists(path)) {
    snprintf(
        g_probe.error, sizeof g_probe.error,
        "%.400s: missing (the MLX backend's Python part); set KSEARCH_HOME "
        "to the ksearch folder",
        path);
    return;
  }
  char *argv[] = {(char *)python(), "-B", path, "probe", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result pr;
  ks_err err;
  ks_code rc = ks_run_capture(argv, NULL, 60, &log, &pr, &err);
  json_t *j = NULL;
  if (!rc && pr.exited && pr.exit_status == 0 && log.data) {
    /* the last line is the answer; anything before it is noise */
    char *last = log.data;
    for (char *p = log.data; *p; p++)
      if (p[0] == '\n' && p[1] == '{')
        last = p + 1;
    j = json_loads(last, JSON_DISABLE_EOF_CHECK, NULL);
  }
  if (!j) {
    snprintf(g_probe.error, sizeof g_probe.error,
             "%.100s could not run %.400s (%.300s); install Python 3 and run "
             "scripts/setup.sh, or set KSEARCH_PYTHON",
             python(), path, rc ? err.msg : "no answer");
  } else if (!json_is_true(json_object_get(j, "ok"))) {
    snprintf(g_probe.error, sizeof g_probe.error,
             "MLX is not installed for %s (%.200s); run scripts/setup.sh "
             "(pip install 'mlx[cpu]' mlx-lm; mlx[cuda] on an NVIDIA GPU)",
             python(), json_string_value(json_object_get(j, "error")));
  } else {
    g_probe.ok = true;
    const char *d = json_string_value(json_object_get(j, "device"));
    const char *v = json_string_value(json_object_get(j, "version"));
    ks_strlcpy(g_probe.device, d ? d : "cpu", sizeof g_probe.device);
    ks_strlcpy(g_probe.version, v ? v : "?", sizeof g_probe.version);
  }
  json_decref(j);
  ks_buf_free(&log);
}

static ks_code mlx_probe(char *device, size_t n, ks_err *err) {
  run_probe();
  if (!g_probe.ok)
    return ks_err_set(err, KS_ERR_ENV, "mlx: %s", g_probe.error);
  snprintf(device, n, "MLX %s on %s", g_probe.version, g_probe.device);
  return KS_OK;
}

static ks_device_class mlx_device_class(void) {
  run_probe();
  return g_probe.ok && strcmp(g_probe.device, "cpu") ? KS_DEV_GPU : KS_DEV_CPU;
}

/* A header key of an MLX candidate (`// ksearch:` or `# ksearch:` lines):
 * the candidate parser keeps only the keys every backend shares. */
static void header_key(const char *src, const char *key, char *out, size_t n,
                       const char *dflt) {
  ks_strlcpy(out, dflt, n);
  size_t kl = strlen(key);
  for (const char *s = src; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    const char *q = s;
    while (q < s + len && (*q == ' ' || *q == '\t'))
      q++;
    bool hdr = (s + len - q > 11 && !strncmp(q, "// ksearch:", 11)) ||
               (s + len - q > 10 && !strncmp(q, "# ksearch:", 10));
    for (const char *p = q; hdr && p + kl < s + len; p++)
      if ((p == q || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=') {
        const char *v = p + kl + 1, *e = v;
        while (e < s + len && *e != ' ' && *e != '\t' && *e != '\r')
          e++;
        size_t vl = (size_t)(e - v) < n - 1 ? (size_t)(e - v) : n - 1;
        memcpy(out, v, vl);
        out[vl] = 0;
      }
    s = nl ? nl + 1 : NULL;
  }
}

static const char *mlx_spec_target(const ks_candidate *cand) {
  char form[16], kernel[16];
  header_key(cand->source, "form", form, sizeof form, "kernel");
  header_key(cand->source, "kernel", kernel, sizeof kernel, "cuda");
  if (!strcmp(form, "ops"))
    return NULL; /* Python over MLX ops: the C lexer has nothing to say */
  return strcmp(kernel, "metal") ? "mlx-cuda-sm90" : "mlx";
}

/* Whether cand is the task's own baseline, tasks/<t>/baseline/mlx.py of
 * the data folder (trusted: the executor warms it up before its sandbox
 * closes, so the MLX ops it calls are compiled while files can be opened). */
static bool is_baseline(const ks_task *task, const ks_candidate *cand) {
  char want[PATH_MAX + 32], dd[PATH_MAX + 8];
  char a[PATH_MAX], b[PATH_MAX], d[PATH_MAX];
  snprintf(want, sizeof want, "%.4000s/baseline/mlx.py", task->dir);
  snprintf(dd, sizeof dd, "%.4000s/tasks/", ks_data_dir());
  return realpath(want, a) && realpath(cand->path, b) && !strcmp(a, b) &&
         realpath(dd, d) && !strncmp(a, d, strlen(d));
}

static ks_code mlx_build(const ks_task *task, const ks_candidate *cand,
                         const char *cache_dir, double timeout_s,
                         ks_artifact *out, ks_err *err) {
  if (!strcmp(cand->backend, "c")) /* the task's reference */
    return ks_backend_c.build(task, cand, cache_dir, timeout_s, out, err);
  memset(out, 0, sizeof *out);
  char form[16], kernel[16];
  header_key(cand->source, "form", form, sizeof form, "kernel");
  header_key(cand->source, "kernel", kernel, sizeof kernel, "cuda");
  if (strcmp(form, "kernel") && strcmp(form, "ops"))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: form=%s; an MLX candidate is form=kernel (a "
                      "cuda_kernel/metal_kernel body, the default) or form=ops "
                      "(Python over MLX ops)",
                      cand->path, form);
  run_probe();
  if (!g_probe.ok)
    return ks_err_set(err, KS_ERR_ENV, "mlx: %s", g_probe.error);
  if (!strcmp(form, "kernel") && !strcmp(g_probe.device, "cpu"))
    return ks_err_set(
        err, KS_ERR_ENV,
        "%s: MLX custom kernels (mx.fast.%s_kernel) run only on "
        "a GPU and MLX %s here has only the CPU; evaluate it on a "
        "machine with mlx[cuda] (Linux, NVIDIA) or on Apple "
        "silicon (form=ops candidates run on the CPU)",
        cand->path, kernel, g_probe.version);
  json_t *params = json_object();
  for (int i = 0; i < cand->n_set; i++)
    json_object_set_new(params, cand->set[i].name,
                        json_string(cand->set[i].value));
  ks_buf key;
  ks_buf_init(&key);
  ks_buf_puts(&key, MLX_FORMAT);
  ks_buf_puts(&key, cand->source);
  char *pj = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
  ks_buf_puts(&key, pj ? pj : "");
  free(pj);
  bool trusted = !strcmp(form, "ops") && is_baseline(task, cand);
  ks_buf_puts(&key, trusted ? "baseline" : "candidate");
  ks_buf_puts(&key, g_probe.device);
  ks_buf_puts(&key, g_probe.version);
  ks_hash_hex(ks_hash64(key.data, key.len, 0x6d6c78ULL), out->hash);
  ks_buf_free(&key);
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.3800s/build/%s", cache_dir, out->hash);
  snprintf(out->path, sizeof out->path, "%.4000s/artifact.json", dir);
  ks_code rc = KS_OK;
  if (ks_file_exists(out->path)) {
    out->cached = true;
  } else {
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:O, s:b}", "format", MLX_FORMAT, "path",
        cand->path, "source", cand->source, "entry", cand->entry, "device",
        g_probe.device, "params", params, "trusted_baseline", trusted);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    rc = ks_mkdir_p(dir, err);
    if (!rc && !text)
      rc = ks_err_set(err, KS_ERR_NOMEM, "%s: cannot format JSON", out->path);
    if (!rc)
      rc = ks_write_file_atomic(out->path, text, strlen(text), err);
    free(text);
    json_decref(j);
  }
  json_decref(params);
  return rc;
}

static ks_code mlx_executor_argv(char store[][PATH_MAX], char **argv,
                                 ks_err *err) {
  ks_strlcpy(store[0], python(), PATH_MAX);
  ks_strlcpy(store[1], "-B", PATH_MAX); /* no __pycache__ in the data folder */
  script(store[2], PATH_MAX, "executor.py");
  if (!ks_file_exists(store[2]))
    return ks_err_set(err, KS_ERR_ENV,
                      "%s: missing (the MLX executor); set KSEARCH_HOME to the "
                      "ksearch folder",
                      store[2]);
  for (int i = 0; i < 3; i++)
    argv[i] = store[i];
  argv[3] = NULL;
  return KS_OK;
}

/* ksearch-runner never hosts MLX candidates: the judge starts the Python
 * executor for them. A job that reaches the C runner anyway is refused. */
static ks_code mlx_load(const char *artifact, const ks_task *task,
                        void **handle, ks_err *err) {
  (void)artifact;
  (void)task;
  *handle = NULL;
  return ks_err_set(err, KS_ERR_ENV,
                    "the MLX backend runs in mlx/executor.py, not in "
                    "ksearch-runner");
}

static void mlx_run(void *h, void *const *bufs, const int64_t *axes,
                    const double *scalars) {
  (void)h;
  (void)bufs;
  (void)axes;
  (void)scalars;
}

static void mlx_noop(void *h) { (void)h; }

const ks_backend_i ks_backend_mlx = {
    .name = "mlx",
    .description = "MLX: mx.fast.cuda_kernel / metal_kernel bodies on an MLX "
                   "GPU, and MLX ops (baselines), in a Python executor",
    .probe = mlx_probe,
    .build = mlx_build,
    .load = mlx_load,
    .run = mlx_run,
    .sync = mlx_noop,
    .unload = mlx_noop,
    .device_class = mlx_device_class,
    .executor_argv = mlx_executor_argv,
    .executor_probes = true,
    .spec_target = mlx_spec_target,
};
