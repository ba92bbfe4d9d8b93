// ksearch: backend=cuda entry=softmax
// ksearch: launch grid=(1) block=(1)
// adversarial: task=softmax expect=incorrect reason=nan
// Host code that would create its own stream, launch the real kernel there
// and return before it finishes, while the entry kernel does nothing. Only
// device code is compiled (a cubin): the host code never runs, so the
// output stays the NaN it was filled with.
#include <cuda_runtime.h>
#include <math.h>
__global__ void real_softmax(const float *x, float *y, long rows, long cols) {
  long r = blockIdx.x;
  float m = -INFINITY, s = 0.f;
  for (long c = 0; c < cols; c++)
    m = fmaxf(m, x[r * cols + c]);
  for (long c = 0; c < cols; c++)
    s += expf(x[r * cols + c] - m);
  for (long c = 0; c < cols; c++)
    y[r * cols + c] = expf(x[r * cols + c] - m) / s;
}
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols) {}
extern "C" void launch_async(const float *x, float *y, long rows, long cols) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  real_softmax<<<rows, 1, 0, s>>>(x, y, rows, cols);
}
