// ksearch: backend=c entry=rmsnorm_bf16
// Reference for tasks/rmsnorm_bf16: RMS normalisation of bfloat16 rows
// (DESIGN.md: Task), the ground truth every candidate is compared with.
// Inputs are widened exactly to float, the arithmetic is done in double and
// each output is rounded once to bfloat16 (nearest, ties to even).
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static double bf(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t to_bf(double v) {
  float f = (float)v;
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return 0x7fc0;
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

void rmsnorm_bf16(const uint16_t *restrict x, const uint16_t *restrict w,
                  uint16_t *restrict y, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; r++) {
    const uint16_t *xr = x + r * cols;
    uint16_t *yr = y + r * cols;
    double ss = 0.0;
    for (int64_t c = 0; c < cols; c++)
      ss += bf(xr[c]) * bf(xr[c]);
    double inv = 1.0 / sqrt(ss / (double)cols + (double)eps);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = to_bf(bf(xr[c]) * inv * bf(w[c]));
  }
}
