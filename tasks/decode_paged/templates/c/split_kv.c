// ksearch: backend=c entry=decode_paged
// ksearch: family=split_kv
// ksearch: concepts=online_softmax,split_kv_flash_decoding,half_bf16_conversion,simd_vectorization,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param NSPLIT in 4,2,8,16,1
// ksearch: param SCHED in 0,1,2
//
// Template for tasks/decode_paged, family split_kv (flash-decoding): each
// sequence's pages are cut into NSPLIT contiguous ranges; one task per
// (sequence, kv head, range) gathers its pages through page_table, widens each
// K/V token to float once for the whole GQA group of q heads, and keeps per q
// head an online softmax (max m, sum l, unnormalized output) updated once per
// page of 16 tokens. A second pass merges the ranges of each (sequence, q
// head): M = max m_s, L = sum l_s e^(m_s-M), o = sum acc_s e^(m_s-M) / L.
// Empty ranges carry m = -inf, l = 0 and drop out of the merge.
//   VEC    floats per SIMD vector
//   NSPLIT ranges per sequence (parallelism for small batches)
//   SCHED  OpenMP schedule over ranges: 0 static, 1 dynamic, 2 guided
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef NSPLIT
#define NSPLIT 4
#endif
#ifndef SCHED
#define SCHED 0
#endif
#define PAGE 16
#define MAXG 64 // q heads per kv head this template handles

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
  if (G > MAXG)
    abort();
  int64_t Dp = (D + VEC - 1) / VEC * VEC, stride = Dp + 2; // acc, m, l
  int64_t tok = heads_kv * D;
  float scale = 1.0f / sqrtf((float)D);
  float *part = malloc(sizeof(float) * (size_t)(batch * heads_q * NSPLIT) *
                       (size_t)stride);
  if (!part)
    abort();
  int64_t ntask = batch * heads_kv * NSPLIT;
  int64_t work = 0;
  for (int64_t b = 0; b < batch; b++)
    work += seq_lens[b];
  int par = work * heads_q * D > (1 << 15);
#pragma omp parallel if (par)
  {
    float *qf = calloc((size_t)(MAXG * Dp), sizeof(float));
    float *kf = calloc((size_t)(PAGE * Dp), sizeof(float));
    float *vfb = calloc((size_t)(PAGE * Dp), sizeof(float));
    if (!qf || !kf || !vfb)
      abort();
    KS_PRAGMA(omp for schedule(KS_KIND))
    for (int64_t t = 0; t < ntask; t++) {
      int64_t sp = t % NSPLIT, bg = t / NSPLIT;
      int64_t b = bg / heads_kv, g = bg % heads_kv;
      int64_t len = seq_lens[b], npg = (len + PAGE - 1) / PAGE;
      int64_t per = (npg + NSPLIT - 1) / NSPLIT;
      int64_t p0 = sp * per, p1 = p0 + per < npg ? p0 + per : npg;
      for (int64_t h = 0; h < G; h++)
        for (int64_t x = 0; x < D; x++)
          qf[h * Dp + x] = bf(q[(b * heads_q + g * G + h) * D + x]) * scale;
      float *pr[MAXG];
      for (int64_t h = 0; h < G; h++) {
        pr[h] = part + ((b * heads_q + g * G + h) * NSPLIT + sp) * stride;
        for (int64_t x = 0; x < Dp; x++)
          pr[h][x] = 0;
        pr[h][Dp] = -INFINITY;
        pr[h][Dp + 1] = 0;
      }
      for (int64_t p = p0; p < p1; p++) {
        int64_t page = page_table[b * max_pages + p];
        int64_t n = len - p * PAGE < PAGE ? len - p * PAGE : PAGE;
        const uint16_t *kp = k_cache + page * PAGE * tok + g * D;
        const uint16_t *vp = v_cache + page * PAGE * tok + g * D;
        for (int64_t j = 0; j < n; j++)
          for (int64_t x = 0; x < D; x++) {
            kf[j * Dp + x] = bf(kp[j * tok + x]);
            vfb[j * Dp + x] = bf(vp[j * tok + x]);
          }
        for (int64_t h = 0; h < G; h++) {
          float s[PAGE], mb = -INFINITY;
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
          float *acc = pr[h], m = acc[Dp];
          float mn = mb > m ? mb : m, alpha = expf(m - mn), l = 0;
          for (int64_t x = 0; x < Dp; x += VEC)
            vstore(acc + x, vload(acc + x) * alpha);
          for (int64_t j = 0; j < n; j++) {
            float pj = expf(s[j] - mn);
            l += pj;
            vf pv = (vf){0} + pj;
            for (int64_t x = 0; x < Dp; x += VEC)
              vstore(acc + x, vload(acc + x) + pv * vload(vfb + j * Dp + x));
          }
          acc[Dp] = mn;
          acc[Dp + 1] = acc[Dp + 1] * alpha + l;
        }
      }
    }
    free(qf);
    free(kf);
    free(vfb);
    // merge pass: one (sequence, q head) per iteration
#pragma omp for schedule(static)
    for (int64_t bh = 0; bh < batch * heads_q; bh++) {
      const float *ps = part + bh * NSPLIT * stride;
      float M = -INFINITY, L = 0;
      for (int s = 0; s < NSPLIT; s++)
        M = ps[s * stride + Dp] > M ? ps[s * stride + Dp] : M;
      float w[NSPLIT];
      for (int s = 0; s < NSPLIT; s++) {
        w[s] = ps[s * stride + Dp + 1] > 0 ? expf(ps[s * stride + Dp] - M) : 0;
        L += ps[s * stride + Dp + 1] * w[s];
      }
      for (int64_t x = 0; x < D; x++) {
        float acc = 0;
        for (int s = 0; s < NSPLIT; s++)
          acc += w[s] * ps[s * stride + x];
        o[bh * D + x] = to_bf(L > 0 ? acc / L : 0.0f);
      }
    }
  }
  free(part);
}
