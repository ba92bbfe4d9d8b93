// ksearch: backend=cuda entry=softmax
// ksearch: launch grid=(1) block=(1)
// adversarial: task=softmax expect=compile_error reason=separate compilation
// Launches the real work from the device into a fire-and-forget stream and
// returns at once, so that the timed kernel would look instant. Device-side
// launches need relocatable device code (-rdc) and the device runtime,
// which ksearch's build never uses: nvcc refuses it. (Had it run, sync()
// synchronizes the whole context before the end of a timed call anyway.)
#include <math.h>
__global__ void work(const float *x, float *y, long rows, long cols) {
  for (long i = 0; i < rows * cols; i++)
    y[i] = x[i];
}
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols) {
  work<<<1, 1, 0, cudaStreamFireAndForget>>>(x, y, rows, cols);
}
