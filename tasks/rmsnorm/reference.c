// ksearch: backend=c entry=rmsnorm
// Reference for tasks/rmsnorm: root-mean-square normalisation of each row,
// then a per-column weight (DESIGN.md: Task). Plain and single-threaded on
// purpose; the sum of squares and the scaling are done in double.
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void rmsnorm(const float *restrict x, const float *restrict w,
             float *restrict y, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double ss = 0.0;
    for (int64_t c = 0; c < cols; c++)
      ss += (double)xr[c] * (double)xr[c];
    double inv = 1.0 / sqrt(ss / (double)cols + (double)eps);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)((double)xr[c] * inv * (double)w[c]);
  }
}
