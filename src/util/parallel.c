/* parallel.c — ks_parallel_for: the judge's own bulk work (drawing inputs,
 * DESIGN.md: Evaluation, "Cost per evaluation") spread over the machine's
 * cores with plain threads. Items are handed out one at a time from a shared
 * counter, so a slow core takes fewer; what an item computes must not depend
 * on which thread runs it (the inputs' chunks have their own streams), so
 * the bytes are the same for any thread count. Never used inside an
 * executor: the sandbox forbids threads there. */
#include "util/util.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct pf {
  int64_t n;
  int64_t next; /* atomic */
  void (*fn)(void *ctx, int64_t i);
  void *ctx;
} pf;

static void *worker(void *arg) {
  pf *p = arg;
  for (;;) {
    int64_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (i >= p->n)
      return NULL;
    p->fn(p->ctx, i);
  }
}

void ks_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t i), void *ctx,
                     int threads) {
  if (threads <= 0)
    threads = ks_nproc();
  if (threads > KS_PARALLEL_MAX)
    threads = KS_PARALLEL_MAX;
  if (threads > n)
    threads = (int)n;
  pf p = {.n = n, .next = 0, .fn = fn, .ctx = ctx};
  pthread_t th[KS_PARALLEL_MAX];
  int started = 0;
  for (int t = 1; t < threads; t++)
    if (pthread_create(&th[started], NULL, worker, &p) == 0)
      started++;
  worker(&p); /* the caller works too; with no thread started, alone */
  for (int t = 0; t < started; t++)
    pthread_join(th[t], NULL);
}
