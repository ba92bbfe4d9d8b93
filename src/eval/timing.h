/* timing.h — summary statistics of repeated timings: median, minimum and
 * interquartile spread (DESIGN.md: Evaluation, Timing). */
#ifndef KS_TIMING_H
#define KS_TIMING_H

#include <stdint.h>

typedef struct ks_time_stats {
  double median_ns, min_ns, iqr_ns;
  int reps;
} ks_time_stats;

/* Sorts samples in place. */
ks_time_stats ks_time_summarize(double *samples_ns, int n);

#endif
