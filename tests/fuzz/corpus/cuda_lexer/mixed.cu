#include <cuda_fp16.h>
#define N 4
namespace a { __device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); } }
__global__ void k(float *x) { /* c */ const char *s = "str\"q"; char c = '\n'; x[0] = a::f(x[0]) + 1e-3f + 0x1p4; }
#if __CUDA_ARCH__ >= 800
int y;
#else
int z;
#endif
int main() { k<<<1, 32>>>(0); }
