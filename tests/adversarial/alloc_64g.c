// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=oom reason=memory
// Asks for 64 GiB of scratch and writes all of it, even when malloc says no.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SCRATCH (64ULL << 30)

static void softmax_row(const float *xr, float *yr, int64_t cols) {
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;
  double sum = 0.0;
  for (int64_t c = 0; c < cols; c++)
    sum += exp((double)(xr[c] - m));
  for (int64_t c = 0; c < cols; c++)
    yr[c] = (float)(exp((double)(xr[c] - m)) / sum);
}

static char *volatile scratch;

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  char *p = malloc(SCRATCH);
  if (p == NULL) {
    // "Cannot happen on a big machine": carry on regardless.
  }
  scratch = p;
  memset(scratch, 0x5a, SCRATCH);
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  y[0] += (float)(scratch[SCRATCH - 1] - 0x5a);
}
