/* test_llm_retry.c — the LLM client's waiting rules (src/llm/retry.c):
 * which statuses are retried, exponential backoff with equal jitter and its
 * cap, Retry-After in seconds and as an HTTP date, and the gate that bounds
 * requests in flight. */
#include "llm/llm.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

Test(llm_retry, retryable_statuses) {
  long yes[] = {408, 409, 425, 429, 500, 502, 503, 504, 599};
  long no[] = {200, 400, 401, 403, 404, 422, 600};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    cr_assert(ks_llm_retryable_status(yes[i]), "%ld", yes[i]);
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    cr_assert_not(ks_llm_retryable_status(no[i]), "%ld", no[i]);
}

Test(llm_retry, backoff_doubles_with_equal_jitter_and_caps) {
  /* d = min(max, base * 2^k); delay in [d/2, d) */
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 0, -1, 0), 0.25, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 0, -1, 0.5), 0.375, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 3, -1, 0), 2.0, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 3, -1, 0.999999), 4.0, 1e-5);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 10, -1, 0), 15.0, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 1000, -1, 0.5), 22.5, 1e-12);
  for (int k = 0; k < 12; k++) {
    double lo = ks_llm_backoff_s(1, 8, k, -1, 0);
    double hi = ks_llm_backoff_s(1, 8, k, -1, 0.99);
    cr_assert(lo > 0 && lo <= hi && hi <= 8, "k=%d %g %g", k, lo, hi);
  }
}

Test(llm_retry, retry_after_wins_with_little_jitter) {
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 0, 7, 0), 7.0, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 0, 10, 0.5), 10.5, 1e-12);
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 5, 0, 0.9), 0.0, 1e-12);
  /* a server asking for an hour is capped (at max(backoff_max, 120 s)) */
  cr_assert_float_eq(ks_llm_backoff_s(0.5, 30, 0, 3600, 0), 120.0, 1e-12);
}

Test(llm_retry, retry_after_parsing) {
  time_t now = 1445412480; /* Wed, 21 Oct 2015 07:28:00 GMT */
  cr_assert_float_eq(ks_llm_parse_retry_after("2", now), 2.0, 1e-12);
  cr_assert_float_eq(ks_llm_parse_retry_after(" 1.5 ", now), 1.5, 1e-12);
  cr_assert_float_eq(ks_llm_parse_retry_after("0", now), 0.0, 1e-12);
  cr_assert_float_eq(
      ks_llm_parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), 30.0,
      1e-9);
  cr_assert_float_eq(
      ks_llm_parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), 0.0,
      1e-9);
  cr_assert_lt(ks_llm_parse_retry_after(NULL, now), 0);
  cr_assert_lt(ks_llm_parse_retry_after("", now), 0);
  cr_assert_lt(ks_llm_parse_retry_after("soon", now), 0);
  cr_assert_lt(ks_llm_parse_retry_after("5 s", now), 0);
  cr_assert_lt(ks_llm_parse_retry_after("-3", now), 0);
}

static ks_llm_gate g_gate;
static void *gate_worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 5; i++) {
    ks_llm_gate_enter(&g_gate);
    usleep(2000);
    ks_llm_gate_leave(&g_gate);
  }
  return NULL;
}

Test(llm_retry, gate_bounds_requests_in_flight) {
  ks_llm_gate_init(&g_gate, 2);
  pthread_t th[6];
  for (int i = 0; i < 6; i++)
    pthread_create(&th[i], NULL, gate_worker, NULL);
  for (int i = 0; i < 6; i++)
    pthread_join(th[i], NULL);
  cr_assert_eq(g_gate.in_flight, 0);
  cr_assert_leq(g_gate.peak, 2);
  cr_assert_eq(g_gate.peak, 2, "6 threads should fill both slots");
  ks_llm_gate_destroy(&g_gate);
}
