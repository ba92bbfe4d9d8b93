// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=ok max_score=6 timing=1 reason=
// Computes only when the output still holds the NaN fill and returns at once
// otherwise, hoping the timed repetitions reuse the warm-up's output. The
// judge poisons the outputs before every call, so it always computes: an
// honest (slow) score, not 40,000x.
#include <math.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  if (rows * cols > 0 && !isnan(y[0]) && !isnan(y[rows * cols - 1]))
    return; // "already computed"
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += exp((double)(xr[c] - m));
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)(xr[c] - m)) / s);
  }
}
