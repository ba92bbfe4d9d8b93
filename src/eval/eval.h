/* eval.h — evaluating candidates (DESIGN.md: Evaluation).
 *
 * An evaluator belongs to one task on one backend. Creating it builds the
 * reference, makes sure the reference outputs of every (workload, seed,
 * timing set) are cached, and times the reference once per machine (its
 * figures are stored beside the outputs: ref_times.h); each ks_evaluate
 * then checks the candidate against the spec, builds it (cached by content
 * hash) and has the judge (judge.h) drive it through an executor, then
 * turns the judge's facts into a status, a reason, per-workload timings,
 * speedups and roofline fractions against the ceiling probed beside them.
 */
#ifndef KS_EVAL_H
#define KS_EVAL_H

#include "backend/backend.h"
#include "backend/roofline.h"
#include "eval/candidate.h"
#include "eval/judge.h"

typedef enum ks_eval_status {
  KS_EVAL_OK,
  KS_EVAL_COMPILE_ERROR,
  KS_EVAL_REJECTED,
  KS_EVAL_INCORRECT,
  KS_EVAL_CRASH,
  KS_EVAL_TIMEOUT,
  KS_EVAL_OOM,
  KS_EVAL_IMPLAUSIBLE, /* faster than the hardware allows */
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
  double window_ns_min; /* the judge's fastest exchange of a timed rep */
  double probe_gbps;    /* the ceiling probed beside it, 0 if none */
  double probe_spread;  /* probe (median - min) / min */
  /* the memory side of the roofline fraction from the reps' pairs: median
   * of (probe time / candidate time) times the task's bytes over the
   * probe's bytes; 0 if none (DESIGN.md: Ceiling probe) */
  double paired_fraction;
  int probe_pairs;
  /* what the drift-corrected score rescales by: probe time over its time
   * at the cached bandwidth (1 = the machine as fast as cached) */
  double probe_drift;
  double ceiling_gbps; /* the bandwidth the fraction was taken over */
  bool ceiling_probed; /* true: the probe; false: the cached roofline */
  /* a compute-bound workload (by the cached roofline) is probed for FLOP/s
   * instead (the roofline's FMA kernel beside every timed rep): its fastest
   * probe and the FLOP/s the fraction was taken over; 0 if not */
  double probe_gflops, ceiling_gflops;
  bool ceiling_compute; /* the fraction's floor is its FLOPs, not bytes */
  bool clock_verified;  /* false: faster than the judge's clock resolves */
  bool speedup_capped;  /* capped at the verified workloads' mean */
  /* device backends: the kernels' own time (events), which speedup, gbps
   * and roofline_fraction then use on a GPU; and the speedup over the
   * task's device baseline (tasks/<t>/baseline/<backend>.*), 0 if none */
  double device_ns_median, device_ns_min;
  double baseline_ns_min, baseline_speedup;
  /* the anchor (reference on host backends, device baseline on devices)
   * timed beside this candidate: calls made, and on devices its fastest */
  int anchor_reps;
  double baseline_beside_ns;
  double anchor_ns_min; /* the anchor's fastest call, whatever it was */
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
  double paired_score; /* ks_eval_paired_score, for the record (eval --json) */
  double beside_ratio; /* ks_evaluate_beside; 0 otherwise or if not timed */
  int n_workloads;
  ks_wl_result wl[KS_MAX_WORKLOADS];
  char error[2048]; /* the reason, when status != ok */
  char artifact_hash[17];
  char artifact_path[PATH_MAX]; /* the build it ran ("" none) */
  bool build_cached;
  double build_s, run_s;           /* compile time; runner wall time */
  double phase_s[KS_JUDGE_PHASES]; /* run_s by phase (ks_judge_phase_names) */
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
/* The same, with another candidate (built here, cached) timed beside it
 * instead of the reference: after every timed repetition of every
 * workload, on the same inputs, sandboxed like a candidate and checked for
 * nothing (DESIGN.md: Final tournament). res->beside_ratio is then the
 * geometric mean over workloads of (beside's fastest / this one's fastest):
 * above 1, this one is faster, both measured in the same seconds. The
 * score and the speedups stay over the evaluator's fixed bases. */
ks_code ks_evaluate_beside(ks_evaluator *ev, ks_candidate *cand,
                           ks_candidate *beside, ks_eval_result *res,
                           ks_err *err);
void ks_eval_result_free(ks_eval_result *res);
/* The JSON object of `ksearch eval --json` (DESIGN.md, issue contract). */
json_t *ks_eval_result_to_json(const ks_task *task, const ks_eval_result *r);
const ks_roofline *ks_evaluator_roofline(const ks_evaluator *ev);
/* The reference's median time per workload (ns), measured once. */
const double *ks_evaluator_ref_times(const ks_evaluator *ev);
/* The result's score over this evaluator's fixed bases (the reference's
 * stored times, or the device baseline's once-per-run times) instead of the
 * anchor timed beside it: for comparing candidates measured close together
 * (the tournament's rounds), where the anchor adds only its own noise; the
 * same capping of unverified workloads as the score. 0 unless ok. */
double ks_eval_fixed_score(const ks_evaluator *ev, const ks_eval_result *res);
/* The fixed score with each probed workload's time rescaled by the probe
 * timed beside it, rep by rep, to the machine at its cached bandwidth:
 * base / t * (probe time / probe time at the cached bandwidth). A slowdown
 * of the machine during the evaluation moves the candidate and the probe
 * alike and cancels, which neither anchor does (the scalar reference runs
 * on one thread and a few reps). What the tournament compares. Workloads
 * without a probe count as in the fixed score. 0 unless ok. */
double ks_eval_paired_score(const ks_evaluator *ev, const ks_eval_result *res);

#endif
