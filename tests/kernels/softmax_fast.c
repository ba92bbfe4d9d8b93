// ksearch: backend=c entry=softmax
// Hand-written fast softmax for tasks/softmax, used by tests as a known-good,
// known-fast candidate. Rows are split across OpenMP threads; each row takes
// three vectorized passes (max, exp + sum, scale) while it sits in L1/L2.
// exp is a branch-free polynomial (Cephes expf) so the compiler can vectorize
// it without -ffast-math; the row sum is accumulated in float SIMD lanes per
// block and the blocks in double, so long rows keep float-level accuracy.
#include <math.h>
#include <stdint.h>
#include <string.h>

#define BLOCK 1024

// exp(x) to ~2 ulp for x <= 88; 0 below the float normal range; NaN stays NaN.
static inline float exp_ps(float x) {
  float xc = x < -87.33654f ? -87.33654f : x;
  xc = xc > 88.0f ? 88.0f : xc;
  // Round x*log2(e) to the nearest integer with the 1.5*2^23 trick.
  float kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = ((int32_t)kf + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float res = p * scale;
  // A multiply, not a select: keeps callers branch-free (and NaN * 0 = NaN).
  return res * (float)(x >= -87.33654f);
}

// One row r.
static inline void softmax_row(const float *restrict x, float *restrict y,
                               int64_t r, int64_t cols) {
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  if (cols < 16) {
    // Short rows: vector loop set-up costs more than the work; libm's expf
    // keeps these loops scalar.
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < cols; c++) {
      yr[c] = expf(xr[c] - m);
      s += yr[c];
    }
    float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; c++)
      yr[c] *= inv;
    return;
  }
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t c = 0; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;
  double sum = 0.0;
  for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
    int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t c = c0; c < c1; c++) {
      float e = exp_ps(xr[c] - m);
      yr[c] = e;
      s += e;
    }
    sum += s;
  }
  float inv = (float)(1.0 / sum);
#pragma omp simd
  for (int64_t c = 0; c < cols; c++)
    yr[c] *= inv;
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  // Small problems run on the calling thread: even a one-thread OpenMP
  // region costs more than the work.
  if (rows * cols <= 65536) {
    for (int64_t r = 0; r < rows; r++)
      softmax_row(x, y, r, cols);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x, y, r, cols);
}
