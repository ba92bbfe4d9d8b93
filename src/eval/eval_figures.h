/* eval_figures.h — one timed workload's figures and verdict (eval_figures.c),
 * private to the evaluator. */
#ifndef KS_EVAL_FIGURES_H
#define KS_EVAL_FIGURES_H

#include "eval/eval.h"

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
bool ks_eval_workload_figures(const ks_figures_ctx *c, int i, ks_wl_result *w,
                              double probe_best, char *why, size_t n);

#endif
