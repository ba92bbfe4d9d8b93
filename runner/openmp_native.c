/* openmp_native.c — the runner's OpenMP pieces, built with -fopenmp.
 *
 * The thread pool must exist before the sandbox closes, because creating a
 * thread is a forbidden system call afterwards (that is how a candidate's
 * background thread is caught). Candidates' parallel regions with at most
 * `threads` threads reuse this pool. The cache flush runs on every thread so
 * that each core's private caches are evicted, not only the shared one.
 * Where the CPU has it, eviction is exact instead (ks_runner_evict): a
 * streaming pass over a flush buffer twice the last-level cache left
 * workloads of up to ~40 MB partly cached on an AMD EPYC (its last-level
 * cache resists being thrashed by data touched once), so cache-resident
 * kernels were timed at 1.5-2.4x the DRAM roofline. */
#include <omp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Each thread of a spinning pool (OMP_WAIT_POLICY=active: host C
 * executors) on a CPU of its own. Left to the scheduler, both threads of a
 * 2-thread team were seen sharing one CPU's run queue under load for a
 * whole evaluation, each spinning at the barrier while the other waited
 * for a slice (a 64 MB copy, fastest of 12: 7-14 ms unbound, 0.7-1.3 ms
 * pinned, alternating in the same minute at load average 200; an honest
 * rmsnorm timed at 10.8 ms instead of 1.45). Done here, by the threads
 * themselves, rather than with OMP_PROC_BIND: libgomp then never wants a
 * thread at a place the pool lacks, which after the sandbox closes would
 * be a forbidden clone. A user's OMP_PROC_BIND, KSEARCH_NO_PIN, or fewer
 * allowed CPUs than threads: no pinning. */
static void pin_pool(int threads) {
  const char *wp = getenv("OMP_WAIT_POLICY");
  if (!wp || strcmp(wp, "active") || getenv("OMP_PROC_BIND") ||
      getenv("KSEARCH_NO_PIN"))
    return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return;
  static int cpus[CPU_SETSIZE];
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &allowed))
      cpus[n++] = c;
  if (threads < 2 || n < threads)
    return;
#pragma omp parallel
  {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[omp_get_thread_num() % n], &one);
    (void)sched_setaffinity(0, sizeof one, &one); /* this thread */
  }
}

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
  pin_pool(threads);
}

void ks_runner_flush(volatile unsigned char *buf, size_t n, int pass) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i += 64)
    buf[i] = (unsigned char)(buf[i] + pass);
}

/* Brings the n buffers into the caches of the threads that will use them,
 * as a kernel's previous call leaves them: each thread of the pool touches
 * its static share of every buffer (reads; outputs are rewritten with the
 * bytes they hold, so the judge's poison stays). Candidates parallelize
 * their outer loops the same way, so the shares land where they are used. */
void ks_runner_warm(unsigned char *const *p, const size_t *bytes,
                    const int *writable, int n) {
  volatile unsigned char sink = 0;
  for (int b = 0; b < n; b++) {
    volatile unsigned char *base = p[b];
    size_t len = bytes[b];
    if (writable[b]) {
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < len; i += 64)
        base[i] = base[i];
    } else {
      unsigned char acc = 0;
#pragma omp parallel for schedule(static) reduction(^ : acc)
      for (size_t i = 0; i < len; i += 64)
        acc ^= base[i];
      sink ^= acc;
    }
  }
  (void)sink;
}

/* Whether ks_runner_evict works here (x86: clflush exists everywhere). */
int ks_runner_can_evict(void) {
#if defined(__x86_64__) || defined(__i386__)
  return 1;
#else
  return 0;
#endif
}

/* clflush every 64-byte line of the n buffers, on all threads, then a full
 * fence: the lines leave every cache level of every core. Only called where
 * ks_runner_can_evict() says so. */
void ks_runner_evict(unsigned char *const *p, const size_t *bytes, int n) {
#if defined(__x86_64__) || defined(__i386__)
  for (int b = 0; b < n; b++) {
    unsigned char *base = p[b];
    size_t len = bytes[b];
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < len; i += 64)
      __builtin_ia32_clflush(base + i);
  }
  __builtin_ia32_mfence();
#else
  (void)p;
  (void)bytes;
  (void)n;
#endif
}
