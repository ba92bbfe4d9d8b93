// ksearch: backend=cuda entry=gemm_bf16
// ksearch: family=simt_register
// ksearch: concepts=register_blocking,shared_memory_tiling,bank_conflict_padding
// ksearch: param TILE_M in 128,64
// ksearch: param TILE_N in 128,64
// ksearch: param TILE_K in 16,8,32
// ksearch: launch grid=(cdiv(n, TILE_N), cdiv(m, TILE_M)) block=((TILE_M / 8) * (TILE_N / 8), 1)
//
// CUDA template for tasks/gemm_bf16, family simt_register (DESIGN.md:
// Templates): no tensor cores; each thread owns an 8 x 8 register tile of c
// and does float FMAs from shared tiles (A stored transposed, k-major, so a
// thread reads 8 consecutive rows of A and 8 consecutive columns of B as
// float4 pairs). Widened to float once when staged. The reference point for
// what the tensor-core families buy.
#include <cuda_bf16.h>

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#define TX (TILE_N / 8)
#define TY (TILE_M / 8)
#define THREADS (TX * TY)

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
              __nv_bfloat16 *__restrict__ c, long m, long n, long k) {
  __shared__ __align__(16) float sA[TILE_K][TILE_M + 4]; // k-major
  __shared__ __align__(16) float sB[TILE_K][TILE_N + 4];
  const long m0 = (long)blockIdx.y * TILE_M, n0 = (long)blockIdx.x * TILE_N;
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
      acc[i][j] = 0.f;
  for (long k0 = 0; k0 < k; k0 += TILE_K) {
    for (int e = tid; e < TILE_M * TILE_K; e += THREADS) {
      int r = e / TILE_K, kk = e % TILE_K;
      long gr = m0 + r, gk = k0 + kk;
      sA[kk][r] = gr < m && gk < k ? __bfloat162float(a[gr * k + gk]) : 0.f;
    }
    for (int e = tid; e < TILE_K * TILE_N; e += THREADS) {
      int kk = e / TILE_N, cc = e % TILE_N;
      long gk = k0 + kk, gc = n0 + cc;
      sB[kk][cc] = gk < k && gc < n ? __bfloat162float(b[gk * n + gc]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
      float av[8], bv[8];
      float4 a0 = *(const float4 *)&sA[kk][ty * 8], a1 = *(const float4 *)&sA[kk][ty * 8 + 4];
      float4 b0 = *(const float4 *)&sB[kk][tx * 8], b1 = *(const float4 *)&sB[kk][tx * 8 + 4];
      av[0] = a0.x; av[1] = a0.y; av[2] = a0.z; av[3] = a0.w;
      av[4] = a1.x; av[5] = a1.y; av[6] = a1.z; av[7] = a1.w;
      bv[0] = b0.x; bv[1] = b0.y; bv[2] = b0.z; bv[3] = b0.w;
      bv[4] = b1.x; bv[5] = b1.y; bv[6] = b1.z; bv[7] = b1.w;
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
          acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; i++) {
    long r = m0 + ty * 8 + i;
    if (r >= m)
      continue;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      long cc = n0 + tx * 8 + j;
      if (cc < n)
        c[r * n + cc] = __float2bfloat16_rn(acc[i][j]);
    }
  }
}
