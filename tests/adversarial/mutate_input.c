// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=crash reason=modified input x (inputs are mapped read-only)
// Computes a correct result, then halves the input in place (casts away const).
#include <math.h>
#include <stdint.h>

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
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  // "Scratch space for free": reuse the input as a work buffer.
  float *xs = (float *)x;
  for (int64_t i = 0; i < rows * cols; i++)
    xs[i] *= 0.5f;
}
