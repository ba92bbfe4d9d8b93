// ksearch: backend=c entry=softmax
// Does not compile: an undeclared variable and a missing semicolon.
#include <math.h>
#include <stdint.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    float m = -INFINITY for (int64_t c = 0; c < cols; c++) m =
        x[r * cols + c] > m ? x[r * cols + c] : m;
    y[r * cols] = undeclared_sum / m;
  }
}
