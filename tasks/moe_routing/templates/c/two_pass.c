// ksearch: backend=c entry=moe_routing
// ksearch: family=two_pass
// ksearch: concepts=thread_parallel,omp_schedule,simd_vectorization
// ksearch: param SELECT in 0,1
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,16,256
//
// Template for tasks/moe_routing, family two_pass: pass 1 is a parallel loop
// over tokens (top-k selection on the logits, ties to the lower expert;
// weights renormalized over the selected as exp(l - l_top1) / sum); pass 2 is
// a serial counting sort of the tokens*topk assignments: one scan counts per
// expert, a prefix sum gives offsets, one more scan places each assignment
// at its expert's cursor (ascending order falls out of the scan order).
// Simple and exact; pass 2 does not scale with threads.
//   SELECT 0: insertion into a sorted top-k list; 1: k passes of argmax
//   SCHED  OpenMP schedule of pass 1: 0 static, 1 dynamic, 2 guided
//   CHUNK  its chunk size; 0 = the schedule's default
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef SELECT
#define SELECT 0
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef CHUNK
#define CHUNK 0
#endif
#define MAXK 64

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

void moe_routing(const float *restrict logits, float *restrict weights,
                 int32_t *restrict ids, int32_t *restrict offsets,
                 int32_t *restrict sorted, int64_t tokens, int64_t experts,
                 int64_t topk) {
  if (topk > MAXK || topk > experts)
    abort();
  int par = tokens * experts > 8192;
  KS_PRAGMA(omp parallel for KS_SCHEDULE if (par))
  for (int64_t t = 0; t < tokens; t++) {
    const float *l = logits + t * experts;
    int32_t *id = ids + t * topk;
    float val[MAXK];
#if SELECT == 0
    int64_t n = 0;
    for (int64_t x = 0; x < experts; x++) {
      float v = l[x];
      if (n == topk && !(v > val[topk - 1]))
        continue;
      int64_t p = n < topk ? n++ : topk - 1;
      while (p > 0 && v > val[p - 1]) {
        val[p] = val[p - 1];
        id[p] = id[p - 1];
        p--;
      }
      val[p] = v;
      id[p] = (int32_t)x;
    }
#else
    for (int64_t s = 0; s < topk; s++) {
      int64_t best = -1;
      for (int64_t x = 0; x < experts; x++) {
        int taken = 0;
        for (int64_t r = 0; r < s; r++)
          taken |= id[r] == x;
        if (!taken && (best < 0 || l[x] > l[best]))
          best = x;
      }
      id[s] = (int32_t)best;
      val[s] = l[best];
    }
#endif
    float sum = 0, w[MAXK];
    for (int64_t s = 0; s < topk; s++) {
      w[s] = expf(val[s] - val[0]);
      sum += w[s];
    }
    for (int64_t s = 0; s < topk; s++)
      weights[t * topk + s] = w[s] / sum;
  }
  for (int64_t e = 0; e <= experts; e++)
    offsets[e] = 0;
  int64_t na = tokens * topk;
  for (int64_t a = 0; a < na; a++)
    offsets[ids[a] + 1]++;
  for (int64_t e = 0; e < experts; e++)
    offsets[e + 1] += offsets[e];
  int32_t *cur = malloc(sizeof(int32_t) * (size_t)experts);
  if (!cur)
    abort();
  memcpy(cur, offsets, sizeof(int32_t) * (size_t)experts);
  for (int64_t a = 0; a < na; a++)
    sorted[cur[ids[a]]++] = (int32_t)a;
  free(cur);
}
