// softmax_warp.cu — row softmax in CUDA, written for ksearch's tests: one
// block per row, a block-stride loop over the row (coalesced loads), warp
// shuffle reductions for the max and the sum, a second shuffle stage over
// the per-warp partials kept in shared memory. The argument order follows
// tasks/softmax (input, output, rows, cols as 64-bit integers), so that its
// translation can be checked against the task.
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#define BLOCK 256
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(FULL_MASK, v, o);
  return v;
}

// Every warp runs the second stage, so control flow stays uniform.
__device__ float block_max(float v, float *red) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_max(v);
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? red[lane] : -FLT_MAX;
  v = warp_max(v);
  __syncthreads(); // red is reused by the next reduction
  return v;
}

__device__ float block_sum(float v, float *red) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? red[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads();
  return v;
}

__global__ void __launch_bounds__(BLOCK)
    softmax_rows(const float *__restrict__ x, float *__restrict__ y,
                 int64_t rows, int64_t cols) {
  __shared__ float red[32];
  int64_t row = blockIdx.x;
  if (row >= rows)
    return;
  const float *xr = x + row * cols;
  float *yr = y + row * cols;
  float m = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    m = fmaxf(m, xr[c]);
  m = block_max(m, red);
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    s += expf(xr[c] - m);
  s = block_sum(s, red);
  float inv = 1.0f / s;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = expf(xr[c] - m) * inv;
}

// Host side: one block of BLOCK threads per row.
void softmax(const float *x, float *y, int64_t rows, int64_t cols) {
  softmax_rows<<<rows, BLOCK>>>(x, y, rows, cols);
}
