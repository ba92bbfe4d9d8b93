// ksearch: backend=c entry=decode_paged
// Reference for tasks/decode_paged (DESIGN.md: Task, built-in tasks): one
// decode step of attention over a paged KV cache, the vLLM/FlashInfer layout
// k_cache/v_cache [num_pages, page_size, heads_kv, head_dim]; token t of
// sequence b lives in page page_table[b][t / 16] at slot t % 16. Scores,
// softmax and sums in double, the output rounded to bfloat16 once. Plain and
// single-threaded on purpose. page_size is a const axis (16), not passed.
// A page id outside [0, num_pages) or a length outside [0, max_pages*16]
// cannot come from the task's inits; the reference refuses to read there
// (the output is left NaN, which no candidate can match).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 16

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
    return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

void decode_paged(const uint16_t *restrict q, const uint16_t *restrict k_cache,
                  const uint16_t *restrict v_cache,
                  const int32_t *restrict page_table,
                  const int32_t *restrict seq_lens, uint16_t *restrict o,
                  int64_t batch, int64_t heads_q, int64_t heads_kv,
                  int64_t head_dim, int64_t num_pages, int64_t max_pages) {
  int64_t group = heads_q / heads_kv;
  double scale = 1.0 / sqrt((double)head_dim);
  int64_t tok = heads_kv * head_dim; // elements per token slot
  double *s = malloc(sizeof(double) * (size_t)(max_pages * PAGE + 1));
  double *acc = malloc(sizeof(double) * (size_t)head_dim);
  if (!s || !acc)
    abort();
  for (int64_t b = 0; b < batch; b++) {
    int64_t len = seq_lens[b];
    int ok = len >= 0 && len <= max_pages * PAGE;
    for (int64_t p = 0; ok && p * PAGE < len; p++)
      ok = page_table[b * max_pages + p] >= 0 &&
           page_table[b * max_pages + p] < num_pages;
    for (int64_t h = 0; h < heads_q; h++) {
      uint16_t *oh = o + (b * heads_q + h) * head_dim;
      if (!ok) {
        for (int64_t x = 0; x < head_dim; x++)
          oh[x] = 0x7fc0;
        continue;
      }
      int64_t g = h / group;
      const uint16_t *qh = q + (b * heads_q + h) * head_dim;
      double m = -INFINITY;
      for (int64_t t = 0; t < len; t++) {
        int64_t page = page_table[b * max_pages + t / PAGE];
        const uint16_t *kt =
            k_cache + (page * PAGE + t % PAGE) * tok + g * head_dim;
        double d = 0;
        for (int64_t x = 0; x < head_dim; x++)
          d += bf16_to_d(qh[x]) * bf16_to_d(kt[x]);
        s[t] = d * scale;
        if (s[t] > m)
          m = s[t];
      }
      double l = 0;
      for (int64_t t = 0; t < len; t++) {
        s[t] = exp(s[t] - m);
        l += s[t];
      }
      for (int64_t x = 0; x < head_dim; x++)
        acc[x] = 0;
      for (int64_t t = 0; t < len; t++) {
        int64_t page = page_table[b * max_pages + t / PAGE];
        const uint16_t *vt =
            v_cache + (page * PAGE + t % PAGE) * tok + g * head_dim;
        for (int64_t x = 0; x < head_dim; x++)
          acc[x] += s[t] * bf16_to_d(vt[x]);
      }
      // len 0 (no cached token) has no softmax: the output is 0
      for (int64_t x = 0; x < head_dim; x++)
        oh[x] = f_to_bf16(len > 0 ? (float)(acc[x] / l) : 0.0f);
    }
  }
  free(s);
  free(acc);
}
