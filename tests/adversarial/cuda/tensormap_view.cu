// ksearch: backend=cuda entry=softmax
// ksearch: tensormap xm of=x box=(8, 8) view=(cols, rows * 2)
// ksearch: launch grid=(rows / 64) block=(64)
// adversarial: task=softmax expect=compile_error reason=element count
// A tensor map whose view claims twice the elements of x: through it a bulk
// tensor copy would read the allocation after x. The build refuses the line
// (view product != element count) before nvcc; the kernel never runs.
#include <math.h>
struct alignas(64) tmap_t {
  unsigned long long opaque[16];
};
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols, const __grid_constant__ tmap_t xm) {
  long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  for (long j = 0; j < cols; j++)
    y[r * cols + j] = x[r * cols + j] + (float)xm.opaque[0];
}
