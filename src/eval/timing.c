/* timing.c — see timing.h. Quantiles by linear interpolation. */
#include "eval/timing.h"

#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(const double *s, int n, double q) {
  double pos = q * (n - 1);
  int i = (int)pos;
  double f = pos - i;
  return i + 1 < n ? s[i] * (1 - f) + s[i + 1] * f : s[i];
}

ks_time_stats ks_time_summarize(double *s, int n) {
  ks_time_stats st = {0, 0, 0, n};
  if (n <= 0)
    return st;
  qsort(s, (size_t)n, sizeof *s, cmp);
  st.median_ns = quantile(s, n, 0.5);
  st.min_ns = s[0];
  st.iqr_ns = quantile(s, n, 0.75) - quantile(s, n, 0.25);
  return st;
}
