/* backend_c.c — the CPU backend: C candidates compiled by the system C
 * compiler into a shared object, loaded with dlopen inside the runner.
 *
 * build: candidate.c + a generated shim (task/signature.h) ->
 *   $CC -O3 -march=native -fopenmp -fPIC -shared -DPARAM=V ... -> artifact.so
 * in a child with a time limit, cached under <cache>/build/<hash>/ where the
 * hash covers the source, the shim, the flags and the compiler's identity, so
 * an evaluation of an already-built candidate never rebuilds.
 */
#include "backend/backend.h"
#include "task/signature.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *cc_path(void) {
  const char *cc = getenv("CC");
  return cc && *cc ? cc : "cc";
}

static ks_code c_probe(char *device, size_t n, ks_err *err) {
  char *argv[] = {(char *)cc_path(), "--version", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result r;
  ks_code rc = ks_run_capture(argv, NULL, 20, &log, &r, err);
  if (rc == KS_OK && !(r.exited && r.exit_status == 0))
    rc = ks_err_set(err, KS_ERR_ENV,
                    "%s --version failed; install a C compiler (apt-get "
                    "install gcc) or set CC",
                    cc_path());
  if (rc == KS_OK) {
    char *nl = log.data ? strchr(log.data, '\n') : NULL;
    if (nl)
      *nl = 0;
    snprintf(device, n, "%s (%s)", log.data ? log.data : "cc", cc_path());
  }
  ks_buf_free(&log);
  return rc;
}

/* The compiler's identity is part of the build hash: a new compiler must not
 * reuse old artifacts. Computed once per process. */
static uint64_t compiler_id(void) {
  static uint64_t id;
  if (!id) {
    char dev[512] = "";
    ks_err e;
    c_probe(dev, sizeof dev, &e);
    id = ks_hash_str(dev, 99) | 1;
  }
  return id;
}

static ks_code c_build(const ks_task *task, const ks_candidate *cand,
                       const char *cache_dir, double timeout_s,
                       ks_artifact *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  ks_buf shim, key;
  ks_buf_init(&shim);
  ks_buf_init(&key);
  ks_shim_c(task, cand->entry, &shim);
  const char *flags[] = {"-O3",     "-march=native", "-fopenmp", "-fPIC",
                         "-shared", "-std=gnu11",    "-w"};
  const int nflags = (int)(sizeof flags / sizeof *flags);
  ks_buf_puts(&key, cand->source);
  ks_buf_puts(&key, shim.data);
  for (int i = 0; i < nflags; i++)
    ks_buf_puts(&key, flags[i]);
  for (int i = 0; i < cand->n_set; i++)
    ks_buf_printf(&key, "-D%s=%s", cand->set[i].name, cand->set[i].value);
  ks_hash_hex(ks_hash64(key.data, key.len, compiler_id()), out->hash);
  ks_buf_free(&key);

  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.3800s/build/%s", cache_dir, out->hash);
  snprintf(out->path, sizeof out->path, "%.4000s/artifact.so", dir);
  if (ks_file_exists(out->path)) {
    out->cached = true;
    ks_buf_free(&shim);
    return KS_OK;
  }
  ks_code rc = ks_mkdir_p(dir, err);
  char src[PATH_MAX], shim_path[PATH_MAX], tmp_so[PATH_MAX];
  snprintf(src, sizeof src, "%.4000s/candidate.c", dir);
  snprintf(shim_path, sizeof shim_path, "%.4000s/shim.c", dir);
  snprintf(tmp_so, sizeof tmp_so, "%.4000s/artifact.so.%d", dir, (int)getpid());
  if (!rc)
    rc = ks_write_file_atomic(src, cand->source, strlen(cand->source), err);
  if (!rc)
    rc = ks_write_file_atomic(shim_path, shim.data, shim.len, err);
  ks_buf_free(&shim);
  if (rc)
    return rc;

  char *argv[64];
  char defs[KS_MAX_PARAMS][160];
  int a = 0;
  argv[a++] = (char *)cc_path();
  for (int i = 0; i < nflags; i++)
    argv[a++] = (char *)flags[i];
  for (int i = 0; i < cand->n_set && i < KS_MAX_PARAMS; i++) {
    snprintf(defs[i], sizeof defs[i], "-D%s=%s", cand->set[i].name,
             cand->set[i].value);
    argv[a++] = defs[i];
  }
  argv[a++] = src;
  argv[a++] = shim_path;
  argv[a++] = "-o";
  argv[a++] = tmp_so;
  argv[a++] = "-lm";
  argv[a] = NULL;
  ks_proc_result r;
  double t0 = ks_now();
  rc = ks_run_capture(argv, dir, timeout_s, &out->log, &r, err);
  out->build_s = ks_now() - t0;
  if (rc)
    return rc;
  if (r.timed_out) {
    unlink(tmp_so);
    return ks_err_set(err, KS_ERR_CANDIDATE,
                      "compile time limit of %.0f s exceeded", timeout_s);
  }
  if (!(r.exited && r.exit_status == 0)) {
    unlink(tmp_so);
    return ks_err_set(err, KS_ERR_CANDIDATE, "compiler failed:\n%.1800s",
                      out->log.data ? out->log.data : "(no output)");
  }
  if (rename(tmp_so, out->path) != 0)
    return ks_err_set(err, KS_ERR_IO, "%s: %s", out->path, strerror(errno));
  return KS_OK;
}

typedef struct c_handle {
  void *dl;
  void (*call)(void *const *, const int64_t *, const double *);
} c_handle;

static ks_code c_load(const char *artifact, const ks_task *task, void **h,
                      ks_err *err) {
  (void)task;
  void *dl = dlopen(artifact, RTLD_NOW | RTLD_LOCAL);
  if (!dl)
    return ks_err_set(err, KS_ERR_CANDIDATE, "cannot load %s: %s", artifact,
                      dlerror());
  c_handle *ch = ks_xcalloc(1, sizeof *ch);
  ch->dl = dl;
  *(void **)&ch->call = dlsym(dl, "ks_shim_call");
  if (!ch->call) {
    dlclose(dl);
    free(ch);
    return ks_err_set(err, KS_ERR_CANDIDATE, "%s has no ks_shim_call",
                      artifact);
  }
  *h = ch;
  return KS_OK;
}

static void c_run(void *h, void *const *bufs, const int64_t *axes,
                  const double *scalars) {
  ((c_handle *)h)->call(bufs, axes, scalars);
}

static void c_sync(void *h) { (void)h; }

static void c_unload(void *h) {
  c_handle *ch = h;
  if (ch) {
    dlclose(ch->dl);
    free(ch);
  }
}

const ks_backend_i ks_backend_c = {
    .name = "c",
    .description = "CPU: C compiled by the system compiler (-O3 "
                   "-march=native, OpenMP)",
    .probe = c_probe,
    .build = c_build,
    .load = c_load,
    .run = c_run,
    .sync = c_sync,
    .unload = c_unload,
    .load_sandboxed = true,
};
