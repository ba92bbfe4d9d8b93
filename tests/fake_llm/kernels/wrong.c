// ksearch: backend=c entry=softmax
// Wrong: divides by 1.01 times the sum.
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
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += (yr[c] = expf(xr[c] - m));
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(yr[c] / (1.01 * s));
  }
}
