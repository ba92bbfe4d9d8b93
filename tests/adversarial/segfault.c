// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=crash reason=sigsegv
// Stores through a NULL pointer (volatile, so it is a real store, not a trap).
#include <math.h>
#include <stddef.h>
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

static float *volatile scratch = NULL; // "allocated later", never is

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  float *p = scratch;
  p[rows] = y[0]; // SIGSEGV
}
