/* openmp_native.c — the runner's OpenMP pieces, built with -fopenmp.
 *
 * The thread pool must exist before the sandbox closes, because creating a
 * thread is a forbidden system call afterwards (that is how a candidate's
 * background thread is caught). Candidates' parallel regions with at most
 * `threads` threads reuse this pool. The cache flush runs on every thread so
 * that each core's private caches are evicted, not only the shared one. */
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

void ks_runner_openmp_start(int threads) {
  omp_set_dynamic(0);
  omp_set_num_threads(threads);
  volatile int sink = 0;
#pragma omp parallel
  {
#pragma omp atomic
    sink += 1;
  }
  (void)sink;
}

void ks_runner_flush(volatile unsigned char *buf, size_t n, int pass) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i += 64)
    buf[i] = (unsigned char)(buf[i] + pass);
}
