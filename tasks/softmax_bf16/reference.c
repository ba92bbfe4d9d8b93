// ksearch: backend=c entry=softmax_bf16
// Reference for tasks/softmax_bf16: row-wise softmax of bfloat16 data
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

void softmax_bf16(const uint16_t *restrict x, uint16_t *restrict y,
                  int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const uint16_t *xr = x + r * cols;
    uint16_t *yr = y + r * cols;
    double m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      if (bf(xr[c]) > m)
        m = bf(xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++)
      sum += exp(bf(xr[c]) - m);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = to_bf(exp(bf(xr[c]) - m) / sum);
  }
}
