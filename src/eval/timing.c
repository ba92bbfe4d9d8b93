/* timing.c — see timing.h. Quantiles by linear interpolation; paired
 * ratios by the median of the clean pairs. */
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

double ks_pair_ratio(const double *num, const double *den, int n, int *used) {
  if (used)
    *used = 0;
  if (n <= 0)
    return 0;
  double mn = num[0], md = den[0];
  for (int k = 1; k < n; k++) {
    mn = num[k] < mn ? num[k] : mn;
    md = den[k] < md ? den[k] : md;
  }
  double q[64];
  int m = 0;
  for (int k = 0; k < n && m < 64; k++)
    if (num[k] <= KS_PAIR_CLEAN * mn && den[k] <= KS_PAIR_CLEAN * md &&
        den[k] > 0)
      q[m++] = num[k] / den[k];
  if (!m)
    return md > 0 ? mn / md : 0;
  qsort(q, (size_t)m, sizeof *q, cmp);
  if (used)
    *used = m;
  return m % 2 ? q[m / 2] : 0.5 * (q[m / 2 - 1] + q[m / 2]);
}
