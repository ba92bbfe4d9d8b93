/* probe_native.c — the ceiling probe: trusted kernels that move a workload's
 * bytes as fast as this machine can (DESIGN.md: Evaluation, Ceiling probe).
 *
 * One probe call reads every input byte of the workload and writes every
 * output byte, on all threads, with the widest vector loads the ISA has,
 * unrolled, and either non-temporal stores (the fastest way to write a
 * footprint larger than the caches: no read-for-ownership) or ordinary
 * stores (faster when the footprint fits). The judge alternates the two and
 * keeps the faster, so an honest kernel, which must move the same bytes,
 * cannot beat the probe by more than noise. Built with -O3 -march=native
 * -fopenmp like candidates, because it measures this machine. */
#include "backend/roofline.h"

#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static volatile float g_probe_sink;

#if defined(__AVX512F__)
typedef __m512 pv;
#define PV_BYTES 64
#define pv_load(p) _mm512_load_ps(p)
#define pv_add(a, b) _mm512_add_ps(a, b)
#define pv_zero() _mm512_setzero_ps()
#define pv_store(p, v) _mm512_store_ps(p, v)
#define pv_stream(p, v) _mm512_stream_ps(p, v)
#define pv_sum(v) _mm512_reduce_add_ps(v)
#elif defined(__AVX__)
typedef __m256 pv;
#define PV_BYTES 32
#define pv_load(p) _mm256_load_ps(p)
#define pv_add(a, b) _mm256_add_ps(a, b)
#define pv_zero() _mm256_setzero_ps()
#define pv_store(p, v) _mm256_store_ps(p, v)
#define pv_stream(p, v) _mm256_stream_ps(p, v)
static inline float pv_sum(pv v) {
  float t[8];
  _mm256_storeu_ps(t, v);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#elif defined(__SSE2__)
typedef __m128 pv;
#define PV_BYTES 16
#define pv_load(p) _mm_load_ps(p)
#define pv_add(a, b) _mm_add_ps(a, b)
#define pv_zero() _mm_setzero_ps()
#define pv_store(p, v) _mm_store_ps(p, v)
#define pv_stream(p, v) _mm_stream_ps(p, v)
static inline float pv_sum(pv v) {
  float t[4];
  _mm_storeu_ps(t, v);
  return t[0] + t[1] + t[2] + t[3];
}
#else
typedef float pv __attribute__((vector_size(16)));
#define PV_BYTES 16
#define pv_load(p) (*(const pv *)(p))
#define pv_add(a, b) ((a) + (b))
#define pv_zero() ((pv){0, 0, 0, 0})
#define pv_store(p, v) (*(pv *)(p) = (v))
#define pv_stream(p, v) (*(pv *)(p) = (v))
static inline float pv_sum(pv v) { return v[0] + v[1] + v[2] + v[3]; }
#endif
#define PV_FLOATS (PV_BYTES / 4)
#define UNROLL 4
#define STEP (PV_BYTES * UNROLL)

/* Buffers start page-aligned (the judge lays them out); tails are read or
 * written byte by byte. */
void ks_probe_move(const unsigned char *const *in, const size_t *in_bytes,
                   int n_in, unsigned char *const *out, const size_t *out_bytes,
                   int n_out, int nontemporal) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    pv a0 = pv_zero(), a1 = pv_zero(), a2 = pv_zero(), a3 = pv_zero();
    for (int b = 0; b < n_in; b++) {
      const unsigned char *p = in[b];
      size_t lines = in_bytes[b] / STEP;
#pragma omp for schedule(static) nowait
      for (size_t i = 0; i < lines; i++) {
        const float *q = (const float *)(p + i * STEP);
        a0 = pv_add(a0, pv_load(q));
        a1 = pv_add(a1, pv_load(q + PV_FLOATS));
        a2 = pv_add(a2, pv_load(q + 2 * PV_FLOATS));
        a3 = pv_add(a3, pv_load(q + 3 * PV_FLOATS));
      }
#pragma omp single nowait
      for (size_t i = lines * STEP; i < in_bytes[b]; i++)
        total += p[i];
    }
    total += pv_sum(pv_add(pv_add(a0, a1), pv_add(a2, a3)));
    pv v = pv_zero();
    for (int b = 0; b < n_out; b++) {
      unsigned char *p = out[b];
      size_t lines = out_bytes[b] / STEP;
      if (nontemporal) {
#pragma omp for schedule(static) nowait
        for (size_t i = 0; i < lines; i++) {
          float *q = (float *)(p + i * STEP);
          pv_stream(q, v);
          pv_stream(q + PV_FLOATS, v);
          pv_stream(q + 2 * PV_FLOATS, v);
          pv_stream(q + 3 * PV_FLOATS, v);
        }
      } else {
#pragma omp for schedule(static) nowait
        for (size_t i = 0; i < lines; i++) {
          float *q = (float *)(p + i * STEP);
          pv_store(q, v);
          pv_store(q + PV_FLOATS, v);
          pv_store(q + 2 * PV_FLOATS, v);
          pv_store(q + 3 * PV_FLOATS, v);
        }
      }
#pragma omp single nowait
      for (size_t i = lines * STEP; i < out_bytes[b]; i++)
        p[i] = 0;
    }
#if defined(__x86_64__)
    _mm_sfence();
#endif
  }
  g_probe_sink = total;
}

/* The compute probe of a compute-bound workload: the roofline's FMA kernel
 * (ks_fma_run, shared with `ksearch roofline`) for about `flops` flops on
 * the executor's threads; the flops done. No honest kernel retires FP32
 * flops faster than independent vector FMA chains on every thread. */
double ks_probe_compute(double flops) {
  double done = 0;
  ks_fma_run(flops, omp_get_max_threads(), &done);
  return done;
}
