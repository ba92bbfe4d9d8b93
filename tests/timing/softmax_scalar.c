// ksearch: backend=c entry=softmax
// Timing fixture, the slow half of a pair with softmax_vector.c: a correct
// softmax that is scalar on purpose (vectorization switched off, libm exp
// in double, one serial dependency chain on a double accumulator). The
// harness must rank it below softmax_vector.c, reproducibly.
#pragma GCC optimize("no-tree-vectorize")
#include <math.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      if (xr[c] > m)
        m = xr[c];
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++) {
      double e = exp((double)xr[c] - m);
      yr[c] = (float)e;
      sum += e;
    }
    double inv = 1.0 / sum;
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)((double)yr[c] * inv);
  }
}
