// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=mismatch
// Computes in _Float16: half the bytes, about three decimal digits.
#include <math.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    _Float16 m = (_Float16)-INFINITY;
    for (int64_t c = 0; c < cols; c++) {
      _Float16 v = (_Float16)xr[c];
      m = v > m ? v : m;
    }
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; c++) {
      _Float16 e = (_Float16)expf((float)((_Float16)xr[c] - m));
      yr[c] = (float)e;
      sum += (float)e;
    }
    _Float16 inv = (_Float16)(1.0f / sum);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)((_Float16)yr[c] * inv);
  }
}
