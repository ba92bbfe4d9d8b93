// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=nan
// Accumulates into y (y += ...) as if it were zeroed; it is not.
#include <math.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++) {
      yr[c] += expf(xr[c] - m); // assumes y starts at zero
      sum += expf(xr[c] - m);
    }
    float inv = (float)(1.0 / sum);
    for (int64_t c = 0; c < cols; c++)
      yr[c] *= inv;
  }
}
