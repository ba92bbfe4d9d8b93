/* eval.c — the evaluator: reference once, then candidates (see eval.h).
 *
 * Reference outputs live in <cache>/ref/<task hash>-<reference build hash>/,
 * one file per (workload, seed, output), written by the reference in its own
 * runner and renamed into place only after that runner finished cleanly, so
 * a crash never leaves a half-written reference behind.
 */
#include "eval/eval.h"
#include "spec/validator.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ks_evaluator {
  const ks_task *task;
  ks_eval_opts opts;
  const ks_backend_i *be;
  char cache_dir[PATH_MAX];
  char ref_dir[PATH_MAX];
  ks_job base; /* filled for candidates; artifact set per candidate */
  double ref_time_ns[KS_MAX_WORKLOADS];     /* median per workload */
  double ref_time_ns_min[KS_MAX_WORKLOADS]; /* fastest rep: the score's base */
  double ref_total_s; /* one call of every workload, for time limits */
  double bytes_max;
  ks_roofline roof;
  bool have_roof;
  ks_device_class dc; /* which workloads run: task.json "device" */
  double base_ns[KS_MAX_WORKLOADS]; /* device baseline, fastest rep */
  bool have_base;
};

static const uint64_t k_seeds[KS_MAX_SEEDS] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint64_t k_timing_seed = 1000003;

const char *ks_eval_status_name(ks_eval_status s) {
  static const char *const names[] = {"ok",        "compile_error", "rejected",
                                      "incorrect", "crash",         "timeout",
                                      "oom"};
  return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

void ks_eval_opts_default(ks_eval_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = "c";
  o->threads = 0;
  o->n_seeds = 3;
  o->topt.min_time_s = 0.2;
  o->topt.min_reps = 10;
  o->topt.max_reps = 1000;
  o->topt.warmup = 2;
  o->topt.max_wall_s = 1.0;
  o->topt.flush = true;
  o->timing = true;
  o->build_timeout_s = 120;
}

const ks_roofline *ks_evaluator_roofline(const ks_evaluator *ev) {
  return ev->have_roof ? &ev->roof : NULL;
}

/* Renames the reference runner's "<file>.tmp.<pid>" outputs into place, or
 * deletes them when the runner failed. */
static void settle_ref_files(const char *dir, bool keep) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    char *tmp = strstr(e->d_name, ".tmp.");
    if (!tmp)
      continue;
    char from[PATH_MAX], to[PATH_MAX];
    snprintf(from, sizeof from, "%.3800s/%s", dir, e->d_name);
    snprintf(to, sizeof to, "%.3800s/%.*s", dir, (int)(tmp - e->d_name),
             e->d_name);
    if (keep)
      rename(from, to);
    else
      unlink(from);
  }
  closedir(d);
}

static double task_bytes(const ks_task *t, const ks_workload *w) {
  double b = 0;
  for (int i = 0; i < t->n_inputs; i++)
    b += (double)ks_tensor_numel(t, &t->inputs[i], w) *
         (double)ks_dtype_size(t->inputs[i].dtype);
  for (int i = 0; i < t->n_outputs; i++)
    b += (double)ks_tensor_numel(t, &t->outputs[i], w) *
         (double)ks_dtype_size(t->outputs[i].dtype);
  return b;
}

static void fill_job(ks_evaluator *ev, ks_job *job) {
  memset(job, 0, sizeof *job);
  ks_strlcpy(job->task_path, ev->task->json_path, sizeof job->task_path);
  ks_strlcpy(job->backend, ev->be->name, sizeof job->backend);
  ks_strlcpy(job->ref_dir, ev->ref_dir, sizeof job->ref_dir);
  job->n_workloads = 0;
  for (int i = 0; i < ev->task->n_workloads; i++)
    if (ks_workload_applies(&ev->task->workloads[i], ev->dc))
      job->workloads[job->n_workloads++] = i;
  job->n_seeds = ev->opts.n_seeds;
  for (int i = 0; i < job->n_seeds; i++)
    job->seeds[i] = k_seeds[i];
  job->timing_seed = k_timing_seed;
  job->threads = ev->opts.threads;
  job->topt = ev->opts.topt;
  job->timing = ev->opts.timing;
  /* inputs + their copies + outputs + reference copies, plus room for the
   * runtime, thread stacks and the cache-flush buffer */
  job->mem_limit_bytes = (int64_t)(2.2 * ev->bytes_max) + (2LL << 30);
}

/* Time limit of one candidate runner: generous multiples of the reference,
 * plus the timing budget, plus input generation. */
static double derived_timeout(const ks_evaluator *ev) {
  if (ev->opts.timeout_s > 0)
    return ev->opts.timeout_s;
  double t = 10;
  int calls = ev->opts.n_seeds + ev->opts.topt.warmup + 2;
  for (int i = 0; i < ev->task->n_workloads; i++) {
    double ref = ev->ref_time_ns[i] * 1e-9;
    double per = ref * 20 > 0.05 ? ref * 20 : 0.05;
    t += calls * per + (ev->opts.timing ? ev->opts.topt.max_wall_s + 1 : 0);
    t += task_bytes(ev->task, &ev->task->workloads[i]) * 3e-8; /* inputs */
  }
  return t;
}

/* The device baseline (DESIGN.md: Evaluation, baselines): the plain kernel
 * or library call of tasks/<t>/baseline/<backend>.<ext>, evaluated like a
 * candidate in the same executor, so that speedups on a device compare like
 * with like. Absent: nothing to do. A baseline that fails is the task's
 * error. */
static ks_code eval_baseline(ks_evaluator *ev, ks_err *err) {
  static const char *const exts[] = {"cu", "cl", "c"};
  char path[PATH_MAX];
  bool found = false;
  for (size_t i = 0; i < sizeof exts / sizeof *exts && !found; i++) {
    snprintf(path, sizeof path, "%.3000s/baseline/%s.%s", ev->task->dir,
             ev->be->name, exts[i]);
    found = ks_file_exists(path);
  }
  if (!found)
    return KS_OK;
  ks_candidate c;
  ks_code rc = ks_candidate_load(path, ev->task->name, &c, err);
  if (rc)
    return rc;
  ks_candidate_fill_defaults(&c);
  ks_eval_result *res = ks_xcalloc(1, sizeof *res);
  rc = ks_evaluate(ev, &c, res, err);
  ks_candidate_free(&c);
  if (!rc && res->status != KS_EVAL_OK)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: the task's baseline failed (%s): "
                    "%.1500s",
                    path, ks_eval_status_name(res->status), res->error);
  for (int i = 0; !rc && i < res->n_workloads; i++) {
    const ks_wl_result *w = &res->wl[i];
    ev->base_ns[i] = w->device_ns_min > 0 ? w->device_ns_min : w->time_ns_min;
  }
  ev->have_base = !rc;
  ks_eval_result_free(res);
  free(res);
  return rc;
}

ks_code ks_evaluator_new(const ks_task *task, const ks_eval_opts *opts,
                         ks_evaluator **out, ks_err *err) {
  *out = NULL;
  ks_evaluator *ev = ks_xcalloc(1, sizeof *ev);
  ev->task = task;
  ev->opts = *opts;
  if (ev->opts.threads <= 0)
    ev->opts.threads = ks_nproc();
  if (ev->opts.n_seeds < 1 || ev->opts.n_seeds > KS_MAX_SEEDS) {
    free(ev);
    return ks_err_set(err, KS_ERR_INPUT, "--seeds must be 1..%d", KS_MAX_SEEDS);
  }
  ev->be = ks_backend_get(opts->backend);
  if (!ev->be) {
    free(ev);
    return ks_err_set(err, KS_ERR_INPUT,
                      "unknown backend \"%s\"; available: c, opencl, cuda (the "
                      "MLX backend is not implemented yet)",
                      opts->backend);
  }
  ev->dc = ks_backend_device_class(ev->be);
  char dev[512];
  ks_code rc = ev->be->probe(dev, sizeof dev, err);
  if (!rc)
    rc = ks_cache_dir(ev->cache_dir, sizeof ev->cache_dir, err);
  for (int i = 0; i < task->n_workloads; i++) {
    double b = task_bytes(task, &task->workloads[i]);
    if (b > ev->bytes_max)
      ev->bytes_max = b;
  }
  /* the reference, built like any candidate */
  ks_candidate ref;
  ks_artifact art;
  memset(&art, 0, sizeof art);
  bool have_ref = false;
  if (!rc)
    rc = ks_candidate_load(task->reference_path, task->name, &ref, err);
  if (!rc) {
    have_ref = true;
    strcpy(ref.backend, "c");
    rc = ev->be->build(task, &ref, ev->cache_dir, opts->build_timeout_s, &art,
                       err);
    if (rc == KS_ERR_CANDIDATE) {
      ks_err_prefix(err, "%s: the task's reference does not build: ",
                    task->reference_path);
      rc = err->code = KS_ERR_INPUT;
    }
  }
  if (have_ref)
    ks_candidate_free(&ref);
  char th[17];
  ks_hash_hex(task->hash, th);
  snprintf(ev->ref_dir, sizeof ev->ref_dir, "%.3000s/ref/%s-%s", ev->cache_dir,
           th, art.hash);
  if (!rc)
    rc = ks_mkdir_p(ev->ref_dir, err);
  if (rc) {
    ks_artifact_free(&art);
    free(ev);
    return rc;
  }
  /* reference outputs for every (workload, seed) + reference timing */
  ks_job job;
  fill_job(ev, &job);
  job.reference = true;
  ks_strlcpy(job.artifact, art.path, sizeof job.artifact);
  job.cpu_limit_s = 0;
  if (ev->dc == KS_DEV_GPU) {
    /* GPU-sized workloads take the single-threaded C reference seconds per
     * call; on a GPU the speedup that counts is over the device baseline,
     * so the reference is timed once */
    job.topt.warmup = 0;
    job.topt.min_reps = job.topt.max_reps = 1;
    job.topt.min_time_s = 0;
  }
  ks_artifact_free(&art);
  double timeout = opts->timeout_s > 0 ? opts->timeout_s * 10 : 600;
  if (!opts->quiet)
    ks_log(KS_LOG_INFO, "reference: %s outputs and timing (%d workloads)",
           task->name, task->n_workloads);
  ks_runner_outcome o;
  rc = ks_runner_exec(&job, timeout, &o, err);
  if (!rc) {
    char reason[1024];
    ks_eval_status st =
        ks_runner_classify(task, &job, &o, timeout, reason, sizeof reason);
    settle_ref_files(ev->ref_dir, st == KS_EVAL_OK);
    if (st != KS_EVAL_OK) {
      rc = ks_err_set(err,
                      o.setup_code == KS_ERR_ENV ? KS_ERR_ENV : KS_ERR_INPUT,
                      "%s: the task's reference failed (%s): %s\n%.500s",
                      task->reference_path, ks_eval_status_name(st), reason,
                      o.log.data ? o.log.data : "");
    } else {
      for (int i = 0; i < o.n_results; i++) {
        ev->ref_time_ns[o.results[i].index] = o.results[i].time_ns_median;
        ev->ref_time_ns_min[o.results[i].index] = o.results[i].time_ns_min;
        ev->ref_total_s += o.results[i].time_ns_median * 1e-9;
      }
    }
  }
  ks_runner_outcome_free(&o);
  if (rc) {
    free(ev);
    return rc;
  }
  ks_err rerr;
  if (ks_roofline_get(ev->be->name, ev->opts.threads, false, &ev->roof,
                      &rerr) == KS_OK)
    ev->have_roof = true;
  else
    ks_log(KS_LOG_INFO, "no roofline: %s", rerr.msg);
  ks_err berr;
  if (eval_baseline(ev, &berr)) /* scores then stay over the reference */
    ks_log(KS_LOG_INFO, "no device baseline: %s", berr.msg);
  *out = ev;
  return KS_OK;
}

void ks_evaluator_free(ks_evaluator *ev) { free(ev); }

const double *ks_evaluator_ref_times(const ks_evaluator *ev) {
  return ev->ref_time_ns;
}

void ks_eval_result_free(ks_eval_result *res) { ks_buf_free(&res->build_log); }

ks_code ks_evaluate(ks_evaluator *ev, ks_candidate *cand, ks_eval_result *res,
                    ks_err *err) {
  memset(res, 0, sizeof *res);
  const ks_task *task = ev->task;
  res->threads = ev->opts.threads;
  res->device_class = ev->dc;
  res->n_workloads = task->n_workloads;
  for (int i = 0; i < task->n_workloads; i++) {
    res->wl[i].index = i;
    res->wl[i].ref_time_ns_median = ev->ref_time_ns[i];
    res->wl[i].ref_time_ns_min = ev->ref_time_ns_min[i];
  }
  if (strcmp(cand->backend, ev->be->name)) {
    res->status = KS_EVAL_REJECTED;
    snprintf(res->error, sizeof res->error,
             "%s is a candidate for backend \"%s\", evaluated on \"%s\"; use "
             "--backend %s or fix its `// ksearch: backend=` line",
             cand->path, cand->backend, ev->be->name, cand->backend);
    return KS_OK;
  }
  /* the spec: primitives the target lacks are rejected before any
   * compiler runs (DESIGN.md: Spec and concept catalogue) */
  if (!ev->opts.no_spec_check) {
    ks_spec_violation v[16];
    int nv = 0;
    ks_err verr;
    if (ks_spec_validate(ev->be->name, cand->source, v, 16, &nv, &verr) ==
            KS_OK &&
        nv > 0) {
      res->status = KS_EVAL_REJECTED;
      size_t off = (size_t)snprintf(
          res->error, sizeof res->error,
          "uses primitives the %s target does not have (spec check):",
          ev->be->name);
      for (int i = 0; i < nv && off < sizeof res->error; i++)
        off += (size_t)snprintf(res->error + off, sizeof res->error - off,
                                " line %d: %s (%s);", v[i].line, v[i].ident,
                                v[i].suggestion);
      return KS_OK;
    }
  }
  ks_artifact art;
  ks_err berr;
  ks_code rc = ev->be->build(task, cand, ev->cache_dir,
                             ev->opts.build_timeout_s, &art, &berr);
  ks_strlcpy(res->artifact_hash, art.hash, sizeof res->artifact_hash);
  res->build_cached = art.cached;
  res->build_s = art.build_s;
  res->build_log = art.log;
  if (rc == KS_ERR_CANDIDATE) {
    res->status = KS_EVAL_COMPILE_ERROR;
    ks_strlcpy(res->error, berr.msg, sizeof res->error);
    return KS_OK;
  }
  if (rc) {
    *err = berr;
    return rc;
  }
  ks_job job;
  fill_job(ev, &job);
  ks_strlcpy(job.artifact, art.path, sizeof job.artifact);
  double timeout = derived_timeout(ev);
  job.cpu_limit_s = timeout * job.threads + 5;
  ks_runner_outcome o;
  double t0 = ks_now();
  rc = ks_runner_exec(&job, timeout, &o, err);
  res->run_s = ks_now() - t0;
  if (rc) {
    ks_runner_outcome_free(&o);
    return rc;
  }
  if (o.setup_code && o.setup_code != KS_ERR_CANDIDATE && !o.loaded) {
    rc = ks_err_set(err, (ks_code)o.setup_code, "ksearch-runner: %s",
                    o.setup_error);
    ks_runner_outcome_free(&o);
    return rc;
  }
  res->status = ks_runner_classify(task, &job, &o, timeout, res->error,
                                   sizeof res->error);
  for (int i = 0; i < o.n_results; i++) {
    ks_wl_result *dst = &res->wl[o.results[i].index];
    double ref = dst->ref_time_ns_median, ref_min = dst->ref_time_ns_min;
    *dst = o.results[i];
    dst->ref_time_ns_median = ref;
    dst->ref_time_ns_min = ref_min;
  }
  ks_runner_outcome_free(&o);
  res->correct = res->status == KS_EVAL_OK;
  double logsum = 0, baselog = 0;
  int n_run = 0;
  for (int i = 0; i < task->n_workloads; i++) {
    ks_wl_result *w = &res->wl[i];
    if (!ks_workload_applies(&task->workloads[i], ev->dc))
      continue;
    n_run++;
    /* the fastest rep, not the median: on a shared machine other processes
     * only ever add time, and the minimum moves far less between runs (the
     * roofline ceiling is a best case too); on a GPU: the kernels' own
     * event time, without launch and synchronization overhead (a CPU
     * OpenCL device keeps wall clock, like the C reference) */
    double t = w->time_ns_min > 0 ? w->time_ns_min : w->time_ns_median;
    if (w->device_ns_min > 0 && ev->dc == KS_DEV_GPU)
      t = w->device_ns_min;
    if (t > 0 && ev->have_base && ev->base_ns[i] > 0) {
      w->baseline_ns_min = ev->base_ns[i];
      w->baseline_speedup = ev->base_ns[i] / t;
    }
    baselog += w->baseline_speedup > 0 ? log(w->baseline_speedup) : 0;
    if (t > 0) {
      const ks_workload *wl = &task->workloads[i];
      double bytes = ks_task_cost_bytes(task, wl);
      double flops = ks_task_cost_flops(task, wl);
      w->gbps = bytes / t;
      w->gflops = flops / t;
      if (ev->have_roof)
        w->roofline_fraction =
            ks_roofline_fraction(&ev->roof, bytes, flops, t * 1e-9);
      double ref =
          w->ref_time_ns_min > 0 ? w->ref_time_ns_min : w->ref_time_ns_median;
      if (ref > 0)
        w->speedup = ref / t;
    }
    logsum += w->speedup > 0 ? log(w->speedup) : 0;
  }
  n_run = n_run > 0 ? n_run : 1;
  res->score = res->correct && ev->opts.timing ? exp(logsum / n_run) : 0;
  res->baseline_score = res->correct && ev->opts.timing && ev->have_base
                            ? exp(baselog / n_run)
                            : 0;
  /* on a device with a baseline, the speedup that counts is over it */
  res->reference_score = res->score;
  if (ev->have_base)
    res->score = res->baseline_score;
  return KS_OK;
}

static json_t *num(double v) { return json_real(isfinite(v) ? v : 0); }

json_t *ks_eval_result_to_json(const ks_task *task, const ks_eval_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(ks_eval_status_name(r->status)));
  json_object_set_new(o, "correct", json_boolean(r->correct));
  json_object_set_new(o, "score", num(r->score));
  if (r->baseline_score > 0) {
    json_object_set_new(o, "baseline_score", num(r->baseline_score));
    json_object_set_new(o, "reference_score", num(r->reference_score));
  }
  json_t *arr = json_array();
  for (int i = 0; i < r->n_workloads; i++) {
    const ks_wl_result *w = &r->wl[i];
    /* workloads of another device class ("device" in task.json) */
    if (!ks_workload_applies(&task->workloads[i], r->device_class))
      continue;
    json_t *axes = json_object();
    for (int a = 0; a < task->n_axes; a++)
      if (!task->axes[a].is_const)
        json_object_set_new(axes, task->axes[a].name,
                            json_integer(task->workloads[i].axis[a]));
    json_t *wj = json_object();
    json_object_set_new(wj, "axes", axes);
    json_object_set_new(wj, "correct", json_boolean(w->ran && w->correct));
    json_object_set_new(wj, "max_abs_err", num(w->max_abs_err));
    json_object_set_new(wj, "max_rel_err", num(w->max_rel_err));
    json_object_set_new(wj, "time_ns_median", num(w->time_ns_median));
    json_object_set_new(wj, "time_ns_min", num(w->time_ns_min));
    json_object_set_new(wj, "time_ns_iqr", num(w->time_ns_iqr));
    json_object_set_new(wj, "reps", json_integer(w->reps));
    json_object_set_new(wj, "reference_time_ns_median",
                        num(w->ref_time_ns_median));
    json_object_set_new(wj, "reference_time_ns_min", num(w->ref_time_ns_min));
    json_object_set_new(wj, "speedup", num(w->speedup));
    json_object_set_new(wj, "gbps", num(w->gbps));
    json_object_set_new(wj, "gflops", num(w->gflops));
    json_object_set_new(wj, "roofline_fraction", num(w->roofline_fraction));
    json_object_set_new(wj, "index", json_integer(i));
    if (w->device_ns_min > 0) {
      json_object_set_new(wj, "device_time_ns_median",
                          num(w->device_ns_median));
      json_object_set_new(wj, "device_time_ns_min", num(w->device_ns_min));
    }
    if (w->baseline_ns_min > 0) {
      json_object_set_new(wj, "baseline_time_ns_min", num(w->baseline_ns_min));
      json_object_set_new(wj, "baseline_speedup", num(w->baseline_speedup));
    }
    if (w->reason[0])
      json_object_set_new(wj, "reason", json_string(w->reason));
    json_array_append_new(arr, wj);
  }
  json_object_set_new(o, "workloads", arr);
  json_object_set_new(o, "error", json_string(r->error));
  json_object_set_new(o, "threads", json_integer(r->threads));
  json_object_set_new(o, "build_cached", json_boolean(r->build_cached));
  json_object_set_new(o, "build_s", num(r->build_s));
  return o;
}
