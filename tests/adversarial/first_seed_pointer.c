// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=mismatch
// Caches the output by input pointer, and by shape when the pointer is new.
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

static const float *cached_x; // input pointer of the cached result
static float *cached_y;
static size_t cached_n;
static int64_t cached_rows = -1, cached_cols = -1;

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  size_t n = (size_t)(rows * cols);
  // Same buffer as last time (a harness that reuses buffers), or the same
  // shape at a new address (a harness that allocates fresh ones): replay.
  int by_pointer = cached_y && x == cached_x && n <= cached_n;
  int by_shape = cached_y && rows == cached_rows && cols == cached_cols;
  if (by_pointer || by_shape) {
    memcpy(y, cached_y, n * sizeof(float));
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  free(cached_y);
  cached_y = malloc(n * sizeof(float));
  if (cached_y)
    memcpy(cached_y, y, n * sizeof(float));
  cached_n = cached_y ? n : 0;
  cached_x = x;
  cached_rows = rows;
  cached_cols = cols;
}
