/* eval.h — evaluating candidates (DESIGN.md: Evaluation).
 *
 * An evaluator belongs to one task on one backend. Creating it builds the
 * reference, makes sure the reference outputs of every (workload, seed) are
 * cached, and times the reference once; each ks_evaluate then builds one
 * candidate (cached by content hash), runs it in ksearch-runner under the
 * sandbox, and turns the runner's events into a result with a status, a
 * reason, per-workload timings, speedups and roofline fractions.
 */
#ifndef KS_EVAL_H
#define KS_EVAL_H

#include "backend/backend.h"
#include "backend/roofline.h"
#include "eval/candidate.h"
#include "eval/protocol.h"

typedef enum ks_eval_status {
  KS_EVAL_OK,
  KS_EVAL_COMPILE_ERROR,
  KS_EVAL_REJECTED,
  KS_EVAL_INCORRECT,
  KS_EVAL_CRASH,
  KS_EVAL_TIMEOUT,
  KS_EVAL_OOM,
} ks_eval_status;

const char *ks_eval_status_name(ks_eval_status s);

typedef struct ks_eval_opts {
  const char *backend; /* "c" */
  int threads;         /* 0 = all cores */
  int n_seeds;         /* correctness seeds per workload (>= 1, default 3) */
  ks_timing_opts topt;
  bool timing;            /* false: correctness only */
  double timeout_s;       /* wall-clock limit of one runner; 0 = derived */
  double build_timeout_s; /* compiler time limit */
  bool quiet;             /* no progress on stderr */
  bool no_spec_check;     /* skip the primitive check (to test the sandbox) */
} ks_eval_opts;

void ks_eval_opts_default(ks_eval_opts *o);

typedef struct ks_wl_result {
  int index;
  bool ran, correct;
  double max_abs_err, max_rel_err;
  double time_ns_median, time_ns_min, time_ns_iqr;
  int reps;
  double ref_time_ns_median, ref_time_ns_min;
  /* from the fastest reps (time_ns_min vs ref_time_ns_min): DESIGN.md Score */
  double speedup, gbps, gflops, roofline_fraction;
  /* device backends: the kernels' own time (events), which speedup, gbps
   * and roofline_fraction then use; and the speedup over the task's device
   * baseline (tasks/<t>/baseline/<backend>.*), 0 when there is none */
  double device_ns_median, device_ns_min;
  double baseline_ns_min, baseline_speedup;
  char reason[600];
} ks_wl_result;

typedef struct ks_eval_result {
  ks_eval_status status;
  bool correct;
  double score; /* geometric-mean speedup over the reference; 0 if wrong */
  /* the same over the device baseline, 0 when there is none; with a
   * baseline, score is baseline_score and reference_score keeps the speedup
   * over the C reference */
  double baseline_score, reference_score;
  int n_workloads;
  ks_wl_result wl[KS_MAX_WORKLOADS];
  char error[2048]; /* the reason, when status != ok */
  char artifact_hash[17];
  bool build_cached;
  double build_s, run_s; /* compile time; runner wall time */
  int threads;
  ks_device_class device_class; /* which workloads ran ("device" key) */
  ks_buf build_log;
} ks_eval_result;

typedef struct ks_evaluator ks_evaluator;

ks_code ks_evaluator_new(const ks_task *task, const ks_eval_opts *opts,
                         ks_evaluator **out, ks_err *err);
void ks_evaluator_free(ks_evaluator *ev);
/* KS_OK whenever the candidate was evaluated (res->status says how it did);
 * an error only when the environment or ksearch itself failed. */
ks_code ks_evaluate(ks_evaluator *ev, ks_candidate *cand, ks_eval_result *res,
                    ks_err *err);
void ks_eval_result_free(ks_eval_result *res);
/* The JSON object of `ksearch eval --json` (DESIGN.md, issue contract). */
json_t *ks_eval_result_to_json(const ks_task *task, const ks_eval_result *r);
const ks_roofline *ks_evaluator_roofline(const ks_evaluator *ev);
/* The reference's median time per workload (ns), measured once. */
const double *ks_evaluator_ref_times(const ks_evaluator *ev);

/* Runs ksearch-runner on a job with a wall-clock limit (runner_client.c). */
typedef struct ks_runner_outcome {
  bool loaded, done;
  int in_flight; /* workload index being run, -1 if none */
  int64_t alloc_failed_bytes;
  int sigsys_nr; /* -1 if none */
  char setup_error[1024];
  int setup_code;
  ks_proc_result proc;
  int n_results;
  ks_wl_result results[KS_MAX_WORKLOADS];
  ks_buf log; /* the runner's stdout + stderr, capped */
} ks_runner_outcome;

ks_code ks_runner_exec(const ks_job *job, double timeout_s,
                       ks_runner_outcome *out, ks_err *err);
void ks_runner_outcome_free(ks_runner_outcome *o);
/* Classifies a finished runner into a status and a reason. */
ks_eval_status ks_runner_classify(const ks_task *task, const ks_job *job,
                                  const ks_runner_outcome *o, double timeout_s,
                                  char *reason, size_t n);

#endif
