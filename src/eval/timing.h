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

/* Paired repetitions (DESIGN.md: Ceiling probe): num[k] and den[k] were
 * timed back to back. The median of num[k] / den[k] over the pairs where
 * neither was pre-empted (each within KS_PAIR_CLEAN of its own series'
 * fastest); the machine's slowdown of the moment hits both members of a
 * pair and cancels, where min(num) / min(den) takes two different moments.
 * No clean pair: min(num) / min(den). 0 if n <= 0. *used: the pairs that
 * counted (0 for the fallback); may be NULL. */
#define KS_PAIR_CLEAN 1.3
double ks_pair_ratio(const double *num, const double *den, int n, int *used);

#endif
