/* test_timing.c — summary statistics of timings (src/eval/timing.c):
 * median, minimum and interquartile range by linear interpolation. */
#include "eval/timing.h"

#include <criterion/criterion.h>
#include <math.h>

Test(timing, odd_count) {
  double s[] = {5, 1, 3};
  ks_time_stats st = ks_time_summarize(s, 3);
  cr_expect_eq(st.reps, 3);
  cr_expect_float_eq(st.median_ns, 3, 1e-12);
  cr_expect_float_eq(st.min_ns, 1, 1e-12);
  /* q25 = 2, q75 = 4 */
  cr_expect_float_eq(st.iqr_ns, 2, 1e-12);
  cr_expect(s[0] == 1 && s[1] == 3 && s[2] == 5, "sorted in place");
}

Test(timing, even_count) {
  double s[] = {4, 1, 3, 2};
  ks_time_stats st = ks_time_summarize(s, 4);
  cr_expect_float_eq(st.median_ns, 2.5, 1e-12);
  cr_expect_float_eq(st.min_ns, 1, 1e-12);
  /* q25 = 1.75, q75 = 3.25 */
  cr_expect_float_eq(st.iqr_ns, 1.5, 1e-12);
}

Test(timing, single_sample) {
  double s[] = {7};
  ks_time_stats st = ks_time_summarize(s, 1);
  cr_expect_eq(st.reps, 1);
  cr_expect_float_eq(st.median_ns, 7, 0);
  cr_expect_float_eq(st.min_ns, 7, 0);
  cr_expect_float_eq(st.iqr_ns, 0, 0);
}

Test(timing, two_samples) {
  double s[] = {10, 20};
  ks_time_stats st = ks_time_summarize(s, 2);
  cr_expect_float_eq(st.median_ns, 15, 1e-12);
  cr_expect_float_eq(st.min_ns, 10, 0);
  cr_expect_float_eq(st.iqr_ns, 5, 1e-12);
}

Test(timing, outlier_does_not_move_median) {
  double s[] = {100, 101, 99, 100, 1e9, 100, 102, 98, 100};
  ks_time_stats st = ks_time_summarize(s, 9);
  cr_expect_float_eq(st.median_ns, 100, 0);
  cr_expect_float_eq(st.min_ns, 98, 0);
  cr_expect(st.iqr_ns <= 2, "%g", st.iqr_ns);
}

Test(timing, empty) {
  ks_time_stats st = ks_time_summarize(NULL, 0);
  cr_expect_eq(st.reps, 0);
  cr_expect_float_eq(st.median_ns, 0, 0);
  cr_expect_float_eq(st.min_ns, 0, 0);
  cr_expect_float_eq(st.iqr_ns, 0, 0);
}

/* ks_pair_ratio: probe and candidate reps timed back to back. The machine
 * drifts between 1.0x and 1.25x slower over the reps, and each series is
 * pre-empted (3x) at the other's fastest moment: the fastest probe and the
 * fastest candidate come from different moments, so min / min is off by
 * the drift; the clean pairs' median is exact. */
Test(timing, pair_ratio_cancels_drift) {
  double probe[8], cand[8];
  const double drift[8] = {1.0, 1.25, 1.1, 1.2, 1.12, 1.15, 1.25, 1.05};
  for (int k = 0; k < 8; k++) {
    probe[k] = 0.6 * drift[k];
    cand[k] = 1.0 * drift[k];
  }
  probe[0] *= 3; /* pre-empted where the candidate was fastest */
  cand[4] *= 3;  /* and the other way round */
  int used = 0;
  double q = ks_pair_ratio(probe, cand, 8, &used);
  cr_expect_float_eq(q, 0.6, 1e-9, "paired: %g", q);
  cr_expect_eq(used, 6, "the two pre-empted pairs left out");
  double mp = probe[0], mc = cand[0];
  for (int k = 1; k < 8; k++) {
    mp = probe[k] < mp ? probe[k] : mp;
    mc = cand[k] < mc ? cand[k] : mc;
  }
  cr_expect_gt(fabs(mp / mc - 0.6), 0.02, "min / min is off: %g", mp / mc);
  /* a common slowdown of the whole evaluation changes nothing */
  for (int k = 0; k < 8; k++) {
    probe[k] *= 1.7;
    cand[k] *= 1.7;
  }
  cr_expect_float_eq(ks_pair_ratio(probe, cand, 8, NULL), 0.6, 1e-9);
}

/* no clean pair: the fastest of each; nothing: 0 */
Test(timing, pair_ratio_fallback) {
  double probe[2] = {1.0, 10.0}, cand[2] = {10.0, 2.0};
  int used = 7;
  cr_expect_float_eq(ks_pair_ratio(probe, cand, 2, &used), 0.5, 1e-12);
  cr_expect_eq(used, 0);
  cr_expect_float_eq(ks_pair_ratio(probe, cand, 0, NULL), 0, 0);
}
