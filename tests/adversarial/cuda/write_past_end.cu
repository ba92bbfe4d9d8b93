// ksearch: backend=cuda entry=softmax
// ksearch: launch grid=(rows / 64) block=(64)
// adversarial: task=softmax expect=incorrect reason=past the end
// Correct softmax (a thread per row), plus one float written just past the
// end of y on the device, as a sloppy vectorized tail would.
#include <math.h>
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols) {
  long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  float m = -INFINITY, s = 0.f;
  for (long c = 0; c < cols; c++)
    m = fmaxf(m, xr[c]);
  for (long c = 0; c < cols; c++)
    s += expf(xr[c] - m);
  for (long c = 0; c < cols; c++)
    yr[c] = expf(xr[c] - m) / s;
  if (r == rows - 1)
    y[rows * cols] = 0.f;
}
