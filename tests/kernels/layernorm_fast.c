// ksearch: backend=c entry=layernorm
// Hand-written fast layernorm for tasks/layernorm, used by tests as a
// known-good, known-fast candidate. Rows are split across OpenMP threads;
// mean and variance are two vectorized passes over the row (two passes, not
// E[x^2]-E[x]^2, to avoid cancellation), each a float SIMD reduction per
// block of columns with the blocks added in double; the third pass writes
// (x - mean) * (inv * w) + b.
#include <math.h>
#include <stdint.h>

#define BLOCK 1024

// One row r.
static inline void layernorm_row(const float *restrict x,
                                 const float *restrict w,
                                 const float *restrict b, float *restrict y,
                                 int64_t r, int64_t cols, float eps) {
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  double sum = 0.0;
  for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
    int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t c = c0; c < c1; c++)
      s += xr[c];
    sum += s;
  }
  float mean = (float)(sum / (double)cols);
  double var = 0.0;
  for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
    int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t c = c0; c < c1; c++) {
      float d = xr[c] - mean;
      s += d * d;
    }
    var += s;
  }
  float inv = (float)(1.0 / sqrt(var / (double)cols + (double)eps));
#pragma omp simd
  for (int64_t c = 0; c < cols; c++)
    yr[c] = (xr[c] - mean) * (inv * w[c]) + b[c];
}

void layernorm(const float *restrict x, const float *restrict w,
               const float *restrict b, float *restrict y, int64_t rows,
               int64_t cols, float eps) {
  // Small problems run on the calling thread: even a one-thread OpenMP
  // region costs more than the work.
  if (rows * cols <= 65536) {
    for (int64_t r = 0; r < rows; r++)
      layernorm_row(x, w, b, y, r, cols, eps);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++)
    layernorm_row(x, w, b, y, r, cols, eps);
}
