/* test_timing.c — summary statistics of timings (src/eval/timing.c):
 * median, minimum and interquartile range by linear interpolation. */
#include "eval/timing.h"

#include <criterion/criterion.h>

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
