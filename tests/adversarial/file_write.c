// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=forbidden system call
// Writes a file in /tmp (a side channel, or a cache across processes).
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static void softmax_row(const float *xr, float *yr, int64_t cols) {
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;
  double sum = 0.0;
  for (int64_t c = 0; c < cols; c++)
    sum += exp((double)(xr[c] - m));
  for (int64_t c = 0; c < cols; c++)
    yr[c] = (float)(exp((double)(xr[c] - m)) / sum);
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  FILE *f = fopen("/tmp/ksearch_adv_out", "w");
  if (f) {
    fprintf(f, "softmax %lld x %lld\n", (long long)rows, (long long)cols);
    fclose(f);
  }
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
}
