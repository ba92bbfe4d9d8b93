// ksearch: backend=c entry=moe_routing
// Reference for tasks/moe_routing (DESIGN.md: Task, built-in tasks): softmax
// over experts, top-k in descending order with ties to the lower expert
// index, renormalized weights, then the counting sort that groups the
// (token, slot) assignments by expert (offsets = exclusive prefix sums of the
// counts; within an expert, assignments ascending). The selection compares
// logits, not probabilities: softmax keeps their order, and two different
// logits can never tie through rounding of exp. Plain, single-threaded,
// weights in double. experts_p1 and assignments are derived axes (not passed).
#include <math.h>
#include <stdint.h>

void moe_routing(const float *restrict logits, float *restrict weights,
                 int32_t *restrict ids, int32_t *restrict offsets,
                 int32_t *restrict sorted, int64_t tokens, int64_t experts,
                 int64_t topk) {
  for (int64_t e = 0; e <= experts; e++)
    offsets[e] = 0;
  for (int64_t t = 0; t < tokens; t++) {
    const float *l = logits + t * experts;
    int32_t *id = ids + t * topk;
    double m = -INFINITY;
    for (int64_t e = 0; e < experts; e++)
      if (l[e] > m)
        m = l[e];
    // slot s takes the largest expert not chosen yet, the lowest index on
    // ties (strictly greater only replaces); topk <= experts in every workload
    for (int64_t s = 0; s < topk; s++) {
      int64_t best = -1;
      for (int64_t e = 0; e < experts; e++) {
        int taken = 0;
        for (int64_t r = 0; r < s; r++)
          taken |= id[r] == e;
        if (!taken && (best < 0 || l[e] > l[best]))
          best = e;
      }
      id[s] = (int32_t)best;
    }
    double sum = 0;
    for (int64_t s = 0; s < topk; s++)
      sum += exp((double)l[id[s]] - m);
    for (int64_t s = 0; s < topk; s++) {
      weights[t * topk + s] = (float)(exp((double)l[id[s]] - m) / sum);
      offsets[id[s] + 1]++;
    }
  }
  for (int64_t e = 0; e < experts; e++)
    offsets[e + 1] += offsets[e];
  // stable placement: assignments visited in ascending order
  for (int64_t e = 0; e < experts; e++) {
    int64_t at = offsets[e];
    for (int64_t a = 0; a < tokens * topk; a++)
      if (ids[a] == e)
        sorted[at++] = (int32_t)a;
  }
}
