// ksearch: backend=c entry=attention_prefill
// Reference for tasks/attention_prefill (DESIGN.md: Task, built-in tasks):
// causal scaled dot-product attention with grouped KV heads, in the torch
// and MLX layout [batch, heads, seqlen, head_dim], bfloat16 in and out
// (uint16_t bit patterns). Plain on purpose: scores,
// softmax and the weighted sum are carried in double so float32 candidates
// are compared with something better than themselves; the output is rounded
// to bfloat16 (nearest even) once.
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

void attention_prefill(const uint16_t *restrict q, const uint16_t *restrict k,
                       const uint16_t *restrict v, uint16_t *restrict o,
                       int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t seqlen, int64_t head_dim) {
  int64_t group = heads_q / heads_kv;
  double scale = 1.0 / sqrt((double)head_dim);
  // Threads only for the GPU-sized workloads (workloads_gpu.json, over 1e10
  // flops; reference outputs are cached): every CPU workload of task.json
  // runs on one thread like the other references. Each (batch, head) is
  // independent, so the results do not depend on the thread count.
#pragma omp parallel if (2.0 * batch * heads_q * head_dim * seqlen * seqlen >  \
                         1e10)
  {
    double *s = malloc(sizeof(double) * (size_t)seqlen);
    double *acc = malloc(sizeof(double) * (size_t)head_dim);
    if (!s || !acc)
      abort();
#pragma omp for schedule(dynamic)
    for (int64_t bh = 0; bh < batch * heads_q; bh++) {
      int64_t b = bh / heads_q, h = bh % heads_q, g = h / group;
      const uint16_t *qh = q + (b * heads_q + h) * seqlen * head_dim;
      const uint16_t *kh = k + (b * heads_kv + g) * seqlen * head_dim;
      const uint16_t *vh = v + (b * heads_kv + g) * seqlen * head_dim;
      uint16_t *oh = o + (b * heads_q + h) * seqlen * head_dim;
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
