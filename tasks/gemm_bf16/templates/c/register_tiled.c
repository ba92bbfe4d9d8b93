// ksearch: backend=c entry=gemm_bf16
// ksearch: family=register_tiled
// ksearch: concepts=cache_blocking,simd_vectorization,multi_accumulator,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param MR in 4,6,2,8
// ksearch: param NV in 2,1,3,4
// ksearch: param TILE_K in 256,128,512,4096
// ksearch: param SCHED in 0,1,2
//
// Template for tasks/gemm_bf16, family register_tiled: A and B are widened
// from bfloat16 to float once (B padded to a multiple of the register tile's
// width, so the micro-kernel never needs a column tail); every thread owns
// MR x (NV*VEC) output tiles whose accumulators stay in vector registers
// while k runs, in TILE_K slices kept in a float row of C (L1/L2 reuse of
// the B panel). Rows past m read row m-1 and are dropped (DESIGN.md:
// Candidate file; parameters arrive as -D macros).
//   VEC    floats per SIMD vector (GCC vector extensions)
//   MR     rows of the register tile (one broadcast of A per row per k)
//   NV     vectors across n in the register tile
//   TILE_K k values per slice of the register tile's accumulation
//   SCHED  OpenMP schedule over tiles: 0 static, 1 dynamic, 2 guided
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef MR
#define MR 4
#endif
#ifndef NV
#define NV 2
#endif
#ifndef TILE_K
#define TILE_K 256
#endif
#ifndef SCHED
#define SCHED 0
#endif
_Static_assert(MR >= 1 && MR <= 8 && NV >= 1 && NV <= 4, "MR 1..8, NV 1..4");
_Static_assert(MR *NV <= 24, "register tile too large");

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
#define NB (NV * VEC)

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
static inline vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

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
  int64_t np = (n + NB - 1) / NB * NB;
  float *af = malloc(sizeof(float) * (size_t)(m * k));
  float *bp = malloc(sizeof(float) * (size_t)(k * np));
  if (!af || !bp) {
    free(af);
    free(bp);
    return;
  }
  int par = m * n * k > (1 << 18);
#pragma omp parallel if (par)
  {
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < m * k; i++)
      af[i] = bf(a[i]);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < np; j++)
        bp[p * np + j] = j < n ? bf(b[p * n + j]) : 0.0f;
    int64_t tm = (m + MR - 1) / MR, tn = np / NB;
    // j tiles outer: consecutive tiles of one thread share the B panel
    KS_PRAGMA(omp for schedule(KS_KIND))
    for (int64_t t = 0; t < tm * tn; t++) {
      int64_t j0 = (t / tm) * NB, i0 = (t % tm) * MR;
      const float *ar[MR];
      for (int r = 0; r < MR; r++)
        ar[r] = af + (i0 + r < m ? i0 + r : m - 1) * k;
      vf acc[MR][NV];
      for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++)
          acc[r][v] = (vf){0};
      for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
        int64_t p1 = p0 + TILE_K < k ? p0 + TILE_K : k;
        for (int64_t p = p0; p < p1; p++) {
          const float *brow = bp + p * np + j0;
          vf bv[NV];
          for (int v = 0; v < NV; v++)
            bv[v] = vload(brow + v * VEC);
          for (int r = 0; r < MR; r++) {
            vf as = (vf){0} + ar[r][p];
            for (int v = 0; v < NV; v++)
              acc[r][v] += as * bv[v];
          }
        }
      }
      for (int r = 0; r < MR && i0 + r < m; r++) {
        float tmp[NB];
        for (int v = 0; v < NV; v++)
          vstore(tmp + v * VEC, acc[r][v]);
        for (int64_t j = 0; j < NB && j0 + j < n; j++)
          c[(i0 + r) * n + j0 + j] = to_bf(tmp[j]);
      }
    }
  }
  free(af);
  free(bp);
}
