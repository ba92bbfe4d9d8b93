/* timing.h — summary statistics of repeated timings: median, minimum and
 * interquartile spread (DESIGN.md: Evaluation, Timing). */
#ifndef KS_TIMING_H
#define KS_TIMING_H

#include <stdbool.h>
#include <stdint.h>

/* How candidates are timed (DESIGN.md: Timing). Every timed repetition runs
 * on an input set the executor has not seen before in the evaluation, so
 * the number of repetitions is the number of timing sets. */
typedef struct ks_timing_opts {
  int min_reps; /* timing sets per workload, at least (default 10) */
  int max_reps; /* at most (default 12; fewer when outputs are large) */
  double min_time_s, max_wall_s; /* kept for the command line; see DESIGN */
  int warmup;
  bool flush; /* evict caches before every timed repetition */
} ks_timing_opts;

typedef struct ks_time_stats {
  double median_ns, min_ns, iqr_ns;
  int reps;
} ks_time_stats;

/* Sorts samples in place. */
ks_time_stats ks_time_summarize(double *samples_ns, int n);

#endif
