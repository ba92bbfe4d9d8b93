// ksearch: backend=c entry=moe_routing
// ksearch: family=fused
// ksearch: concepts=thread_parallel,row_blocking
// ksearch: param SELECT in 0,1
// ksearch: param MINTOK in 256,64,1024,4096
//
// Template for tasks/moe_routing, family fused: one parallel region, three
// phases split by barriers. Phase 1: each thread takes a contiguous range of
// tokens, selects the top-k of each (logits compared; strictly greater wins,
// so equal logits keep the lower expert first), writes ids and renormalized
// weights (exp(l - l_top1) / sum: the softmax denominator cancels) and counts
// its assignments per expert. Phase 2 (one thread): offsets = exclusive
// prefix sums; each thread's start per expert = offsets[e] + the counts of
// the threads before it. Phase 3: each thread places its assignments in
// ascending order, so every expert's list is ascending without a sort.
//   SELECT 0: insertion into a sorted top-k list; 1: k passes of argmax
//   MINTOK tokens per thread at least (fewer threads for small inputs)
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef SELECT
#define SELECT 0
#endif
#ifndef MINTOK
#define MINTOK 256
#endif
#define MAXK 64

// ids[0..k) of the k largest of l[0..e), descending, ties to the lower index
static inline void topk(const float *l, int64_t e, int64_t k, int32_t *ids,
                        float *val) {
#if SELECT == 0
  int64_t n = 0;
  for (int64_t x = 0; x < e; x++) {
    float v = l[x];
    if (n == k && !(v > val[k - 1]))
      continue;
    int64_t p = n < k ? n++ : k - 1; // the slot v enters from
    while (p > 0 && v > val[p - 1]) {
      val[p] = val[p - 1];
      ids[p] = ids[p - 1];
      p--;
    }
    val[p] = v;
    ids[p] = (int32_t)x;
  }
#else
  for (int64_t s = 0; s < k; s++) {
    int64_t best = -1;
    for (int64_t x = 0; x < e; x++) {
      int taken = 0;
      for (int64_t r = 0; r < s; r++)
        taken |= ids[r] == x;
      if (!taken && (best < 0 || l[x] > l[best]))
        best = x;
    }
    ids[s] = (int32_t)best;
    val[s] = l[best];
  }
#endif
}

void moe_routing(const float *restrict logits, float *restrict weights,
                 int32_t *restrict ids, int32_t *restrict offsets,
                 int32_t *restrict sorted, int64_t tokens, int64_t experts,
                 int64_t topk_) {
  if (topk_ > MAXK || topk_ > experts)
    abort();
  int nt = omp_get_max_threads();
  if (tokens / MINTOK < nt)
    nt = tokens / MINTOK > 1 ? (int)(tokens / MINTOK) : 1;
  int32_t *cnt = calloc((size_t)nt * (size_t)experts, sizeof(int32_t));
  if (!cnt)
    abort();
#pragma omp parallel num_threads(nt)
  {
    int tid = omp_get_thread_num(), n = omp_get_num_threads();
    int64_t t0 = tokens * tid / n, t1 = tokens * (tid + 1) / n;
    int32_t *c = cnt + (int64_t)tid * experts;
    for (int64_t t = t0; t < t1; t++) {
      float val[MAXK];
      int32_t *id = ids + t * topk_;
      topk(logits + t * experts, experts, topk_, id, val);
      float sum = 0, w[MAXK];
      for (int64_t s = 0; s < topk_; s++) {
        w[s] = expf(val[s] - val[0]);
        sum += w[s];
      }
      float inv = 1.0f / sum;
      for (int64_t s = 0; s < topk_; s++) {
        weights[t * topk_ + s] = w[s] * inv;
        c[id[s]]++;
      }
    }
#pragma omp barrier
#pragma omp single
    {
      int32_t run = 0;
      for (int64_t e = 0; e < experts; e++) {
        offsets[e] = run;
        for (int th = 0; th < n; th++) {
          int32_t k = cnt[(int64_t)th * experts + e];
          cnt[(int64_t)th * experts + e] = run; // this thread's start
          run += k;
        }
      }
      offsets[experts] = run;
    }
    for (int64_t a = t0 * topk_; a < t1 * topk_; a++)
      sorted[c[ids[a]]++] = (int32_t)a;
  }
  free(cnt);
}
