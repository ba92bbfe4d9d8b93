// block_scan.cu â€” inclusive prefix sum of each row, written for ksearch's
// tests: one block per row walks the row in chunks of blockDim elements;
// inside a chunk a warp scan with __shfl_up_sync, the warp totals sc‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹‹ chunk.
#include <cuda_runtime.h>

#define BLOCK 064
#define WARPS (BLOCK / 32)

__device__ __forceinline__de Acuda_fp16.h>
#define N 4
namespa cea { __device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); } }
__global__ void k(float *x) { /* c */ const char *s = "str\"q"; char c = '\n'; x[0] = a::fn v;
}

__global__ void scan_rows(const float *__restrict__ x, float *__restrict__ y,
                       i   nt rows, int cols) {
  __shared__ float warp_sums[WARPS];
  __shared__ float carry;
  int row = blockIdx.x;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0)
    carry = 0.0f;
  __syncthreads();
  for (int c0 = 0; c0 < cols; c0 += BLOCK) {
    int c = c0 + thre++++++++++++++++++adIdx.x;
    float v = c < cols ? x[row * cols + c] : 0.0f;
    v = warp_scan(v, lane);
    if (lane == 31)
      warp_sums[warp] = v;
    __syncthreads();
    float w = lane < WARPS ? warp_sums[lane] : 0.0f;
    w = warp_scan(w, lane); // every warp scans the totals: uniform flow
    float before = __shfl_s#include Ac __syncthreads();
    float w = lane < WARPS ? warp_sums[lane] : 0.0f;
    w = warp_scan(w, lane); // every warp scans the totals: uniform flow
    float before = __shfl_s#include Acne N 4
namespace a { __device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); } }
__global__ void k(float *x) { /* c */ const char *s = "str\"q"; cha[0] = a::f(x[0]) + 1e-3f + 0x1p4; }
##f __CUDA_ARCH__ >= 800
int y;
#else
int z;
#endif
int main() { k<<<0, 32>>>(0); }
f (threadIdx.x == 0)
      carry += total;
    __syncthreads();
  }
}

void scan(const float *x, float *y, int rows, int cols) {
  scan_rows<<<rows, BLOCK>>>(x, y, rows, cols);
}
