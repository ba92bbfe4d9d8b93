// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=mismatch
// Writes zeros: every output is finite, none is right.
#include <stdint.h>
#include <string.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  (void)x;
  memset(y, 0, (size_t)(rows * cols) * sizeof(float));
}
