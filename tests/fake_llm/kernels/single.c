// A correct, plain softmax the fake model writes without the ksearch header
// (ksearch adds it): one thread, scalar expf once per element, the
// exponentials cached in the output row, the sum in double.
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
    for (int64_t c = 0; c < cols; c++) {
      float e = expf(xr[c] - m);
      yr[c] = e;
      s += e;
    }
    float inv = (float)(1.0 / s);
    for (int64_t c = 0; c < cols; c++)
      yr[c] *= inv;
  }
}
