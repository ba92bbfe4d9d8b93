// ksearch: backend=cuda entry=gemm_bf16
// ksearch: launch grid=(cdiv(n, 16), cdiv(m, 16)) block=(256, 1)
//
// Device baseline for tasks/gemm_bf16 on CUDA (DESIGN.md: Evaluation,
// baselines): the textbook shared-memory tiled kernel, 16 x 16 tiles, one
// output per thread, float FMAs, no tensor cores. cuBLAS is not linked here
// (only device code of a candidate or baseline is built); bench/gpu/kernels16.sh
// times cuBLAS through torch.matmul in the same call instead.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
    gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
              __nv_bfloat16 *__restrict__ c, long m, long n, long k) {
  __shared__ float sa[16][17], sb[16][17];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long row = (long)blockIdx.y * 16 + ty, col = (long)blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (long k0 = 0; k0 < k; k0 += 16) {
    sa[ty][tx] = row < m && k0 + tx < k ? __bfloat162float(a[row * k + k0 + tx]) : 0.f;
    sb[ty][tx] = k0 + ty < k && col < n ? __bfloat162float(b[(k0 + ty) * n + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < 16; p++)
      acc = fmaf(sa[ty][p], sb[p][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = __float2bfloat16_rn(acc);
}
