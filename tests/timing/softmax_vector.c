// ksearch: backend=c entry=softmax
// Timing fixture, the fast half of a pair with softmax_scalar.c: a correct
// softmax, single-threaded (no OpenMP), written so the compiler vectorizes
// it: float math in LANES independent accumulators, a branch-free
// polynomial exp, three passes over each row (max, exp + sum, scale).
// It must be clearly (several times) faster than softmax_scalar.c.
#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 16
#define BLOCK 1024 // lane sums are flushed to double every BLOCK columns

// exp(x) to ~2 ulp for x <= 88; 0 below the float normal range.
static inline float exp_ps(float x) {
  float xc = x < -87.33654f ? -87.33654f : x;
  xc = xc > 88.0f ? 88.0f : xc;
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
  return p * scale * (float)(x >= -87.33654f);
}

static void softmax_row(const float *restrict xr, float *restrict yr,
                        int64_t cols) {
  int64_t full = cols - cols % LANES;
  float mv[LANES];
  for (int j = 0; j < LANES; j++)
    mv[j] = -INFINITY;
  for (int64_t c = 0; c < full; c += LANES)
    for (int j = 0; j < LANES; j++)
      mv[j] = xr[c + j] > mv[j] ? xr[c + j] : mv[j];
  float m = -INFINITY;
  for (int j = 0; j < LANES; j++)
    m = mv[j] > m ? mv[j] : m;
  for (int64_t c = full; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;

  double sum = 0.0;
  for (int64_t c0 = 0; c0 < full; c0 += BLOCK) {
    int64_t c1 = c0 + BLOCK < full ? c0 + BLOCK : full;
    float sv[LANES] = {0};
    for (int64_t c = c0; c < c1; c += LANES)
      for (int j = 0; j < LANES; j++) {
        float e = exp_ps(xr[c + j] - m);
        yr[c + j] = e;
        sv[j] += e;
      }
    float s = 0.0f;
    for (int j = 0; j < LANES; j++)
      s += sv[j];
    sum += s;
  }
  for (int64_t c = full; c < cols; c++) {
    float e = exp_ps(xr[c] - m);
    yr[c] = e;
    sum += e;
  }

  float inv = (float)(1.0 / sum);
  for (int64_t c = 0; c < cols; c++)
    yr[c] *= inv;
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
}
