// ksearch: backend=cuda entry=gemm_bf16
// ksearch: family=wmma_tiled
// ksearch: concepts=tensor_core_mma,shared_memory_tiling,register_blocking,vector_loads_128
// ksearch: param TILE_M in 128,64
// ksearch: param TILE_N in 128,64
// ksearch: param WARPS in 8,4
// ksearch: launch grid=(cdiv(n, TILE_N), cdiv(m, TILE_M)) block=(32 * WARPS, 1) smem=(max(2 * (TILE_M * 40 + 32 * (TILE_N + 8)), 4 * TILE_M * (TILE_N + 4)))
//
// CUDA template for tasks/gemm_bf16, family wmma_tiled (DESIGN.md: Templates):
// tensor cores through the portable nvcuda::wmma API (16x16x16 bf16
// fragments, float accumulators), a different instruction family from
// mma_pipeline's raw mma.sync. Global loads go through registers (16-byte
// loads of the next k-tile are issued before the current one is computed:
// register double buffering, no cp.async), one shared stage. The float
// accumulators leave through shared memory (store_matrix_sync) so that the
// edges of c are written with bounds checks and rounded to bf16 once.
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>
using namespace nvcuda;

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef WARPS
#define WARPS 8
#endif
#define TK 32
#define THREADS (32 * WARPS)
#define WM 2
#define WN (WARPS / 2)
#define WTM (TILE_M / WM)
#define WTN (TILE_N / WN)
#define FM (WTM / 16)
#define FN (WTN / 16)
#define AS (TK + 8)
#define BS (TILE_N + 8)
#define CS (TILE_N + 4)
#define ACH (TILE_M * TK / 8 / THREADS) /* 16-byte chunks per thread */
#define BCH (TK * TILE_N / 8 / THREADS)
static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16");
static_assert(ACH >= 1 && BCH >= 1, "tile too small for the block");

typedef uint4 chunk;

__device__ __forceinline__ chunk ld_chunk(const __nv_bfloat16 *p, long rows, long cols,
                                          long r, long c, bool vec) {
  chunk z = make_uint4(0, 0, 0, 0);
  if (r >= rows || c >= cols)
    return z;
  if (vec)
    return __ldg((const uint4 *)(p + r * cols + c));
  unsigned short h[8];
  const unsigned short *s = (const unsigned short *)p;
#pragma unroll
  for (int e = 0; e < 8; e++)
    h[e] = c + e < cols ? s[r * cols + c + e] : 0;
  z.x = h[0] | (uint32_t)h[1] << 16;
  z.y = h[2] | (uint32_t)h[3] << 16;
  z.z = h[4] | (uint32_t)h[5] << 16;
  z.w = h[6] | (uint32_t)h[7] << 16;
  return z;
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
              __nv_bfloat16 *__restrict__ c, long m, long n, long k) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16 *sA = (__nv_bfloat16 *)smem_raw;
  __nv_bfloat16 *sB = sA + TILE_M * AS;
  float *sC = (float *)smem_raw; // reused after the main loop

  const long m0 = (long)blockIdx.y * TILE_M, n0 = (long)blockIdx.x * TILE_N;
  const int tid = threadIdx.x, warp = tid >> 5;
  const int wm = warp / WN, wn = warp % WN;
  const bool vec = (k % 8 == 0) && (n % 8 == 0);
  const long ktiles = (k + TK - 1) / TK;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::fill_fragment(acc[i][j], 0.f);

  chunk ra[ACH], rb[BCH];
#define FETCH(k0)                                                              \
  do {                                                                         \
    _Pragma("unroll") for (int u = 0; u < ACH; u++) {                          \
      int cidx = tid + u * THREADS;                                            \
      ra[u] = ld_chunk(a, m, k, m0 + cidx / (TK / 8), (k0) + (cidx % (TK / 8)) * 8, vec); \
    }                                                                          \
    _Pragma("unroll") for (int u = 0; u < BCH; u++) {                          \
      int cidx = tid + u * THREADS;                                            \
      rb[u] = ld_chunk(b, k, n, (k0) + cidx / (TILE_N / 8), n0 + (cidx % (TILE_N / 8)) * 8, vec); \
    }                                                                          \
  } while (0)
  FETCH(0L);
  for (long kt = 0; kt < ktiles; kt++) {
    __syncthreads(); // the previous tile's fragments are loaded
#pragma unroll
    for (int u = 0; u < ACH; u++) {
      int cidx = tid + u * THREADS;
      *(chunk *)(sA + (cidx / (TK / 8)) * AS + (cidx % (TK / 8)) * 8) = ra[u];
    }
#pragma unroll
    for (int u = 0; u < BCH; u++) {
      int cidx = tid + u * THREADS;
      *(chunk *)(sB + (cidx / (TILE_N / 8)) * BS + (cidx % (TILE_N / 8)) * 8) = rb[u];
    }
    __syncthreads();
    if (kt + 1 < ktiles)
      FETCH((kt + 1) * TK); // in flight while the tensor cores work
#pragma unroll
    for (int kk = 0; kk < TK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[FN];
#pragma unroll
      for (int i = 0; i < FM; i++)
        wmma::load_matrix_sync(fa[i], sA + (wm * WTM + i * 16) * AS + kk, AS);
#pragma unroll
      for (int j = 0; j < FN; j++)
        wmma::load_matrix_sync(fb[j], sB + kk * BS + wn * WTN + j * 16, BS);
#pragma unroll
      for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
          wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
  __syncthreads(); // sA/sB are free: the float tile goes there
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::store_matrix_sync(sC + (wm * WTM + i * 16) * CS + wn * WTN + j * 16, acc[i][j],
                              CS, wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < TILE_M * TILE_N / 2; e += THREADS) {
    int r = e / (TILE_N / 2), cc = (e % (TILE_N / 2)) * 2;
    long gr = m0 + r, gc = n0 + cc;
    if (gr >= m)
      continue;
    float v0 = sC[r * CS + cc], v1 = sC[r * CS + cc + 1];
    if (gc + 1 < n && n % 2 == 0) {
      *(__nv_bfloat162 *)(c + gr * n + gc) = __floats2bfloat162_rn(v0, v1);
    } else {
      if (gc < n)
        c[gr * n + gc] = __float2bfloat16_rn(v0);
      if (gc + 1 < n)
        c[gr * n + gc + 1] = __float2bfloat16_rn(v1);
    }
  }
}
