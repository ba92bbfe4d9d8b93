/* judge.h — the judge: drives an executor through every workload and
 * decides what happened, in ksearch's own address space (DESIGN.md:
 * Evaluation). It owns the inputs (written into a sealed memfd the executor
 * can only read), holds the reference outputs (the executor never sees
 * them), poisons the outputs before every call, freezes the executor while
 * it reads them, compares, times every exchange with its own clock, runs the
 * ceiling probe beside the timed repetitions, and turns all of that into
 * per-workload facts. eval.c turns those into a status and a score.
 */
#ifndef KS_JUDGE_H
#define KS_JUDGE_H

#include "eval/exec_client.h"
#include "eval/timing.h"

#define KS_MAX_SEEDS 8
#define KS_MAX_SETS 32

/* Generated input sets, kept across the evaluations of one evaluator: the
 * same (workload, seed) is drawn for every candidate, and drawing a large
 * one costs more than the kernel. Bounded by KSEARCH_INPUT_CACHE_MIB
 * (default 2048); what does not fit is drawn again each time. */
typedef struct ks_input_cache {
  int n;
  struct {
    int wl;
    uint64_t seed;
    size_t bytes;
    unsigned char *data; /* the inputs, back to back in task order */
  } e[KS_MAX_WORKLOADS * (KS_MAX_SEEDS + KS_MAX_SETS)];
  size_t used, budget;
} ks_input_cache;
void ks_input_cache_free(ks_input_cache *c);

typedef struct ks_judge_plan {
  const ks_task *task;
  const char *backend;  /* what runs the artifact (reference: "c") */
  const char *artifact; /* built artifact path */
  bool reference;       /* compute and store reference outputs + timing */
  bool outputs_only;    /* reference: stored sets are skipped, none timed */
  int threads;
  int n_seeds;
  uint64_t seeds[KS_MAX_SEEDS];
  uint64_t set_seed0;           /* timing set j has seed set_seed0 + j */
  int n_sets[KS_MAX_WORKLOADS]; /* timing sets (= timed reps); 0: none */
  bool skip[KS_MAX_WORKLOADS];  /* another device class's workloads */
  const char *ref_dir;          /* reference outputs: read or written */
  bool evict;                   /* flush caches before timed reps */
  bool probe;                   /* run the ceiling probe beside them */
  /* > 0: that workload's probe is the compute probe (this many flops of
   * FMA chains) instead of moving its bytes (a compute-bound workload) */
  double probe_flops[KS_MAX_WORKLOADS];
  double timeout_s; /* wall clock of the calls, counted from "ready" */
  /* wall clock of an executor's start, until "ready" (imports; the MLX
   * executor's JIT compiles and warm-up); <= 0: timeout_s */
  double start_timeout_s;
  int64_t mem_limit_bytes;
  double cpu_limit_s;
  ks_input_cache *inputs; /* may be NULL */
  /* the anchor: the reference (or device baseline) timed in its own
   * executor beside the candidate, on the same inputs, in the same minute
   * (DESIGN.md: Ratios in one sitting). NULL: none. */
  const char *anchor_artifact;
  const char *anchor_backend;
  /* the anchor is a candidate (the tournament's yardstick), not trusted
   * code: it runs in candidate mode, sandboxed like the candidate */
  bool anchor_untrusted;
  int anchor_sets[KS_MAX_WORKLOADS]; /* timed sets that also time it */
} ks_judge_plan;

typedef struct ks_judge_wl {
  bool ran, correct;
  char reason[600];
  double max_abs_err, max_rel_err;
  ks_time_stats claimed; /* the executor's own times of the timed reps */
  double window_min_ns;  /* the judge's fastest exchange of those reps */
  double time_ns;        /* what counts: see DESIGN.md, Clock */
  bool clock_verified;   /* the judge's clock resolves this workload */
  double dev_ns_median;  /* device backends, 0 if unknown */
  double dev_ns_min;
  double probe_ns_min; /* fastest ceiling probe, 0 if none */
  double probe_ns_median;
  double probe_bytes; /* what one probe moved */
  double probe_flops; /* what one compute probe did; 0: a bytes probe */
  /* probe time / candidate time over the timed reps, each candidate rep
   * paired with the probe run right after it (ks_pair_ratio: the median of
   * the pairs neither of which was pre-empted), for each of the probe's two
   * store variants, the faster kept (the lower ratio): a slowdown of the
   * machine that hits both within a rep cancels (DESIGN.md: Ceiling
   * probe). 0 if none. */
  double probe_ratio;
  int probe_pairs; /* reps that gave the kept ratio */
  int anchor_reps; /* anchor calls beside the timed sets, 0 if none */
  double anchor_ns_min, anchor_ns_median; /* device time on devices */
} ks_judge_wl;

enum {
  KS_PH_START,   /* executors started, pinged, artifacts loaded */
  KS_PH_INPUTS,  /* inputs drawn or copied, outputs poisoned */
  KS_PH_CALLS,   /* the candidate's exchanges (upload, call, download) */
  KS_PH_COMPARE, /* guards and comparison with the reference (or storing it) */
  KS_PH_BESIDE,  /* the probe's and the anchor's calls */
  KS_JUDGE_PHASES
};
extern const char *const ks_judge_phase_names[KS_JUDGE_PHASES];

typedef struct ks_judge_out {
  ks_exec x;      /* the candidate's executor, after the fact */
  bool finished;  /* every workload was driven to its end */
  int in_flight;  /* workload index when it stopped, -1 none */
  double ping_ns; /* slowest of 16 pings before the load */
  char landlock_note[160];
  /* where the judge's wall time went (eval --json "phases_s"): to see what
   * an evaluation costs on a device host, where inputs and comparisons of
   * GPU-sized outputs can outweigh the calls */
  double phase_s[KS_JUDGE_PHASES];
  ks_judge_wl wl[KS_MAX_WORKLOADS];
} ks_judge_out;

/* Evaluates the plan's artifact. KS_OK whenever the executor ran (out says
 * how); an error only when ksearch itself could not do its part (memory,
 * files, the runner binary missing). Call ks_judge_out_free after. */
ks_code ks_judge_run(const ks_judge_plan *p, ks_judge_out *out, ks_err *err);
void ks_judge_out_free(ks_judge_out *out);
/* The start limit an executor of the plan gets: start_timeout_s, else
 * timeout_s. */
double ks_judge_start_limit(const ks_judge_plan *p);
/* Path of one reference output in ref_dir. */
void ks_judge_ref_file(const char *ref_dir, const ks_task *task,
                       const ks_workload *w, uint64_t seed, const char *out,
                       char *path, size_t n);
/* Timing sets a workload gets: min_reps..max_reps, fewer for big outputs
 * (each set's reference output is cached). */
int ks_judge_sets_for(const ks_task *task, const ks_workload *w,
                      const ks_timing_opts *t);

#endif
