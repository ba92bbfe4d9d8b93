/* analysis.h — the rule-based "deep analysis" step of K-Search: kernel class,
 * canonical statement, arithmetic intensity per workload from the cost
 * model, machine balance from the roofline, and from these the likely
 * bottleneck per workload (memory, compute, or latency for tiny work). The
 * text goes into the root node's notes and `ksearch show`; the regime of the
 * largest workload sets the planner's initial priorities. */
#ifndef KS_ANALYSIS_H
#define KS_ANALYSIS_H

#include "backend/roofline.h"
#include "search/class_spec.h"

typedef struct ks_analysis {
  double intensity[KS_MAX_WORKLOADS]; /* flop per byte */
  ks_regime regime[KS_MAX_WORKLOADS];
  double balance; /* machine flop per byte; 0 if no roofline */
  ks_regime main_regime;
  int native_vec; /* floats per native SIMD register (the roofline's
                     vector_floats), 0 when unknown: the planner's first
                     vector width */
  char text[4096];
} ks_analysis;

void ks_analyze(const ks_task *task, const ks_roofline *roof,
                const double *ref_time_ns, ks_analysis *out);

#endif
