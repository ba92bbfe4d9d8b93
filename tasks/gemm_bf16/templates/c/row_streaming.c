// ksearch: backend=c entry=gemm_bf16
// ksearch: family=row_streaming
// ksearch: concepts=cache_blocking,simd_vectorization,loop_unrolling,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param TILE_K in 64,32,128,256
// ksearch: param TILE_N in 512,256,1024,2048
// ksearch: param ROWS in 2,1,4
// ksearch: param SCHED in 0,1,2
//
// Template for tasks/gemm_bf16, family row_streaming (i-k-j order): each
// thread takes ROWS rows of C and a TILE_N-wide slice of them, kept as float
// accumulators, and streams the B panel [TILE_K x TILE_N] (widened from
// bfloat16 on the fly) through them: c[i, j..] += a[i,p] * b[p, j..]. The
// vectorized axis is n, so no packing and no transposition; the panel stays
// in L2 across the ROWS rows (DESIGN.md: Candidate file).
//   VEC    floats per SIMD vector
//   TILE_K rows of B per panel; TILE_N its width (cache blocking)
//   ROWS   rows of A sharing one pass over the panel
//   SCHED  OpenMP schedule over (row block, n slice): 0 static, 1 dynamic, 2
//   guided
#include <stdint.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef TILE_K
#define TILE_K 64
#endif
#ifndef TILE_N
#define TILE_N 512
#endif
#ifndef ROWS
#define ROWS 2
#endif
#ifndef SCHED
#define SCHED 0
#endif
_Static_assert(TILE_N % VEC == 0, "TILE_N must be a multiple of VEC");

#define KS_STR_(x) #x
#define KS_PRAGMA(x) _Pragma(KS_STR_(x))
#if SCHED == 0
#define KS_KIND static
#elif SCHED == 1
#define KS_KIND dynamic
#else
#define KS_KIND guided
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef uint16_t vh __attribute__((vector_size(VEC * 2)));
typedef uint32_t vu __attribute__((vector_size(VEC * 4)));

static inline float bf(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t to_bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
// VEC bfloat16 values widened to floats (a shift into the high half)
static inline vf vload_bf(const uint16_t *p) {
  vh h;
  memcpy(&h, p, sizeof h);
  vu u = __builtin_convertvector(h, vu) << 16;
  vf f;
  memcpy(&f, &u, sizeof f);
  return f;
}

void gemm_bf16(const uint16_t *restrict a, const uint16_t *restrict b,
               uint16_t *restrict c, int64_t m, int64_t n, int64_t k) {
  if (m * n * k < 4096) { // tiny: the setup would cost more than the work
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        float s = 0;
        for (int64_t p = 0; p < k; p++)
          s += bf(a[i * k + p]) * bf(b[p * n + j]);
        c[i * n + j] = to_bf(s);
      }
    return;
  }
  int64_t rb = (m + ROWS - 1) / ROWS, nb = (n + TILE_N - 1) / TILE_N;
  int par = m * n * k > (1 << 18);
  KS_PRAGMA(omp parallel for schedule(KS_KIND) if (par))
  for (int64_t t = 0; t < rb * nb; t++) {
    int64_t i0 = (t / nb) * ROWS, j0 = (t % nb) * TILE_N;
    int64_t rows = m - i0 < ROWS ? m - i0 : ROWS;
    int64_t w = n - j0 < TILE_N ? n - j0 : TILE_N;
    int64_t wv = w / VEC * VEC; // vector part; the rest is scalar
    float acc[ROWS][TILE_N] __attribute__((aligned(64)));
    for (int r = 0; r < ROWS; r++)
      memset(acc[r], 0, sizeof(float) * (size_t)w);
    for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
      int64_t p1 = p0 + TILE_K < k ? p0 + TILE_K : k;
      for (int r = 0; r < rows; r++) {
        const uint16_t *ar = a + (i0 + r) * k;
        float *cr = acc[r];
        for (int64_t p = p0; p < p1; p++) {
          vf as = (vf){0} + bf(ar[p]);
          float asc = bf(ar[p]);
          const uint16_t *br = b + p * n + j0;
          for (int64_t j = 0; j < wv; j += VEC) {
            vf cv;
            memcpy(&cv, cr + j, sizeof cv);
            cv += as * vload_bf(br + j);
            memcpy(cr + j, &cv, sizeof cv);
          }
          for (int64_t j = wv; j < w; j++)
            cr[j] += asc * bf(br[j]);
        }
      }
    }
    for (int r = 0; r < rows; r++)
      for (int64_t j = 0; j < w; j++)
        c[(i0 + r) * n + j0 + j] = to_bf(acc[r][j]);
  }
}
