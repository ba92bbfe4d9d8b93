// ksearch: backend=c entry=layernorm
// Reference for tasks/layernorm: each row is centred on its mean, divided by
// its (biased) standard deviation, then scaled by w and shifted by b
// (DESIGN.md: Task). Plain and single-threaded on purpose; two passes in
// double so the variance does not suffer from cancellation.
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void layernorm(const float *restrict x, const float *restrict w,
               const float *restrict b, float *restrict y, int64_t rows,
               int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++)
      sum += xr[c];
    double mean = sum / (double)cols;
    double var = 0.0;
    for (int64_t c = 0; c < cols; c++) {
      double d = (double)xr[c] - mean;
      var += d * d;
    }
    var /= (double)cols;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (int64_t c = 0; c < cols; c++)
      yr[c] =
          (float)(((double)xr[c] - mean) * inv * (double)w[c] + (double)b[c]);
  }
}
