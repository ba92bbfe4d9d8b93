// ksearch: backend=c entry=decode_paged
// ksearch: family=group_per_task
// ksearch: concepts=online_softmax,simd_vectorization,multi_accumulator,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param TOKENS in 16,32,64
// ksearch: param SCHED in 2,0,1
//
// Template for tasks/decode_paged, family group_per_task: one task per
// (sequence, kv head) walks the whole sequence, no split and no merge pass.
// Each block of TOKENS tokens is gathered through page_table and widened to
// float once; then every q head of the GQA group scores it (dot products over
// head_dim), and its online softmax (m, l, unnormalized output) is rescaled
// once per block. Parallelism is batch x heads_kv: the family for large
// batches, where split_kv's merge pass is pure overhead.
//   VEC    floats per SIMD vector
//   TOKENS tokens per online-softmax block (a multiple of the page size 16)
//   SCHED  OpenMP schedule over tasks: 0 static, 1 dynamic, 2 guided
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef TOKENS
#define TOKENS 16
#endif
#ifndef SCHED
#define SCHED 2
#endif
#define PAGE 16
_Static_assert(TOKENS % PAGE == 0, "TOKENS must be a multiple of 16");

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

void decode_paged(const uint16_t *restrict q, const uint16_t *restrict k_cache,
                  const uint16_t *restrict v_cache,
                  const int32_t *restrict page_table,
                  const int32_t *restrict seq_lens, uint16_t *restrict o,
                  int64_t batch, int64_t heads_q, int64_t heads_kv,
                  int64_t head_dim, int64_t num_pages, int64_t max_pages) {
  (void)num_pages;
  int64_t G = heads_q / heads_kv, D = head_dim;
  int64_t Dp = (D + VEC - 1) / VEC * VEC, tok = heads_kv * D;
  float scale = 1.0f / sqrtf((float)D);
  int64_t work = 0;
  for (int64_t b = 0; b < batch; b++)
    work += seq_lens[b];
  int par = batch * heads_kv > 1 && work * heads_q * D > (1 << 15);
#pragma omp parallel if (par)
  {
    float *qf = calloc((size_t)(G * Dp), sizeof(float));
    float *acc = calloc((size_t)(G * Dp), sizeof(float));
    float *kf = calloc((size_t)(TOKENS * Dp), sizeof(float));
    float *vfb = calloc((size_t)(TOKENS * Dp), sizeof(float));
    float *m = malloc(sizeof(float) * (size_t)G);
    float *l = malloc(sizeof(float) * (size_t)G);
    if (!qf || !acc || !kf || !vfb || !m || !l)
      abort();
    KS_PRAGMA(omp for schedule(KS_KIND))
    for (int64_t t = 0; t < batch * heads_kv; t++) {
      int64_t b = t / heads_kv, g = t % heads_kv, len = seq_lens[b];
      for (int64_t h = 0; h < G; h++) {
        for (int64_t x = 0; x < D; x++)
          qf[h * Dp + x] = bf(q[(b * heads_q + g * G + h) * D + x]) * scale;
        for (int64_t x = 0; x < Dp; x++)
          acc[h * Dp + x] = 0;
        m[h] = -INFINITY;
        l[h] = 0;
      }
      for (int64_t t0 = 0; t0 < len; t0 += TOKENS) {
        int64_t n = len - t0 < TOKENS ? len - t0 : TOKENS;
        for (int64_t j = 0; j < n; j++) {
          int64_t tt = t0 + j;
          int64_t page = page_table[b * max_pages + tt / PAGE];
          const uint16_t *kt =
              k_cache + (page * PAGE + tt % PAGE) * tok + g * D;
          const uint16_t *vt =
              v_cache + (page * PAGE + tt % PAGE) * tok + g * D;
          for (int64_t x = 0; x < D; x++) {
            kf[j * Dp + x] = bf(kt[x]);
            vfb[j * Dp + x] = bf(vt[x]);
          }
        }
        for (int64_t h = 0; h < G; h++) {
          float s[TOKENS], mb = -INFINITY;
          for (int64_t j = 0; j < n; j++) {
            vf a = (vf){0};
            for (int64_t x = 0; x < Dp; x += VEC)
              a += vload(qf + h * Dp + x) * vload(kf + j * Dp + x);
            float d = 0;
            for (int e = 0; e < VEC; e++)
              d += a[e];
            s[j] = d;
            mb = d > mb ? d : mb;
          }
          float mn = mb > m[h] ? mb : m[h], alpha = expf(m[h] - mn), ls = 0;
          float *ah = acc + h * Dp;
          for (int64_t x = 0; x < Dp; x += VEC)
            vstore(ah + x, vload(ah + x) * alpha);
          for (int64_t j = 0; j < n; j++) {
            float pj = expf(s[j] - mn);
            ls += pj;
            vf pv = (vf){0} + pj;
            for (int64_t x = 0; x < Dp; x += VEC)
              vstore(ah + x, vload(ah + x) + pv * vload(vfb + j * Dp + x));
          }
          m[h] = mn;
          l[h] = l[h] * alpha + ls;
        }
      }
      for (int64_t h = 0; h < G; h++)
        for (int64_t x = 0; x < D; x++)
          o[(b * heads_q + g * G + h) * D + x] =
              to_bf(l[h] > 0 ? acc[h * Dp + x] / l[h] : 0.0f);
    }
    free(qf);
    free(acc);
    free(kf);
    free(vfb);
    free(m);
    free(l);
  }
}
