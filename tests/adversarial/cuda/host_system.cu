// ksearch: backend=cuda entry=softmax
// ksearch: launch grid=(rows / 64) block=(64)
// adversarial: task=softmax expect=ok reason=
// A correct kernel beside host code that calls system() from a static
// constructor and from main(). Only device code is compiled (a cubin), so
// none of it ever runs: the evaluation passes and the marker file
// /tmp/ksearch_adv_cuda_system is never created (the test checks).
#include <math.h>
#include <stdlib.h>
static int g_ran = system("touch /tmp/ksearch_adv_cuda_system");
int main() { return system("touch /tmp/ksearch_adv_cuda_system"); }
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
}
