/* attention_ref_paths.c — tests/integration/kernel_tasks.sh: the two loops
 * of tasks/attention_prefill/reference.c (the plain one the CPU workloads
 * use and are timed against, the blocked one on all cores that the
 * GPU-sized workloads use) give the same bits on odd shapes: partial query
 * blocks, one token, GQA groups, head_dim 32/64/128. Built with the
 * reference: cc -O3 -march=native -fopenmp this.c reference.c -lm.
 * Prints one line per shape; exit 1 on any difference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attention_prefill_plain(const uint16_t *, const uint16_t *,
                             const uint16_t *, uint16_t *, int64_t, int64_t,
                             int64_t, int64_t, int64_t);
void attention_prefill_blocked(const uint16_t *, const uint16_t *,
                               const uint16_t *, uint16_t *, int64_t, int64_t,
                               int64_t, int64_t, int64_t);

/* a bf16 in [-2, 2) from a fixed LCG (no libc rand: the same draws
 * everywhere) */
static uint16_t draw(uint64_t *st) {
  *st = *st * 6364136223846793005ull + 1442695040888963407ull;
  float f = (float)((*st >> 40) & 0xffffff) / 16777216.0f * 4.0f - 2.0f;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

int main(void) {
  static const int64_t shapes[][5] = {{1, 4, 2, 257, 64}, {2, 2, 2, 100, 128},
                                      {1, 4, 1, 1, 64},   {3, 3, 1, 33, 32},
                                      {1, 8, 2, 31, 128}, {1, 2, 1, 65, 96}};
  int bad = 0;
  uint64_t st = 7;
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    const int64_t *s = shapes[i];
    size_t nq = (size_t)(s[0] * s[1] * s[3] * s[4]),
           nk = (size_t)(s[0] * s[2] * s[3] * s[4]);
    uint16_t *q = malloc(nq * 2), *k = malloc(nk * 2), *v = malloc(nk * 2),
             *o1 = malloc(nq * 2), *o2 = malloc(nq * 2);
    if (!q || !k || !v || !o1 || !o2)
      return 2;
    for (size_t j = 0; j < nq; j++)
      q[j] = draw(&st);
    for (size_t j = 0; j < nk; j++)
      k[j] = draw(&st), v[j] = draw(&st);
    attention_prefill_plain(q, k, v, o1, s[0], s[1], s[2], s[3], s[4]);
    attention_prefill_blocked(q, k, v, o2, s[0], s[1], s[2], s[3], s[4]);
    size_t diff = 0;
    for (size_t j = 0; j < nq; j++)
      diff += o1[j] != o2[j];
    printf("b%lld hq%lld hkv%lld s%lld d%lld: %zu of %zu differ\n",
           (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3],
           (long long)s[4], diff, nq);
    bad |= diff != 0;
    free(q), free(k), free(v), free(o1), free(o2);
  }
  return bad;
}
