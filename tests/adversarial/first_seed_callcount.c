// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=mismatch
// Computes the first call of each shape, then replays that first result.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static float *saved; // the first result for the shape below
static int64_t saved_rows = -1, saved_cols = -1;
static long calls; // calls since the shape last changed

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  size_t n = (size_t)(rows * cols);
  if (rows != saved_rows || cols != saved_cols) {
    free(saved);
    saved = malloc(n * sizeof(float));
    saved_rows = rows;
    saved_cols = cols;
    calls = 0;
  }
  if (calls++ > 0 && saved) {
    memcpy(y, saved, n * sizeof(float)); // later calls: replay
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  if (saved)
    memcpy(saved, y, n * sizeof(float));
}
