// ksearch: backend=c entry=softmax
// Calls system(): rejected by the primitive check before any compiler runs.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  system("true");
  for (int64_t i = 0; i < rows * cols; i++)
    y[i] = x[i];
}
