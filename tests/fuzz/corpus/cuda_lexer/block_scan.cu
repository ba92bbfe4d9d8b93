// block_scan.cu — inclusive prefix sum of each row, written for ksearch's
// tests: one block per row walks the row in chunks of blockDim elements;
// inside a chunk a warp scan with __shfl_up_sync, the warp totals scanned
// through shared memory, and a carry (the sum of earlier chunks) added to
// every element and passed on to the next chunk.
#include <cuda_runtime.h>

#define BLOCK 256
#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_scan(float v, int lane) {
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    float up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset)
      v += up;
  }
  return v;
}

__global__ void scan_rows(const float *__restrict__ x, float *__restrict__ y,
                          int rows, int cols) {
  __shared__ float warp_sums[WARPS];
  __shared__ float carry;
  int row = blockIdx.x;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0)
    carry = 0.0f;
  __syncthreads();
  for (int c0 = 0; c0 < cols; c0 += BLOCK) {
    int c = c0 + threadIdx.x;
    float v = c < cols ? x[row * cols + c] : 0.0f;
    v = warp_scan(v, lane);
    if (lane == 31)
      warp_sums[warp] = v;
    __syncthreads();
    float w = lane < WARPS ? warp_sums[lane] : 0.0f;
    w = warp_scan(w, lane); // every warp scans the totals: uniform flow
    float before = __shfl_sync(0xffffffffu, w, warp > 0 ? warp - 1 : 0);
    if (warp == 0)
      before = 0.0f;
    float total = __shfl_sync(0xffffffffu, w, WARPS - 1);
    float out = v + before + carry;
    if (c < cols)
      y[row * cols + c] = out;
    __syncthreads(); // everyone has read carry and warp_sums
    if (threadIdx.x == 0)
      carry += total;
    __syncthreads();
  }
}

void scan(const float *x, float *y, int rows, int cols) {
  scan_rows<<<rows, BLOCK>>>(x, y, rows, cols);
}
