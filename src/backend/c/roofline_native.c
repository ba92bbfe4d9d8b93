/* roofline_native.c — the measurement kernels of the CPU (c) backend's
 * roofline (DESIGN.md: Spec, "roofline fraction"): STREAM-style read, write,
 * copy and triad bandwidth, and peak FP32 vector-FMA FLOP/s.
 *
 * The Makefile builds *_native.c files with -O3 -march=native -fopenmp, the
 * flags candidates get, so the ceilings are the ones a candidate compiled on
 * this machine can reach. Caching, JSON and the machine identity live in
 * ../roofline.c; this file only measures.
 */
#include "backend/roofline.h"
#include "util/util.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the FMA vector of this ISA. Explicit FMA intrinsics because -std=c11
 * turns floating-point contraction off, so `a*b+c` would be a multiply and
 * an add. The accumulator count covers FMA latency x FMA ports (4 x 2 on
 * recent x86, 4 x 4 on Apple cores) while leaving registers for operands. */
#if defined(__AVX512F__)
#include <immintrin.h>
#define KS_ISA "avx512"
#define KS_NACC 16
typedef __m512 ks_fv;
static inline ks_fv fv_set(float x) { return _mm512_set1_ps(x); }
static inline ks_fv fv_fma(ks_fv a, ks_fv b, ks_fv c) {
  return _mm512_fmadd_ps(a, b, c);
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KS_ISA "avx2"
#define KS_NACC 12
typedef __m256 ks_fv;
static inline ks_fv fv_set(float x) { return _mm256_set1_ps(x); }
static inline ks_fv fv_fma(ks_fv a, ks_fv b, ks_fv c) {
  return _mm256_fmadd_ps(a, b, c);
}
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define KS_ISA "neon"
#define KS_NACC 16
typedef float32x4_t ks_fv;
static inline ks_fv fv_set(float x) { return vdupq_n_f32(x); }
static inline ks_fv fv_fma(ks_fv a, ks_fv b, ks_fv c) {
  return vfmaq_f32(c, a, b);
}
#else
/* No FMA instruction: a multiply and an add, still 2 flops per lane. */
#if defined(__AVX__)
#define KS_ISA "avx"
#elif defined(__SSE__)
#define KS_ISA "sse"
#else
#define KS_ISA "generic"
#endif
#define KS_NACC 8
typedef float ks_fv __attribute__((vector_size(16)));
static inline ks_fv fv_set(float x) { return (ks_fv){x, x, x, x}; }
static inline ks_fv fv_fma(ks_fv a, ks_fv b, ks_fv c) { return a * b + c; }
#endif
#define KS_FV_LANES ((int)(sizeof(ks_fv) / sizeof(float)))

/* The vector the read kernel sums with: as wide as the ISA's registers. */
#if defined(__AVX512F__)
#define KS_MV_BYTES 64
#elif defined(__AVX__)
#define KS_MV_BYTES 32
#else
#define KS_MV_BYTES 16
#endif
typedef float ks_mv __attribute__((vector_size(KS_MV_BYTES)));
#define KS_MV_LANES ((size_t)(KS_MV_BYTES / sizeof(float)))

#define KS_NREP 10 /* STREAM convention: best of several */
#define KS_MIB ((size_t)1 << 20)
#define KS_FLOPS_MIN_S 0.05 /* one timed FMA run lasts at least this */

/* Results flow here so the compiler cannot drop the work that made them. */
static volatile double g_sink;

/* ---- sizes */

/* Size in bytes of the last-level data/unified cache, 0 when unknown. */
static size_t llc_bytes(void) {
  size_t best = 0;
  int best_level = -1;
  for (int i = 0; i < 16; i++) {
    char path[128], buf[64];
    int level = 0;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    bool instr = fgets(buf, sizeof buf, f) && !strncmp(buf, "Instruction", 11);
    fclose(f);
    if (instr)
      continue;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (!(f = fopen(path, "r")))
      continue;
    if (fscanf(f, "%d", &level) != 1)
      level = 0;
    fclose(f);
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r")))
      continue;
    unsigned long long v = 0;
    char unit = 0;
    int got = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (got < 1)
      continue;
    size_t bytes = (size_t)v;
    if (got == 2 && (unit == 'K' || unit == 'k'))
      bytes <<= 10;
    else if (got == 2 && unit == 'M')
      bytes <<= 20;
    else if (got == 2 && unit == 'G')
      bytes <<= 30;
    if (level > best_level || (level == best_level && bytes > best)) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

/* Bytes per array: >= 4x the last-level cache and >= 64 MiB so the arrays
 * stream from memory, but <= 256 MiB because the machine may be shared;
 * KSEARCH_ROOFLINE_MIB overrides (tests). */
static ks_code array_bytes(size_t *out, ks_err *err) {
  const char *env = getenv("KSEARCH_ROOFLINE_MIB");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 1 || v > 4096)
      return ks_err_set(err, KS_ERR_INPUT,
                        "KSEARCH_ROOFLINE_MIB=\"%s\": expected a whole number "
                        "of MiB per array from 1 to 4096; unset it to size "
                        "the arrays from the last-level cache",
                        env);
    *out = (size_t)v * KS_MIB;
    return KS_OK;
  }
  size_t llc = llc_bytes();
  size_t b = llc ? 4 * llc : 256 * KS_MIB;
  if (b < 64 * KS_MIB)
    b = 64 * KS_MIB;
  if (b > 256 * KS_MIB)
    b = 256 * KS_MIB;
  *out = b;
  return KS_OK;
}

/* ---- bandwidth kernels. Each returns its wall time. Every loop is
 * `omp for schedule(static)` over the same index space as the first-touch
 * initialization, so each thread streams the pages it placed. */

static float mv_sum(ks_mv v) {
  float l[KS_MV_LANES], s = 0;
  memcpy(l, &v, sizeof l);
  for (size_t i = 0; i < KS_MV_LANES; i++)
    s += l[i];
  return s;
}

/* Sum of every element of a, b and c: 3 arrays read. Explicit vectors with
 * 4 accumulators, because without -ffast-math the compiler will not
 * reassociate a float sum, and one accumulator would be latency-bound. */
static double k_read(float *const arr[3], size_t n, int threads) {
  double total = 0;
  size_t blk = 4 * KS_MV_LANES, nb = n / blk;
  double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : total)
  for (int a = 0; a < 3; a++) {
    const float *x = arr[a];
    ks_mv s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
#pragma omp for schedule(static) nowait
    for (size_t b = 0; b < nb; b++) {
      ks_mv v0, v1, v2, v3;
      const float *p = x + b * blk;
      memcpy(&v0, p, sizeof v0);
      memcpy(&v1, p + KS_MV_LANES, sizeof v1);
      memcpy(&v2, p + 2 * KS_MV_LANES, sizeof v2);
      memcpy(&v3, p + 3 * KS_MV_LANES, sizeof v3);
      s0 += v0;
      s1 += v1;
      s2 += v2;
      s3 += v3;
    }
    total += mv_sum((s0 + s1) + (s2 + s3));
  }
  double t = omp_get_wtime() - t0;
  g_sink += total;
  return t;
}

/* Fill a, b and c with s (a run-time value, so it cannot become memset). */
static double k_write(float *const arr[3], size_t n, float s, int threads) {
  double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads)
  for (int a = 0; a < 3; a++) {
    float *x = arr[a];
#pragma omp for schedule(static) nowait
    for (size_t i = 0; i < n; i++)
      x[i] = s;
  }
  return omp_get_wtime() - t0;
}

/* c = a, as a loop: candidates are loops, and a memcpy call would measure
 * the C library's copy (which may use non-temporal stores) instead. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static double
k_copy(float *restrict c, const float *restrict a, size_t n, int threads) {
  double t0 = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; i++)
    c[i] = a[i];
  return omp_get_wtime() - t0;
}

/* a = b + s*c */
static double k_triad(float *restrict a, const float *restrict b,
                      const float *restrict c, float s, size_t n, int threads) {
  double t0 = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
  return omp_get_wtime() - t0;
}

static ks_code measure_bandwidth(int threads, ks_roofline *r, ks_err *err) {
  size_t bytes = 0;
  ks_code rc = array_bytes(&bytes, err);
  if (rc)
    return rc;
  size_t n = bytes / sizeof(float);
  n -= n % (4 * KS_MV_LANES); /* whole read blocks */
  bytes = n * sizeof(float);
  float *a = aligned_alloc(4096, bytes), *b = aligned_alloc(4096, bytes),
        *c = aligned_alloc(4096, bytes);
  if (!a || !b || !c) {
    free(a);
    free(b);
    free(c);
    return ks_err_set(err, KS_ERR_NOMEM,
                      "roofline: cannot allocate 3 arrays of %zu MiB; set "
                      "KSEARCH_ROOFLINE_MIB to a smaller size per array",
                      bytes / KS_MIB);
  }
  ks_log(KS_LOG_DEBUG, "roofline: 3 arrays of %zu MiB, %d threads",
         bytes / KS_MIB, threads);
  /* First touch in parallel, same static schedule as the kernels. */
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; i++) {
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.5f;
  }
  float *const arr[3] = {a, b, c};
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  for (int rep = 0; rep < KS_NREP; rep++) {
    double t[4];
    t[0] = k_read(arr, n, threads);
    t[1] = k_write(arr, n, 1.0f + (float)rep, threads);
    t[2] = k_copy(c, a, n, threads);
    t[3] = k_triad(a, b, c, 0.5f, n, threads);
    for (int k = 0; k < 4; k++)
      if (t[k] < best[k])
        best[k] = t[k];
  }
  g_sink += a[n / 2] + b[n / 3] + c[n - 1];
  free(a);
  free(b);
  free(c);
  double B = (double)bytes;
  r->read_gbps = 3 * B / best[0] / 1e9;
  r->write_gbps = 3 * B / best[1] / 1e9;
  r->copy_gbps = 2 * B / best[2] / 1e9;
  r->triad_gbps = 3 * B / best[3] / 1e9;
  double bw = r->read_gbps;
  if (r->copy_gbps > bw)
    bw = r->copy_gbps;
  if (r->triad_gbps > bw)
    bw = r->triad_gbps;
  r->bandwidth_gbps = bw;
  return KS_OK;
}

/* ---- peak FLOP/s: KS_NACC independent FMA chains per thread, iters
 * iterations each; acc = acc*m + a converges (m < 1), so values stay finite
 * and every FMA must be executed. Returns the wall time. */
static double k_fma(long iters, int threads) {
  double sink = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    int tid = omp_get_thread_num();
    ks_fv acc[KS_NACC];
    for (int k = 0; k < KS_NACC; k++)
      acc[k] = fv_set(1.0f + 0.01f * (float)k + 0.001f * (float)tid);
    const ks_fv m = fv_set(0.9999f), add = fv_set(0.0001f);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
      for (int k = 0; k < KS_NACC; k++)
        acc[k] = fv_fma(acc[k], m, add);
    }
    for (int k = 0; k < KS_NACC; k++) {
      float l[KS_FV_LANES];
      memcpy(l, &acc[k], sizeof l);
      for (int j = 0; j < KS_FV_LANES; j++)
        sink += l[j];
    }
  }
  double t = omp_get_wtime() - t0;
  g_sink += sink;
  return t;
}

/* The host compute probe (DESIGN.md: Ceiling probe) runs the roofline's own
 * FMA kernel, so the figure beside a timing and the cached one are the same
 * measurement: about `flops` FP32 flops on `threads` threads (at least one
 * iteration each), returning the wall seconds and, in *done, the flops
 * actually done. */
double ks_fma_run(double flops, int threads, double *done) {
  if (threads < 1)
    threads = 1;
  double per_iter = 2.0 * KS_FV_LANES * KS_NACC * threads;
  long iters = (long)(flops / per_iter + 0.5);
  if (iters < 1)
    iters = 1;
  if (done)
    *done = per_iter * (double)iters;
  return k_fma(iters, threads);
}

static void measure_flops(int threads, ks_roofline *r) {
  long iters = 1L << 14;
  double t;
  /* Grow the trip count until one run is long enough to time well. */
  while ((t = k_fma(iters, threads)) < KS_FLOPS_MIN_S && iters < (1L << 40))
    iters *= 2;
  double best = t;
  for (int rep = 1; rep < KS_NREP; rep++) {
    t = k_fma(iters, threads);
    if (t < best)
      best = t;
  }
  double flops = 2.0 * KS_FV_LANES * KS_NACC * (double)iters * threads;
  r->peak_gflops = flops / best / 1e9;
}

ks_code ks_roofline_measure_c(int threads, ks_roofline *out, ks_err *err) {
  ks_roofline r;
  ks_roofline_identify("c", threads, &r);
  threads = r.threads;
  omp_set_dynamic(0);
  omp_set_num_threads(threads);
  ks_code rc = measure_bandwidth(threads, &r, err);
  if (rc)
    return ks_err_prefix(err, "measuring the c roofline: ");
  measure_flops(threads, &r);
  snprintf(r.isa, sizeof r.isa, "%s", KS_ISA);
  r.vector_floats = (int)KS_MV_LANES;
  r.measured_at = ks_wall_now();
  snprintf(r.source, sizeof r.source, "measured by ksearch roofline");
  *out = r;
  return KS_OK;
}
