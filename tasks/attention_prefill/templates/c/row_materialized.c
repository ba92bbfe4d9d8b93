// ksearch: backend=c entry=attention_prefill
// ksearch: family=row_materialized
// ksearch: concepts=simd_vectorization,multi_accumulator,fast_exp_poly,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param NACC in 2,1,4
// ksearch: param SCHED in 2,0,1
// ksearch: param CHUNK in 0,4,16
//
// Template for tasks/attention_prefill, family row_materialized: one task per
// (batch, q head, query); the row of i+1 causal scores is materialized in a
// per-thread float buffer (dot products over head_dim, bfloat16 widened on
// the fly), then an exact two-pass softmax (max, exp and sum) and the
// weighted sum of V rows. No tiling: each query streams its K and V prefix
// from cache, so it is the baseline the blocked family must beat.
//   VEC    floats per SIMD vector
//   NACC   independent accumulators in a dot product (VEC*NACC floats per step)
//   SCHED  OpenMP schedule over queries: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size; 0 = the schedule's default
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef NACC
#define NACC 2
#endif
#ifndef SCHED
#define SCHED 2
#endif
#ifndef CHUNK
#define CHUNK 0
#endif

#define KS_STR_(x) #x
#define KS_PRAGMA(x) _Pragma(KS_STR_(x))
#if SCHED == 0
#define KS_KIND static
#elif SCHED == 1
#define KS_KIND dynamic
#else
#define KS_KIND guided
#endif
#if CHUNK > 0
#define KS_SCHEDULE schedule(KS_KIND, CHUNK)
#else
#define KS_SCHEDULE schedule(KS_KIND)
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
static inline vf vload_bf(const uint16_t *p) {
  vh h;
  memcpy(&h, p, sizeof h);
  vu u = __builtin_convertvector(h, vu) << 16;
  vf f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

void attention_prefill(const uint16_t *restrict q, const uint16_t *restrict k,
                       const uint16_t *restrict v, uint16_t *restrict o,
                       int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t seqlen, int64_t head_dim) {
  int64_t group = heads_q / heads_kv, D = head_dim;
  int64_t Dv = D / (VEC * NACC) * (VEC * NACC); // vector part of head_dim
  int64_t Dp = (D + VEC - 1) / VEC * VEC;
  float scale = 1.0f / sqrtf((float)D);
  int64_t rows = batch * heads_q * seqlen;
  int par = seqlen * seqlen * D * heads_q * batch > (1 << 16);
#pragma omp parallel if (par)
  {
    float *s = malloc(sizeof(float) * (size_t)seqlen);
    float *qf = calloc((size_t)Dp, sizeof(float));
    float *acc = calloc((size_t)Dp, sizeof(float));
    if (!s || !qf || !acc)
      abort();
    KS_PRAGMA(omp for KS_SCHEDULE)
    for (int64_t r = rows - 1; r >= 0; r--) { // long rows first
      int64_t i = r % seqlen, bh = r / seqlen;
      int64_t b = bh / heads_q, h = bh % heads_q, g = h / group;
      const uint16_t *qi = q + r * D;
      const uint16_t *kh = k + (b * heads_kv + g) * seqlen * D;
      const uint16_t *vhd = v + (b * heads_kv + g) * seqlen * D;
      for (int64_t x = 0; x < D; x++)
        qf[x] = bf(qi[x]) * scale;
      float m = -INFINITY;
      for (int64_t j = 0; j <= i; j++) {
        const uint16_t *kj = kh + j * D;
        vf a[NACC];
        for (int c = 0; c < NACC; c++)
          a[c] = (vf){0};
        for (int64_t x = 0; x < Dv; x += VEC * NACC)
          for (int c = 0; c < NACC; c++)
            a[c] += vload(qf + x + c * VEC) * vload_bf(kj + x + c * VEC);
        for (int c = 1; c < NACC; c++)
          a[0] += a[c];
        float d = 0;
        for (int e = 0; e < VEC; e++)
          d += a[0][e];
        for (int64_t x = Dv; x < D; x++)
          d += qf[x] * bf(kj[x]);
        s[j] = d;
        if (d > m)
          m = d;
      }
      float l = 0;
      for (int64_t j = 0; j <= i; j++) {
        s[j] = expf(s[j] - m);
        l += s[j];
      }
      for (int64_t x = 0; x < Dp; x++)
        acc[x] = 0;
      int64_t Dw = D / VEC * VEC;
      for (int64_t j = 0; j <= i; j++) {
        const uint16_t *vj = vhd + j * D;
        vf pj = (vf){0} + s[j];
        for (int64_t x = 0; x < Dw; x += VEC)
          vstore(acc + x, vload(acc + x) + pj * vload_bf(vj + x));
        for (int64_t x = Dw; x < D; x++)
          acc[x] += s[j] * bf(vj[x]);
      }
      float inv = 1.0f / l;
      for (int64_t x = 0; x < D; x++)
        o[r * D + x] = to_bf(acc[x] * inv);
    }
    free(s);
    free(qf);
    free(acc);
  }
}
