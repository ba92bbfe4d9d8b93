// ksearch: backend=c entry=rmsnorm
// Hand-written fast rmsnorm for tasks/rmsnorm, used by tests as a known-good,
// known-fast candidate. Rows are split across OpenMP threads; the sum of
// squares is a vectorized float reduction per block of columns, blocks are
// added in double (float speed, near-double accuracy on long rows); the
// second pass rereads the row from cache and scales it.
#include <math.h>
#include <stdint.h>

#define BLOCK 1024

// One row r.
static inline void rmsnorm_row(const float *restrict x, const float *restrict w,
                               float *restrict y, int64_t r, int64_t cols,
                               float eps) {
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  double ss = 0.0;
  for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
    int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t c = c0; c < c1; c++)
      s += xr[c] * xr[c];
    ss += s;
  }
  float inv = (float)(1.0 / sqrt(ss / (double)cols + (double)eps));
#pragma omp simd
  for (int64_t c = 0; c < cols; c++)
    yr[c] = xr[c] * inv * w[c];
}

void rmsnorm(const float *restrict x, const float *restrict w,
             float *restrict y, int64_t rows, int64_t cols, float eps) {
  // Small problems run on the calling thread: even a one-thread OpenMP
  // region costs more than the work.
  if (rows * cols <= 65536) {
    for (int64_t r = 0; r < rows; r++)
      rmsnorm_row(x, w, y, r, cols, eps);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++)
    rmsnorm_row(x, w, y, r, cols, eps);
}
