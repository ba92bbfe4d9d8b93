/* eval_figures.h — one timed workload's figures and verdict (eval_figures.c),
 * private to the evaluator. */
#ifndef KS_EVAL_FIGURES_H
#define KS_EVAL_FIGURES_H

#include "eval/eval.h"
#include "eval/judge.h"

/* What the figures of a workload depend on besides its own timings. */
typedef struct ks_figures_ctx {
  const ks_task *task;
  const ks_roofline *roof; /* cached roofline; NULL: none */
  bool host_memory; /* kernels in this machine's memory: the host probe */
  int threads;      /* the executor's threads (the host compute bound) */
  ks_device_class dc;
  bool have_base; /* a device baseline is timed */
  double base_ns; /* its fastest rep on this workload (cached) */
} ks_figures_ctx;

/* Fills w's figures for workload i; true when it was faster than the
 * hardware allows (fraction above 1 + the measured noise margin), with the
 * reason in why. probe_best: the best probe bandwidth of this evaluation
 * (for workloads too small to probe). */
/* > 0: workload i is compute-bound by the cached roofline (and long enough
 * to probe): its probe is the compute probe of this many flops (the task's
 * cost model); 0: the probe moves its bytes (DESIGN.md: Ceiling probe). */
double ks_eval_compute_probe_flops(const ks_figures_ctx *c, int i);

/* What the probe beside workload i measured, into w: the probe's figure
 * (GB/s or GFLOP/s), its spread, the paired fraction and the drift. */
void ks_eval_probe_figures(const ks_figures_ctx *c, int i, const ks_judge_wl *j,
                           ks_wl_result *w);

bool ks_eval_workload_figures(const ks_figures_ctx *c, int i, ks_wl_result *w,
                              double probe_best, char *why, size_t n);

#endif
