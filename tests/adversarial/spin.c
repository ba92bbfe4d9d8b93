// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=timeout reason=time limit
// Never returns: an endless loop on a volatile counter.
#include <stdint.h>

static volatile uint64_t spins;

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  (void)x;
  (void)y;
  (void)rows;
  (void)cols;
  for (;;)
    spins++; // volatile, so the loop cannot be optimised away
}
