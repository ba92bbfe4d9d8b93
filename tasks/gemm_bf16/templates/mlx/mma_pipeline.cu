// ksearch: backend=mlx entry=gemm_bf16 kernel=cuda
// ksearch: family=mma_pipeline
// ksearch: concepts=tensor_core_mma,ldmatrix_fragments,double_buffering_cp_async,shared_memory_tiling,bank_conflict_padding
// ksearch: param TILE_M in 128,64
// ksearch: param TILE_N in 128,256,64
// ksearch: param TILE_K in 32,64
// ksearch: param WARPS in 8,4
// ksearch: param STAGES in 4,3,2
// ksearch: param GROUP_M in 8,1,4
// ksearch: launch grid=(ceil(cdiv(m, TILE_M) * cdiv(n, TILE_N)) * (32 * WARPS)) threadgroup=(32 * WARPS) smem=(STAGES * (TILE_M * (TILE_K + 8) + TILE_K * (TILE_N + 8)) * 2)
//
// Translated from tasks/gemm_bf16/templates/cuda/mma_pipeline.cu by `ksearch translate --to mlx`: MLX writes the
// __global__ signature, so the kernels are __device__ functions here and the
// body calls ks_mlx_gemm_bf16 with KS_ARGS (the task's arrays, var axes and scalars).
//
// CUDA template for tasks/gemm_bf16, family mma_pipeline (DESIGN.md: Templates):
// tensor cores through mma.sync m16n8k16 bf16 (float32 accumulators, any
// sm_80+), operands moved global -> shared by cp.async in a STAGES-deep ring of TILE_K-deep tiles
// and shared -> registers by ldmatrix (.trans for B, which is row-major
// [k][n]). A block owns a TILE_M x TILE_N tile of c; its warps form a 2 x
// (WARPS/2) grid, each a (TILE_M/2) x (TILE_N/(WARPS/2)) piece. Rows of the
// shared tiles are padded by 8 bf16 (16 bytes) so that the eight 16-byte rows
// one ldmatrix reads fall in distinct banks. GROUP_M tiles of m share a column
// band of b while they run (L2 reuse). k and n multiples of 8 take the
// cp.async path (16-byte chunks, zero-filled past the edges); other shapes
// fall back to element loads, still exact.
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef WARPS
#define WARPS 8
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef TILE_K
#define TILE_K 32
#endif
#define TK TILE_K
#define THREADS (32 * WARPS)
#define WM 2
#define WN (WARPS / 2)
#define WTM (TILE_M / WM)
#define WTN (TILE_N / WN)
#define MI (WTM / 16)
#define NI (WTN / 8)
#define AS (TK + 8)     /* A row stride in bf16 */
#define BS (TILE_N + 8) /* B row stride in bf16 */
#define A_STAGE (TILE_M * AS)
#define B_STAGE (TK * BS)
static_assert(WARPS == 4 || WARPS == 8, "WARPS must be 4 or 8");
static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16");
static_assert(MI * NI <= 64, "warp tile too large for registers");

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
// 16 bytes global -> shared; src_bytes 0 writes zeros (edges)
__device__ __forceinline__ void cp16(void *dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
               "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldm_x4(uint32_t *r, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldm_x4_t(uint32_t *r, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
// d += a * b, m16n8k16, bf16 inputs, f32 accumulators
__device__ __forceinline__ void mma16816(float *d, const uint32_t *a, const uint32_t *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// one k-tile of A (TILE_M x TK) and B (TK x TILE_N) into stage buffers
__device__ __forceinline__ void load_tile(__nv_bfloat16 *sa, __nv_bfloat16 *sb,
                                          const __nv_bfloat16 *a,
                                          const __nv_bfloat16 *b, long m, long n,
                                          long k, long m0, long n0, long k0,
                                          bool vec) {
  const int tid = threadIdx.x;
  if (vec) {
    for (int c = tid; c < TILE_M * TK / 8; c += THREADS) {
      int r = c / (TK / 8), kc = (c % (TK / 8)) * 8;
      long gr = m0 + r, gk = k0 + kc;
      bool in = gr < m && gk < k;
      cp16(sa + r * AS + kc, in ? (const void *)(a + gr * k + gk) : (const void *)a,
           in ? 16 : 0);
    }
    for (int c = tid; c < TK * TILE_N / 8; c += THREADS) {
      int r = c / (TILE_N / 8), nc = (c % (TILE_N / 8)) * 8;
      long gk = k0 + r, gn = n0 + nc;
      bool in = gk < k && gn < n;
      cp16(sb + r * BS + nc, in ? (const void *)(b + gk * n + gn) : (const void *)b,
           in ? 16 : 0);
    }
  } else {
    const __nv_bfloat16 z = __float2bfloat16(0.f);
    for (int c = tid; c < TILE_M * TK; c += THREADS) {
      int r = c / TK, kc = c % TK;
      long gr = m0 + r, gk = k0 + kc;
      sa[r * AS + kc] = gr < m && gk < k ? a[gr * k + gk] : z;
    }
    for (int c = tid; c < TK * TILE_N; c += THREADS) {
      int r = c / TILE_N, nc = c % TILE_N;
      long gk = k0 + r, gn = n0 + nc;
      sb[r * BS + nc] = gk < k && gn < n ? b[gk * n + gn] : z;
    }
  }
}

__device__ __forceinline__ void ks_mlx_gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
              __nv_bfloat16 *__restrict__ c, long m, long n, long k) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16 *sA = (__nv_bfloat16 *)smem_raw;
  __nv_bfloat16 *sB = sA + STAGES * A_STAGE;

  // grouped tile order: GROUP_M row tiles sweep the column tiles together
  const long tiles_m = (m + TILE_M - 1) / TILE_M, tiles_n = (n + TILE_N - 1) / TILE_N;
  const long t = blockIdx.x, per_group = (long)GROUP_M * tiles_n;
  const long first_m = (t / per_group) * GROUP_M;
  const long gsize = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
  const long tm = first_m + (t % per_group) % gsize, tn = (t % per_group) / gsize;
  const long m0 = tm * TILE_M, n0 = tn * TILE_N;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm = warp / WN, wn = warp % WN;
  const bool vec = (k % 8 == 0) && (n % 8 == 0);
  const long ktiles = (k + TK - 1) / TK;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
      for (int e = 0; e < 4; e++)
        acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles)
      load_tile(sA + s * A_STAGE, sB + s * B_STAGE, a, b, m, n, k, m0, n0, (long)s * TK,
                vec);
    cp_commit();
  }
  for (long kt = 0; kt < ktiles; kt++) {
    cp_wait<STAGES - 2>();
    __syncthreads(); // tile kt is in; the slot refilled below was read at kt-1
    long nk = kt + STAGES - 1;
    if (nk < ktiles) {
      int sl = (int)(nk % STAGES);
      load_tile(sA + sl * A_STAGE, sB + sl * B_STAGE, a, b, m, n, k, m0, n0, nk * TK, vec);
    }
    cp_commit();
    const __nv_bfloat16 *ta = sA + (kt % STAGES) * A_STAGE;
    const __nv_bfloat16 *tb = sB + (kt % STAGES) * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < TK; kk += 16) {
      uint32_t af[MI][4], bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; i++) {
        // lanes 0-15: rows 0-15 at k 0; lanes 16-31: rows 0-15 at k 8
        int r = wm * WTM + i * 16 + (lane & 15);
        ldm_x4(af[i], ta + r * AS + kk + (lane >> 4) * 8);
      }
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        // matrices (k0-7,n0) (k8-15,n0) (k0-7,n8) (k8-15,n8), transposed
        int kr = kk + (lane & 7) + ((lane >> 3) & 1) * 8;
        int nc = wn * WTN + j * 8 + (lane >> 4) * 8;
        uint32_t r4[4];
        ldm_x4_t(r4, tb + kr * BS + nc);
        bf[j][0] = r4[0];
        bf[j][1] = r4[1];
        bf[j + 1][0] = r4[2];
        bf[j + 1][1] = r4[3];
      }
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
          mma16816(acc[i][j], af[i], bf[j]);
    }
  }
  cp_wait<0>();

  // accumulator (row g / g+8, cols 2q, 2q+1) -> bf16, nearest even
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        long r = m0 + wm * WTM + i * 16 + g + h * 8;
        long col = n0 + wn * WTN + j * 8 + q * 2;
        if (r >= m)
          continue;
        float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (col + 1 < n && n % 2 == 0) {
          *(__nv_bfloat162 *)(c + r * n + col) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (col < n)
            c[r * n + col] = __float2bfloat16_rn(v0);
          if (col + 1 < n)
            c[r * n + col + 1] = __float2bfloat16_rn(v1);
        }
      }
}

// ksearch: body
ks_mlx_gemm_bf16(KS_ARGS);
