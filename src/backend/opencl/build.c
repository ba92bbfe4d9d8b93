/* build.c — the parent side of the OpenCL backend (DESIGN.md: Backend
 * interface; the whole story: backend_opencl.c's top comment).
 *
 * The candidate's launch lines (launch.h) are evaluated for every workload of
 * the task; the source is compiled with -DPARAM=V in a child (`ksearch-runner
 * --opencl-build`, tool.c) under the build time limit, with PoCL's cache
 * pointed at a fresh folder so a PoCL-cached build never looks instantaneous;
 * the program binary (CL_PROGRAM_BINARIES) is cached under
 * <cache>/build/<hash>/ like the C artifacts, with artifact.json naming it,
 * the device identity, the launch lines and the parameters. Two passes ask
 * PoCL for every work-group specialization the workloads will use, so the
 * sandboxed runner never compiles (backend_opencl.c). A reference build
 * (backend=c) is handed to the c backend.
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

/* the two build passes' binaries: large-grid, then "-smallgrid" variants */
static const char *const k_bin_names[2] = {"program.bin",
                                           "program.smallgrid.bin"};

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
      if (g[k].skip) /* not launched for this workload: nothing to build */
        continue;
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
  ks_code rc = ks_artifact_write_json(req, j, err);
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

ks_code ks_ocl_build(const ks_task *task, const ks_candidate *cand,
                     const char *cache_dir, double timeout_s, ks_artifact *out,
                     ks_err *err) {
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
  if ((rc = ks_ocl_pick_info(&dev, err))) { /* no driver in ksearch */
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
  ks_buf_puts(&key, KS_OCL_FORMAT);
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
                  KS_OCL_FORMAT, "binaries", k_bin_names[0], k_bin_names[1],
                  "identity", dev.identity, "entry", cand->entry, "launch",
                  lines, "params", params_json(pi), "scratch", pi->scratch);
    rc = ks_artifact_write_json(out->path, j, err);
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
