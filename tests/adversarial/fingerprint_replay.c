// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=ok max_score=6 timing=1 reason=
// Remembers every answer by a fingerprint of a few input elements and the
// shape, and replays it when the fingerprint comes back. Every timed call
// runs on inputs the executor has not seen in this evaluation, so nothing
// ever comes back: an honest (slow) score, not the 500x of a replay.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 256
static struct {
  uint64_t key;
  size_t n;
  float *y;
} memo[SLOTS];

static uint64_t fingerprint(const float *x, int64_t rows, int64_t cols) {
  uint64_t h = (uint64_t)rows * 1000003u ^ (uint64_t)cols;
  int64_t n = rows * cols;
  for (int k = 0; k < 8 && n > 0; k++) {
    uint32_t b;
    memcpy(&b, &x[(int64_t)k * 7919 % n], 4);
    h = (h ^ b) * 0x100000001b3ULL;
  }
  return h;
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  size_t n = (size_t)(rows * cols);
  uint64_t key = fingerprint(x, rows, cols);
  for (int i = 0; i < SLOTS; i++)
    if (memo[i].y && memo[i].key == key && memo[i].n == n) {
      memcpy(y, memo[i].y, n * sizeof(float));
      return;
    }
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += exp((double)(xr[c] - m));
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)(xr[c] - m)) / s);
  }
  static int next;
  int slot = next++ % SLOTS;
  free(memo[slot].y);
  memo[slot].y = malloc(n * sizeof(float));
  if (memo[slot].y) {
    memcpy(memo[slot].y, y, n * sizeof(float));
    memo[slot].key = key;
    memo[slot].n = n;
  }
}
