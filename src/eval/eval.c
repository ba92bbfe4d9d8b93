/* eval.c — the evaluator: reference once, then candidates (see eval.h).
 *
 * Reference outputs live in <cache>/ref/<task hash>-<reference build hash>/,
 * one file per (workload, seed, output), written by the judge from the
 * reference's executor (renamed into place whole). The seeds are salted per
 * reference folder (a random `salt` file there, which no executor can read),
 * so no candidate can carry the answers of known seeds in its source.
 */
#include "eval/eval.h"
#include "eval/eval_figures.h"
#include "eval/ref_times.h"
#include "eval/sandbox.h"
#include "spec/validator.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

struct ks_evaluator {
  const ks_task *task;
  ks_eval_opts opts;
  const ks_backend_i *be;
  char cache_dir[PATH_MAX];
  char ref_dir[PATH_MAX];
  uint64_t seeds[KS_MAX_SEEDS], set_seed0;
  int n_sets[KS_MAX_WORKLOADS];
  double ref_time_ns[KS_MAX_WORKLOADS];     /* median per workload */
  double ref_time_ns_min[KS_MAX_WORKLOADS]; /* fastest rep: the score's base */
  double ref_total_s; /* one call of every workload, for time limits */
  double bytes_max, bytes_sum;
  ks_roofline roof;
  bool have_roof;
  bool landlock_warned;
  ks_input_cache inputs;
  ks_device_class dc; /* which workloads run: task.json "device" */
  double base_ns[KS_MAX_WORKLOADS]; /* device baseline, fastest rep */
  bool have_base;
  /* the anchor timed beside every candidate: the reference's artifact on
   * host backends, the device baseline's on devices ("" none) */
  char anchor_path[PATH_MAX];
  const char *anchor_backend;
};

const char *ks_eval_status_name(ks_eval_status s) {
  static const char *const names[] = {"ok",        "compile_error", "rejected",
                                      "incorrect", "crash",         "timeout",
                                      "oom",       "implausible"};
  return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

void ks_eval_opts_default(ks_eval_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = "c";
  o->threads = 0;
  o->n_seeds = 3;
  o->topt.min_time_s = 0.2;
  o->topt.min_reps = 10;
  o->topt.max_reps = 12;
  o->topt.warmup = 2;
  o->topt.max_wall_s = 1.0;
  o->topt.flush = true;
  o->timing = true;
  o->build_timeout_s = 120;
}

const ks_roofline *ks_evaluator_roofline(const ks_evaluator *ev) {
  return ev->have_roof ? &ev->roof : NULL;
}

static double tensor_bytes(const ks_task *t, const ks_workload *w) {
  double b = 0;
  for (int i = 0; i < t->n_inputs; i++)
    b += (double)ks_tensor_numel(t, &t->inputs[i], w) *
         (double)ks_dtype_size(t->inputs[i].dtype);
  for (int i = 0; i < t->n_outputs; i++)
    b += (double)ks_tensor_numel(t, &t->outputs[i], w) *
         (double)ks_dtype_size(t->outputs[i].dtype);
  return b;
}

/* The folder's salt: created once with getrandom, read by the judge only. */
static ks_code ref_salt(const char *dir, uint64_t *salt, ks_err *err) {
  char path[PATH_MAX + 8], *txt = NULL;
  snprintf(path, sizeof path, "%s/salt", dir);
  if (ks_read_file(path, &txt, NULL, NULL) == KS_OK) {
    *salt = strtoull(txt, NULL, 16);
    free(txt);
    if (*salt)
      return KS_OK;
  }
  if (getrandom(salt, sizeof *salt, 0) != sizeof *salt || !*salt)
    *salt = (uint64_t)ks_now_ns() | 1;
  char hex[17];
  ks_hash_hex(*salt, hex);
  return ks_write_file_atomic(path, hex, 16, err);
}

static void fill_plan(ks_evaluator *ev, ks_judge_plan *p) {
  memset(p, 0, sizeof *p);
  p->task = ev->task;
  p->backend = ev->be->name;
  p->threads = ev->opts.threads;
  p->n_seeds = ev->opts.n_seeds;
  memcpy(p->seeds, ev->seeds, sizeof p->seeds);
  p->set_seed0 = ev->set_seed0;
  for (int i = 0; i < ev->task->n_workloads; i++)
    p->n_sets[i] = ev->opts.timing ? ev->n_sets[i] : 0;
  for (int i = 0; i < ev->task->n_workloads; i++)
    p->skip[i] = !ks_workload_applies(&ev->task->workloads[i], ev->dc);
  p->ref_dir = ev->ref_dir;
  p->inputs = &ev->inputs;
  p->evict = ev->opts.topt.flush;
  /* the outputs and inputs are memfds mapped beside the runtime: their
   * size, plus room for the runtime, thread stacks and a flush buffer */
  p->mem_limit_bytes = (int64_t)(1.2 * ev->bytes_max) + (2LL << 30);
  /* device copies of every tensor of a workload */
  if (ks_backend_device_buffers(ev->be))
    p->mem_limit_bytes += (int64_t)ev->bytes_max + (1LL << 30);
}

/* Time limit of one candidate's executor: generous multiples of the
 * reference for every call it makes, plus input generation and checks. */
static double derived_timeout(const ks_evaluator *ev) {
  if (ev->opts.timeout_s > 0)
    return ev->opts.timeout_s;
  double t = 10;
  for (int i = 0; i < ev->task->n_workloads; i++) {
    int calls = ev->opts.n_seeds + (ev->opts.timing ? ev->n_sets[i] : 0);
    double ref = ev->ref_time_ns[i] * 1e-9;
    double per = ref * 20 > 0.05 ? ref * 20 : 0.05;
    t += calls * per;
    /* the judge generates, poisons and compares every call's tensors */
    t += calls * tensor_bytes(ev->task, &ev->task->workloads[i]) * 3e-8;
  }
  return t;
}

/* The limit of an executor's start (spawn to ready): the build limit, as
 * an executor may compile there, and never below the calls' own limit. */
static double start_limit(const ks_evaluator *ev, double timeout_s) {
  double b = ev->opts.build_timeout_s;
  return b > timeout_s ? b : timeout_s;
}

/* How many of a workload's timed sets also time the anchor: all of them on
 * a device (its baseline is a fast kernel), and on the host as many as fit
 * in 0.1 s of reference time, at least one and at most 5 (the scalar C
 * references are 10-40x slower than the kernels they judge). */
static int anchor_sets(const ks_evaluator *ev, int i) {
  int n = ev->n_sets[i];
  if (ev->dc == KS_DEV_GPU)
    return n;
  double ref = ev->ref_time_ns[i] * 1e-9;
  int k = ref > 0 ? (int)(0.1 / ref) : n;
  k = k < 1 ? 1 : k > 5 ? 5 : k;
  return k < n ? k : n;
}

static ks_code evaluate(ks_evaluator *ev, ks_candidate *cand,
                        const char *beside, double limit_scale,
                        ks_eval_result *res, ks_err *err);

/* The baseline is the task's own trusted code and may be a slow
 * composition (mlx-lm's per-token Mamba loop: 0.1 s a call at T 1024),
 * while on a device the derived limit knows no reference time: it gets ten
 * times the candidates' limit (the H200, 2026-12-04: 14.2 s cut it short).
 * A limit the user set (--timeout) stays as given. */
#define BASELINE_LIMIT_SCALE 10

/* The device baseline (DESIGN.md: Evaluation, baselines): the plain kernel
 * or library call of tasks/<t>/baseline/<backend>.<ext>, evaluated like a
 * candidate in the same executor, so that speedups on a device compare like
 * with like. Absent: nothing to do. A baseline that fails is the task's
 * error. */
static ks_code eval_baseline(ks_evaluator *ev, ks_err *err) {
  static const char *const exts[] = {"cu", "cl", "c", "py"};
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
  rc = evaluate(ev, &c, NULL, BASELINE_LIMIT_SCALE, res, err);
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
  /* the anchor beside candidates: that build (a cuda kernel: the MLX
   * baselines are trusted Python, warmed differently) */
  if (!rc && ev->dc == KS_DEV_GPU && !strcmp(ev->be->name, "cuda") &&
      res->artifact_path[0]) {
    ks_strlcpy(ev->anchor_path, res->artifact_path, sizeof ev->anchor_path);
    ev->anchor_backend = ev->be->name;
  }
  ks_candidate_free(&c);
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
  const char *mib = getenv("KSEARCH_INPUT_CACHE_MIB");
  /* default: an eighth of the memory, at least 2 GiB: on a device host the
   * GPU-sized workloads' inputs (2.8 GiB for softmax at 8192x8192 over its
   * seed and ten sets) are then drawn once per search, not per evaluation */
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  double def_mib =
      pages > 0 && psz > 0 ? (double)pages * psz / 8 / (1 << 20) : 0;
  if (def_mib < 2048)
    def_mib = 2048;
  ev->inputs.budget = (size_t)(mib ? atof(mib) : def_mib) << 20;
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
                      "unknown backend \"%s\"; available: c, opencl, cuda, "
                      "mlx",
                      opts->backend);
  }
  ev->dc = ks_backend_device_class(ev->be);
  char dev[512];
  ks_code rc = ev->be->probe(dev, sizeof dev, err);
  if (!rc)
    rc = ks_cache_dir(ev->cache_dir, sizeof ev->cache_dir, err);
  /* On a GPU every call of a GPU-sized workload costs the judge a draw,
   * a poison and a comparison of hundreds of MiB, and the single-threaded
   * C reference seconds per set: one correctness seed and three timing
   * sets there (device events are steady; DESIGN.md: Timing). */
  if (ev->dc == KS_DEV_GPU && ev->opts.n_seeds > 1)
    ev->opts.n_seeds = 1;
  for (int i = 0; i < task->n_workloads; i++) {
    if (!ks_workload_applies(&task->workloads[i], ev->dc))
      continue;
    double b = tensor_bytes(task, &task->workloads[i]);
    if (b > ev->bytes_max)
      ev->bytes_max = b;
    ev->n_sets[i] =
        ks_judge_sets_for(task, &task->workloads[i], &ev->opts.topt);
    if (ev->dc == KS_DEV_GPU && ev->n_sets[i] > 3)
      ev->n_sets[i] = 3;
  }
  /* the reference, built like any candidate */
  ks_candidate ref;
  ks_artifact art;
  memset(&art, 0, sizeof art);
  bool have_ref = false;
  const ks_backend_i *cbe = ks_backend_get("c");
  if (!rc)
    rc = ks_candidate_load(task->reference_path, task->name, &ref, err);
  if (!rc) {
    have_ref = true;
    strcpy(ref.backend, "c");
    rc =
        cbe->build(task, &ref, ev->cache_dir, opts->build_timeout_s, &art, err);
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
  uint64_t salt = 0;
  if (!rc)
    rc = ks_mkdir_p(ev->ref_dir, err);
  if (!rc)
    rc = ref_salt(ev->ref_dir, &salt, err);
  if (rc) {
    ks_artifact_free(&art);
    free(ev);
    return rc;
  }
  for (int i = 0; i < KS_MAX_SEEDS; i++)
    ev->seeds[i] = ks_hash64(&salt, sizeof salt, (uint64_t)i + 1) >> 12;
  ev->set_seed0 = (ks_hash64(&salt, sizeof salt, 1000003) >> 12) | 1;
  /* reference outputs for every (workload, seed, set) + reference timing */
  ks_judge_plan plan;
  fill_plan(ev, &plan);
  plan.backend = "c";
  plan.reference = true;
  plan.artifact = art.path;
  plan.probe = false;
  for (int i = 0; i < task->n_workloads; i++)
    plan.n_sets[i] = ev->n_sets[i]; /* outputs for every set, even untimed */
  plan.n_seeds = ev->opts.n_seeds;
  /* on a GPU the score is over the device baseline, and the single-threaded
   * C reference takes seconds per call on GPU-sized workloads: it only
   * fills the output cache there, untimed (DESIGN.md: Evaluation) */
  plan.outputs_only = ev->dc == KS_DEV_GPU;
  /* the reference timed once per folder, machine and thread count: the
   * speedup's base is the anchor beside each candidate (ref_times.h) */
  char times_path[PATH_MAX];
  ks_ref_times_path(ev->ref_dir, ev->opts.threads, times_path,
                    sizeof times_path);
  bool stored = ev->dc != KS_DEV_GPU &&
                ks_ref_times_load(times_path, task, plan.skip, ev->ref_time_ns,
                                  ev->ref_time_ns_min);
  if (stored)
    plan.outputs_only = true;
  plan.cpu_limit_s = 0;
  plan.timeout_s = opts->timeout_s > 0 ? opts->timeout_s * 10 : 600;
  plan.start_timeout_s = start_limit(ev, plan.timeout_s);
  if (!opts->quiet)
    ks_log(KS_LOG_INFO, "reference: %s outputs%s (%d workloads)", task->name,
           plan.outputs_only ? "" : " and timing", task->n_workloads);
  ks_judge_out o;
  rc = ks_judge_run(&plan, &o, err);
  if (ev->dc != KS_DEV_GPU) {
    ks_strlcpy(ev->anchor_path, art.path, sizeof ev->anchor_path);
    ev->anchor_backend = "c";
  }
  ks_artifact_free(&art);
  if (!rc) {
    bool ok = o.finished && !o.x.violation[0];
    for (int i = 0; ok && i < task->n_workloads; i++)
      ok = plan.skip[i] || o.wl[i].correct;
    if (!ok) {
      const char *why = o.x.violation[0]     ? o.x.violation
                        : o.x.setup_error[0] ? o.x.setup_error
                        : o.x.timed_out      ? "time limit"
                                             : "it did not finish";
      for (int i = 0; i < task->n_workloads; i++)
        if (o.wl[i].ran && !o.wl[i].correct && o.wl[i].reason[0])
          why = o.wl[i].reason;
      rc = ks_err_set(
          err, o.x.setup_code == KS_ERR_ENV ? KS_ERR_ENV : KS_ERR_INPUT,
          "%s: the task's reference failed: %s (exit %d, signal %d)\n%.500s",
          task->reference_path, why, o.x.proc.exit_status, o.x.proc.signal,
          o.x.log.data ? o.x.log.data : "");
    } else if (!plan.outputs_only) {
      for (int i = 0; i < task->n_workloads; i++) {
        ev->ref_time_ns[i] = o.wl[i].claimed.median_ns;
        ev->ref_time_ns_min[i] = o.wl[i].time_ns;
      }
      ks_err terr;
      if (ks_ref_times_save(times_path, task, plan.skip, ev->ref_time_ns,
                            ev->ref_time_ns_min, &terr))
        ks_log(KS_LOG_INFO, "warning: %s", terr.msg);
    }
    for (int i = 0; i < task->n_workloads; i++)
      ev->ref_total_s += ev->ref_time_ns[i] * 1e-9;
    if (o.landlock_note[0] && !opts->quiet)
      ks_log(KS_LOG_INFO, "warning: %s", o.landlock_note);
  }
  ks_judge_out_free(&o);
  if (rc) {
    ks_evaluator_free(ev);
    return rc;
  }
  ks_err rerr;
  if (ks_roofline_get(ev->be->name, ev->opts.threads, false, &ev->roof,
                      &rerr) == KS_OK)
    ev->have_roof = true;
  else
    ks_log(KS_LOG_INFO, "no roofline: %s", rerr.msg);
  ks_err berr;
  ks_code brc = eval_baseline(ev, &berr);
  if (brc) /* scores then stay over the reference */
    ks_log(KS_LOG_INFO, "no device baseline: %s", berr.msg);
  /* on a GPU the reference only fills the output cache, untimed: the
   * device baseline is the only base a score has there. One that fails is
   * an error (an mlx run whose baseline failed scored every candidate
   * 1.000, H200 2026-12-04); without one (OpenCL on a GPU) scores are 0 and
   * the times, GB/s and fractions stand alone */
  if (ev->dc == KS_DEV_GPU && ev->opts.timing && !ev->have_base) {
    if (brc) {
      *err = berr;
      ks_evaluator_free(ev);
      return berr.code;
    }
    ks_log(KS_LOG_INFO,
           "%s: no device baseline for backend %s (baseline/%s.*): on a "
           "GPU the score is over it (the C reference is not timed there), "
           "so scores are 0; times, GB/s and roofline fractions are "
           "reported",
           task->dir, ev->be->name, ev->be->name);
  }
  *out = ev;
  return KS_OK;
}

void ks_evaluator_free(ks_evaluator *ev) {
  if (!ev)
    return;
  ks_input_cache_free(&ev->inputs);
  free(ev);
}

const double *ks_evaluator_ref_times(const ks_evaluator *ev) {
  return ev->ref_time_ns;
}

static double fixed_or_paired(const ks_evaluator *ev, const ks_eval_result *res,
                              bool paired) {
  if (!res->correct || !ev->opts.timing)
    return 0;
  double s[KS_MAX_WORKLOADS];
  bool verified[KS_MAX_WORKLOADS];
  double vlog = 0;
  int n = 0, nv = 0;
  for (int i = 0; i < ev->task->n_workloads && i < res->n_workloads; i++) {
    const ks_wl_result *w = &res->wl[i];
    if (!ks_workload_applies(&ev->task->workloads[i], ev->dc))
      continue;
    double t = ev->dc == KS_DEV_GPU && w->device_ns_min > 0 ? w->device_ns_min
                                                            : w->time_ns_min;
    double base = ev->have_base ? ev->base_ns[i] : ev->ref_time_ns_min[i];
    if (t <= 0 || base <= 0)
      return 0;
    s[n] = base / t;
    if (paired && w->probe_drift > 0)
      s[n] *= w->probe_drift;
    verified[n] = w->clock_verified || ev->dc == KS_DEV_GPU;
    if (verified[n]) {
      vlog += log(s[n]);
      nv++;
    }
    n++;
  }
  /* as in the score: a workload the judge's clock cannot check does not
   * lift it above what the checked ones show */
  double vmean = nv ? exp(vlog / nv) : 0, logsum = 0;
  for (int k = 0; k < n; k++)
    logsum += log(nv && !verified[k] && s[k] > vmean ? vmean : s[k]);
  return n ? exp(logsum / n) : 0;
}

double ks_eval_fixed_score(const ks_evaluator *ev, const ks_eval_result *res) {
  return fixed_or_paired(ev, res, false);
}

double ks_eval_paired_score(const ks_evaluator *ev, const ks_eval_result *res) {
  return fixed_or_paired(ev, res, true);
}

void ks_eval_result_free(ks_eval_result *res) { ks_buf_free(&res->build_log); }

/* How the executor ended and what the judge found, first match wins
 * (DESIGN.md: Statuses). */
static ks_eval_status classify(const ks_task *task, const ks_judge_plan *p,
                               const ks_judge_out *o, char *reason, size_t n) {
  const ks_exec *x = &o->x;
  char where[300] = "";
  if (o->in_flight >= 0 && o->in_flight < task->n_workloads) {
    char wl[256];
    ks_workload_format(task, &task->workloads[o->in_flight], wl, sizeof wl);
    snprintf(where, sizeof where, " (workload %s)", wl);
  }
  if (x->sigsys_nr >= 0 || (!x->proc.exited && x->proc.signal == SIGSYS)) {
    /* no report: the call was made with signals blocked, as glibc does
     * around clone3 in pthread_create and posix_spawn */
    char name[64] = "clone3 or another call made with signals blocked";
    if (x->sigsys_nr >= 0)
      ks_syscall_name(x->sigsys_nr, name, sizeof name);
    snprintf(reason, n,
             "forbidden system call: %s%s; the sandbox allows no processes, "
             "threads, sockets or file writes",
             name, where);
    return KS_EVAL_REJECTED;
  }
  if (x->violation[0]) {
    snprintf(reason, n, "%s%s", x->violation, where);
    return KS_EVAL_REJECTED;
  }
  if (x->timed_out && !x->ready) {
    snprintf(reason, n,
             "the executor did not get ready within its start limit of %.1f "
             "s (imports, compiles and warm-up before the first call: the "
             "build's limit)",
             ks_judge_start_limit(p));
    return KS_EVAL_TIMEOUT;
  }
  if (x->timed_out) {
    snprintf(reason, n, "exceeded the wall-clock time limit of %.1f s%s",
             p->timeout_s, where);
    return KS_EVAL_TIMEOUT;
  }
  if (!x->proc.exited && x->proc.signal == SIGXCPU) {
    snprintf(reason, n, "exceeded the CPU time limit of %.0f s%s",
             p->cpu_limit_s, where);
    return KS_EVAL_TIMEOUT;
  }
  bool any_wrong = false;
  for (int i = 0; i < task->n_workloads; i++)
    any_wrong |= o->wl[i].ran && !o->wl[i].correct;
  bool clean = o->finished && x->proc.exited && x->proc.exit_status == 0;
  if (x->alloc_failed > 0 && (!clean || any_wrong)) {
    snprintf(reason, n,
             "out of memory: an allocation of %.2f GiB failed under the "
             "memory limit of %.2f GiB%s",
             (double)x->alloc_failed / (1 << 30),
             (double)p->mem_limit_bytes / (1 << 30), where);
    return KS_EVAL_OOM;
  }
  if (x->dead && !x->proc.exited && !o->finished) {
    if (x->proc.signal == SIGKILL) {
      snprintf(reason, n,
               "killed by SIGKILL%s (the kernel's out-of-memory killer?)",
               where);
      return KS_EVAL_OOM;
    }
    const char *sig = sigabbrev_np(x->proc.signal);
    snprintf(reason, n, "crashed: killed by SIG%s%s%s%s", sig ? sig : "?",
             where, x->fault[0] ? ": " : "", x->fault);
    return KS_EVAL_CRASH;
  }
  if (x->setup_error[0]) {
    snprintf(reason, n, "%s", x->setup_error);
    return x->setup_code == KS_ERR_CANDIDATE ? KS_EVAL_COMPILE_ERROR
                                             : KS_EVAL_CRASH;
  }
  if (!clean) {
    snprintf(reason, n, "exited with status %d before finishing%s",
             x->proc.exit_status, where);
    return KS_EVAL_CRASH;
  }
  for (int i = 0; i < task->n_workloads; i++)
    if (o->wl[i].ran && !o->wl[i].correct) {
      char wl[256];
      ks_workload_format(task, &task->workloads[i], wl, sizeof wl);
      snprintf(reason, n, "incorrect on %s: %s", wl, o->wl[i].reason);
      return KS_EVAL_INCORRECT;
    }
  reason[0] = 0;
  return KS_EVAL_OK;
}

/* Whether the backend's kernels work in this machine's own memory (c, and
 * OpenCL on PoCL's CPU device), so the host probe is their ceiling. */
static bool host_memory(const ks_evaluator *ev) {
  return !ks_backend_device_buffers(ev->be) || !strcmp(ev->be->name, "opencl");
}

/* What eval_figures.c needs of this evaluator for workload i. */
static ks_figures_ctx figures_ctx(const ks_evaluator *ev, int i) {
  ks_figures_ctx c = {.task = ev->task,
                      .roof = ev->have_roof ? &ev->roof : NULL,
                      .host_memory = host_memory(ev),
                      .threads = ev->opts.threads,
                      .dc = ev->dc,
                      .have_base = ev->have_base,
                      .base_ns = ev->base_ns[i]};
  return c;
}

/* The figures of one timed workload, in the terms eval_figures.c takes. */
static bool workload_figures(ks_evaluator *ev, int i, ks_wl_result *w,
                             double probe_best, char *why, size_t n) {
  ks_figures_ctx c = figures_ctx(ev, i);
  return ks_eval_workload_figures(&c, i, w, probe_best, why, n);
}

ks_code ks_evaluate(ks_evaluator *ev, ks_candidate *cand, ks_eval_result *res,
                    ks_err *err) {
  return evaluate(ev, cand, NULL, 1, res, err);
}

ks_code ks_evaluate_beside(ks_evaluator *ev, ks_candidate *cand,
                           ks_candidate *beside, ks_eval_result *res,
                           ks_err *err) {
  ks_artifact art;
  ks_err berr;
  ks_code rc = ev->be->build(ev->task, beside, ev->cache_dir,
                             ev->opts.build_timeout_s, &art, &berr);
  ks_buf_free(&art.log);
  if (rc) {
    memset(res, 0, sizeof *res);
    *err = berr;
    return rc == KS_ERR_CANDIDATE ? KS_ERR_INPUT : rc;
  }
  return evaluate(ev, cand, art.path, 1, res, err);
}

/* limit_scale multiplies the derived time limit (not one the user gave):
 * 1 for candidates, BASELINE_LIMIT_SCALE for the task's baseline. */
static ks_code evaluate(ks_evaluator *ev, ks_candidate *cand,
                        const char *beside, double limit_scale,
                        ks_eval_result *res, ks_err *err) {
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
  const char *spec_target =
      ev->be->spec_target ? ev->be->spec_target(cand) : ev->be->name;
  if (!ev->opts.no_spec_check && spec_target) {
    ks_spec_violation v[16];
    int nv = 0;
    ks_err verr;
    if (ks_spec_validate(spec_target, cand->source, v, 16, &nv, &verr) ==
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
  ks_strlcpy(res->artifact_path, art.path, sizeof res->artifact_path);
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
  ks_judge_plan plan;
  fill_plan(ev, &plan);
  plan.artifact = art.path;
  plan.timeout_s =
      derived_timeout(ev) * (ev->opts.timeout_s > 0 ? 1 : limit_scale);
  /* the start (until ready) has the build's limit: an MLX executor JIT
   * compiles the candidate for every workload there (a routing kernel's
   * four took 15 s of a 15.5 s limit on an H100), which is no call */
  plan.start_timeout_s = start_limit(ev, plan.timeout_s);
  plan.cpu_limit_s = (plan.timeout_s + plan.start_timeout_s) * plan.threads + 5;
  /* the host probe measures the CPU backends' memory; a device backend
   * with probe_move measures its own (DESIGN.md: Ceiling probe) */
  plan.probe =
      ev->opts.timing && (host_memory(ev) || ks_backend_device_probe(ev->be));
  /* a compute-bound workload on the host: the compute probe */
  for (int i = 0; plan.probe && i < task->n_workloads; i++) {
    ks_figures_ctx fc = figures_ctx(ev, i);
    plan.probe_flops[i] = ks_eval_compute_probe_flops(&fc, i);
  }
  if (ev->opts.timing && beside) {
    /* the yardstick of a comparison: beside every timed set */
    plan.anchor_artifact = beside;
    plan.anchor_backend = ev->be->name;
    plan.anchor_untrusted = true;
    for (int i = 0; i < task->n_workloads; i++)
      plan.anchor_sets[i] = ev->n_sets[i];
  } else if (ev->opts.timing && ev->anchor_path[0]) {
    plan.anchor_artifact = ev->anchor_path;
    plan.anchor_backend = ev->anchor_backend;
    for (int i = 0; i < task->n_workloads; i++)
      plan.anchor_sets[i] = anchor_sets(ev, i);
  }
  ks_judge_out o;
  double t0 = ks_now();
  rc = ks_judge_run(&plan, &o, err);
  res->run_s = ks_now() - t0;
  memcpy(res->phase_s, o.phase_s, sizeof o.phase_s);
  if (rc) {
    ks_judge_out_free(&o);
    return rc;
  }
  if (o.x.setup_code && o.x.setup_code != KS_ERR_CANDIDATE && !o.x.loaded &&
      !o.x.violation[0] && o.x.sigsys_nr < 0) {
    rc = ks_err_set(err, (ks_code)o.x.setup_code, "ksearch-runner: %s",
                    o.x.setup_error);
    ks_judge_out_free(&o);
    return rc;
  }
  res->status = classify(task, &plan, &o, res->error, sizeof res->error);
  for (int i = 0; i < task->n_workloads; i++) {
    const ks_judge_wl *j = &o.wl[i];
    ks_wl_result *w = &res->wl[i];
    w->ran = j->ran;
    w->correct = j->correct;
    ks_strlcpy(w->reason, j->reason, sizeof w->reason);
    w->max_abs_err = j->max_abs_err;
    w->max_rel_err = j->max_rel_err;
    w->time_ns_median = j->claimed.median_ns;
    w->time_ns_min = j->time_ns;
    w->time_ns_iqr = j->claimed.iqr_ns;
    w->reps = j->claimed.reps;
    w->window_ns_min = j->window_min_ns;
    w->device_ns_median = j->dev_ns_median;
    w->device_ns_min = j->dev_ns_min;
    w->clock_verified = j->clock_verified;
    w->anchor_ns_min = j->anchor_reps > 0 ? j->anchor_ns_min : 0;
    if (beside) /* the bases stay the evaluator's */
      w->anchor_reps = j->anchor_reps;
    else if (j->anchor_reps > 0 && ev->dc != KS_DEV_GPU) {
      w->ref_time_ns_min = j->anchor_ns_min;
      w->ref_time_ns_median = j->anchor_ns_median;
      w->anchor_reps = j->anchor_reps;
    } else if (j->anchor_reps > 0) {
      w->baseline_beside_ns = j->anchor_ns_min;
      w->anchor_reps = j->anchor_reps;
    }
    ks_figures_ctx fc = figures_ctx(ev, i);
    ks_eval_probe_figures(&fc, i, j, w);
  }
  ks_judge_out_free(&o);
  double logsum = 0, vlog = 0, baselog = 0, probe_best = 0;
  int nv = 0, n_sp = 0, n_base = 0;
  for (int i = 0; i < task->n_workloads; i++)
    if (res->wl[i].probe_gbps > probe_best)
      probe_best = res->wl[i].probe_gbps;
  for (int i = 0; i < task->n_workloads; i++) {
    ks_wl_result *w = &res->wl[i];
    if (!ks_workload_applies(&task->workloads[i], ev->dc))
      continue;
    char why[600];
    if (workload_figures(ev, i, w, probe_best, why, sizeof why) &&
        res->status == KS_EVAL_OK) {
      res->status = KS_EVAL_IMPLAUSIBLE;
      ks_strlcpy(res->error, why, sizeof res->error);
    }
    if (w->clock_verified && w->speedup > 0) {
      vlog += log(w->speedup);
      nv++;
    }
    if (w->baseline_speedup > 0) {
      baselog += log(w->baseline_speedup);
      n_base++;
    }
  }
  /* a workload too fast for the judge's clock to check cannot lift the
   * score above what the checked ones show (DESIGN.md: Clock) */
  double vmean = nv ? exp(vlog / nv) : 0;
  for (int i = 0; i < task->n_workloads; i++) {
    ks_wl_result *w = &res->wl[i];
    if (!ks_workload_applies(&task->workloads[i], ev->dc))
      continue;
    if (nv && !w->clock_verified && w->speedup > vmean) {
      w->speedup = vmean;
      w->speedup_capped = true;
    }
    if (w->speedup > 0) {
      logsum += log(w->speedup);
      n_sp++;
    }
  }
  res->correct = res->status == KS_EVAL_OK;
  /* geometric means over the workloads that have the base: one without it
   * is no 1.0x (nothing at all: a score of 0) */
  res->score = res->correct && ev->opts.timing && n_sp ? exp(logsum / n_sp) : 0;
  res->baseline_score =
      res->correct && ev->opts.timing && ev->have_base && n_base
          ? exp(baselog / n_base)
          : 0;
  /* on a device with a baseline, the speedup that counts is over it */
  res->reference_score = ev->ref_total_s > 0 ? res->score : 0;
  if (ev->have_base)
    res->score = res->baseline_score;
  res->paired_score = ks_eval_paired_score(ev, res);
  if (beside && res->correct) {
    double lr = 0;
    int n = 0;
    for (int i = 0; i < task->n_workloads; i++) {
      const ks_wl_result *w = &res->wl[i];
      if (!ks_workload_applies(&task->workloads[i], ev->dc))
        continue;
      double t = ev->dc == KS_DEV_GPU && w->device_ns_min > 0 ? w->device_ns_min
                                                              : w->time_ns_min;
      if (t <= 0 || w->anchor_ns_min <= 0) {
        n = 0; /* a workload without its pair: no ratio */
        break;
      }
      lr += log(w->anchor_ns_min / t);
      n++;
    }
    res->beside_ratio = n ? exp(lr / n) : 0;
  }
  return KS_OK;
}
