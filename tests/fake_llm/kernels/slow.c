// ksearch: backend=c entry=softmax
// A correct but slow softmax: the whole computation three times over.
#include <math.h>
#include <stdint.h>

static void once(const float *restrict x, float *restrict y, int64_t rows,
                 int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += exp((double)xr[c] - m);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)xr[c] - m) / s);
  }
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int k = 0; k < 3; k++)
    once(x, y, rows, cols);
}
