// ksearch: backend=c entry=attention_prefill
// Reference for tasks/attention_prefill (DESIGN.md: Task, built-in tasks):
// causal scaled dot-product attention with grouped KV heads, in the torch
// and MLX layout [batch, heads, seqlen, head_dim], bfloat16 in and out
// (uint16_t bit patterns). Plain on purpose: scores,
// softmax and the weighted sum are carried in double so float32 candidates
// are compared with something better than themselves; the output is rounded
// to bfloat16 (nearest even) once.
// Two loops, the same sums in the same order (bit-identical outputs, checked
// by tests/integration/attention_ref_paths.c): the plain one for every CPU
// workload (one thread; the CPU speedups are measured against it), and a
// blocked one on all cores for the GPU-sized workloads (outputs only, never
// timed; reference outputs are cached), where the plain loop took over 5
// minutes at S 16384 on the H200 host's 16 cores.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double bf16_to_d(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0; // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

// the kv head that (batch, q head) pair bh reads: q head h of a batch
// reads kv head h / (heads_q / heads_kv)
static int64_t kv_head(int64_t bh, int64_t heads_q, int64_t heads_kv) {
  return bh / heads_q * heads_kv + bh % heads_q / (heads_q / heads_kv);
}

void attention_prefill_plain(const uint16_t *restrict q,
                             const uint16_t *restrict k,
                             const uint16_t *restrict v, uint16_t *restrict o,
                             int64_t batch, int64_t heads_q, int64_t heads_kv,
                             int64_t seqlen, int64_t head_dim) {
  double scale = 1.0 / sqrt((double)head_dim);
  {
    double *s = malloc(sizeof(double) * (size_t)seqlen);
    double *acc = malloc(sizeof(double) * (size_t)head_dim);
    if (!s || !acc)
      abort();
    for (int64_t bh = 0; bh < batch * heads_q; bh++) {
      const int64_t n = seqlen * head_dim, kvh = kv_head(bh, heads_q, heads_kv);
      const uint16_t *qh = q + bh * n, *kh = k + kvh * n, *vh = v + kvh * n;
      uint16_t *oh = o + bh * n;
      for (int64_t i = 0; i < seqlen; i++) {
        double m = -INFINITY;
        for (int64_t j = 0; j <= i; j++) { // causal: keys 0..i
          double d = 0;
          for (int64_t x = 0; x < head_dim; x++)
            d += bf16_to_d(qh[i * head_dim + x]) *
                 bf16_to_d(kh[j * head_dim + x]);
          s[j] = d * scale;
          if (s[j] > m)
            m = s[j];
        }
        double l = 0;
        for (int64_t j = 0; j <= i; j++) {
          s[j] = exp(s[j] - m);
          l += s[j];
        }
        for (int64_t x = 0; x < head_dim; x++)
          acc[x] = 0;
        for (int64_t j = 0; j <= i; j++)
          for (int64_t x = 0; x < head_dim; x++)
            acc[x] += s[j] * bf16_to_d(vh[j * head_dim + x]);
        for (int64_t x = 0; x < head_dim; x++)
          oh[i * head_dim + x] = f_to_bf16((float)(acc[x] / l));
      }
    }
    free(s);
    free(acc);
  }
}

// Queries go QB at a time: each key row is read once per block (the plain
// loop read every key row once per query, so S 16384 streamed 8 TB and
// took over 5 minutes on 16 cores); the dot products run over the block
// (independent sums, so the compiler vectorizes them without reordering
// any sum). Every sum is still taken in the same order as the plain loop
// (x ascending for a score, j ascending for l and the output), in double.
enum { QB = 32 };

void attention_prefill_blocked(const uint16_t *restrict q,
                               const uint16_t *restrict k,
                               const uint16_t *restrict v, uint16_t *restrict o,
                               int64_t batch, int64_t heads_q, int64_t heads_kv,
                               int64_t seqlen, int64_t head_dim) {
  double scale = 1.0 / sqrt((double)head_dim);
#pragma omp parallel
  {
    double *s = malloc(sizeof(double) * (size_t)(QB * seqlen));
    double *acc = malloc(sizeof(double) * (size_t)(QB * head_dim));
    double *qt = malloc(sizeof(double) * (size_t)(QB * head_dim));
    float *kf = malloc(sizeof(float) * (size_t)(seqlen * head_dim));
    float *vf = malloc(sizeof(float) * (size_t)(seqlen * head_dim));
    if (!s || !acc || !qt || !kf || !vf)
      abort();
#pragma omp for schedule(dynamic)
    for (int64_t bh = 0; bh < batch * heads_q; bh++) {
      const int64_t n = seqlen * head_dim, kvh = kv_head(bh, heads_q, heads_kv);
      const uint16_t *qh = q + bh * n, *kh = k + kvh * n, *vh = v + kvh * n;
      uint16_t *oh = o + bh * n;
      for (int64_t e = 0; e < seqlen * head_dim;
           e++) { // bf16 is exact in float
        kf[e] = (float)bf16_to_d(kh[e]);
        vf[e] = (float)bf16_to_d(vh[e]);
      }
      for (int64_t i0 = 0; i0 < seqlen; i0 += QB) {
        int64_t nb = seqlen - i0 < QB ? seqlen - i0 : QB;
        for (int64_t x = 0; x < head_dim; x++)
          for (int64_t ii = 0; ii < QB; ii++)
            qt[x * QB + ii] =
                ii < nb ? bf16_to_d(qh[(i0 + ii) * head_dim + x]) : 0.0;
        for (int64_t j = 0; j < i0 + nb; j++) {
          double d[QB] = {0};
          for (int64_t x = 0; x < head_dim; x++) {
            double kx = kf[j * head_dim + x];
            for (int64_t ii = 0; ii < QB; ii++)
              d[ii] += qt[x * QB + ii] * kx;
          }
          for (int64_t ii = 0; ii < QB; ii++)
            s[ii * seqlen + j] = d[ii] * scale;
        }
        double l[QB];
        for (int64_t ii = 0; ii < nb; ii++) {
          double *si = s + ii * seqlen, m = -INFINITY;
          for (int64_t j = 0; j <= i0 + ii; j++) // causal: keys 0..i
            if (si[j] > m)
              m = si[j];
          l[ii] = 0;
          for (int64_t j = 0; j <= i0 + ii; j++) {
            si[j] = exp(si[j] - m);
            l[ii] += si[j];
          }
        }
        for (int64_t e = 0; e < QB * head_dim; e++)
          acc[e] = 0;
        for (int64_t j = 0; j < i0 + nb; j++) {
          const float *vj = vf + j * head_dim;
          for (int64_t ii = j > i0 ? j - i0 : 0; ii < nb; ii++) {
            double p = s[ii * seqlen + j], *ai = acc + ii * head_dim;
            for (int64_t x = 0; x < head_dim; x++)
              ai[x] += p * vj[x];
          }
        }
        for (int64_t ii = 0; ii < nb; ii++)
          for (int64_t x = 0; x < head_dim; x++)
            oh[(i0 + ii) * head_dim + x] =
                f_to_bf16((float)(acc[ii * head_dim + x] / l[ii]));
      }
    }
    free(s);
    free(acc);
    free(qt);
    free(kf);
    free(vf);
  }
}

// Threads and blocking only for the GPU-sized workloads (workloads_gpu.json,
// over 1e10 flops); each (batch, head) is independent, so the results do not
// depend on the thread count.
void attention_prefill(const uint16_t *restrict q, const uint16_t *restrict k,
                       const uint16_t *restrict v, uint16_t *restrict o,
                       int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t seqlen, int64_t head_dim) {
  if (2.0 * batch * heads_q * head_dim * seqlen * seqlen > 1e10)
    attention_prefill_blocked(q, k, v, o, batch, heads_q, heads_kv, seqlen,
                              head_dim);
  else
    attention_prefill_plain(q, k, v, o, batch, heads_q, heads_kv, seqlen,
                            head_dim);
}
