// ksearch: backend=c entry=layernorm_bf16
// Reference for tasks/layernorm_bf16: layer normalisation of bfloat16 rows
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

void layernorm_bf16(const uint16_t *restrict x, const uint16_t *restrict w,
                    const uint16_t *restrict b, uint16_t *restrict y,
                    int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; r++) {
    const uint16_t *xr = x + r * cols;
    uint16_t *yr = y + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++)
      sum += bf(xr[c]);
    double mean = sum / (double)cols;
    double var = 0.0;
    for (int64_t c = 0; c < cols; c++) {
      double d = bf(xr[c]) - mean;
      var += d * d;
    }
    var /= (double)cols;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = to_bf((bf(xr[c]) - mean) * inv * bf(w[c]) + bf(b[c]));
  }
}
