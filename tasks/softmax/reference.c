// ksearch: backend=c entry=softmax
// Reference for tasks/softmax: row-wise softmax, the ground truth every
// candidate is compared with (DESIGN.md: Task). Plain and single-threaded on
// purpose: the maximum is subtracted before exp (so large inputs cannot
// overflow) and the exponentials and their sum are computed in double.
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      if (xr[c] > m)
        m = xr[c];
    double sum = 0.0;
    for (int64_t c = 0; c < cols; c++)
      sum += exp((double)xr[c] - m);
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)xr[c] - m) / sum);
  }
}
