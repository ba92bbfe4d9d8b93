// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=nan
// Returns without writing the output, hoping stale buffers look right.
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  // Looks at the problem, decides there is nothing to do.
  if (rows <= 0 || cols <= 0 || x == y)
    return;
}
