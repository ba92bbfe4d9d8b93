/* reference_time_gpu.c — times the issue-16 references on their GPU-sized
 * workloads (tasks/<t>/workloads_gpu.json), the way the judge would run them
 * once per seed to cache reference outputs: the issue asks that each finish
 * in a couple of minutes on the device machine's 16 cores. Built and run by
 * bench/reference_time_gpu.sh; inputs are random but valid (page_table a
 * permutation, seq_lens in the last page, as the task's inits draw them). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attention_prefill(const uint16_t *, const uint16_t *, const uint16_t *,
                       uint16_t *, int64_t, int64_t, int64_t, int64_t, int64_t);
void decode_paged(const uint16_t *, const uint16_t *, const uint16_t *,
                  const int32_t *, const int32_t *, uint16_t *, int64_t,
                  int64_t, int64_t, int64_t, int64_t, int64_t);
void moe_routing(const float *, float *, int32_t *, int32_t *, int32_t *,
                 int64_t, int64_t, int64_t);
void gemm_bf16(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t,
               int64_t);

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
static uint16_t *bf16s(int64_t n) { /* values in about [-1, 1) */
  uint16_t *p = malloc(2 * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    float f = (float)(next() % 2001) / 1000.0f - 1.0f;
    uint32_t u;
    memcpy(&u, &f, 4);
    p[i] = (uint16_t)(u >> 16);
  }
  return p;
}
static void report(const char *name, double t0) {
  printf("%-60s %8.1f s\n", name, omp_get_wtime() - t0);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : "";
  char name[128];
  printf("threads %d\n", omp_get_max_threads());
  if (!*only || !strcmp(only, "attention_prefill")) {
    int64_t w[][5] = {{1, 32, 8, 1024, 128},
                      {1, 32, 8, 4096, 128},
                      {1, 32, 8, 16384, 128},
                      {2, 32, 8, 1000, 128},
                      {1, 32, 8, 4096, 64}};
    for (int i = 0; i < 5; i++) {
      int64_t b = w[i][0], hq = w[i][1], hk = w[i][2], s = w[i][3], d = w[i][4];
      uint16_t *q = bf16s(b * hq * s * d), *k = bf16s(b * hk * s * d),
               *v = bf16s(b * hk * s * d), *o = bf16s(b * hq * s * d);
      snprintf(name, sizeof name,
               "attention_prefill b%lld hq%lld hkv%lld S%lld D%lld",
               (long long)b, (long long)hq, (long long)hk, (long long)s,
               (long long)d);
      double t0 = omp_get_wtime();
      attention_prefill(q, k, v, o, b, hq, hk, s, d);
      report(name, t0);
      free(q), free(k), free(v), free(o);
    }
  }
  if (!*only || !strcmp(only, "decode_paged")) {
    int64_t w[][2] = {{16, 512}, {1, 2048}, {64, 64}}; /* batch, max_pages */
    for (int i = 0; i < 3; i++) {
      int64_t b = w[i][0], mp = w[i][1], np = b * mp, hq = 32, hk = 8, d = 128;
      uint16_t *q = bf16s(b * hq * d), *o = bf16s(b * hq * d);
      uint16_t *kc = bf16s(np * 16 * hk * d), *vc = bf16s(np * 16 * hk * d);
      int32_t *pt = malloc(4 * (size_t)np), *sl = malloc(4 * (size_t)b);
      for (int64_t p = 0; p < np; p++)
        pt[p] = (int32_t)p;
      for (int64_t p = np - 1; p > 0; p--) {
        int64_t j = next() % (p + 1);
        int32_t t = pt[p];
        pt[p] = pt[j], pt[j] = t;
      }
      for (int64_t x = 0; x < b; x++)
        sl[x] = (int32_t)(mp * 16 - 15 + next() % 16);
      snprintf(name, sizeof name, "decode_paged batch%lld max_pages%lld",
               (long long)b, (long long)mp);
      double t0 = omp_get_wtime();
      decode_paged(q, kc, vc, pt, sl, o, b, hq, hk, d, np, mp);
      report(name, t0);
      free(q), free(o), free(kc), free(vc), free(pt), free(sl);
    }
  }
  if (!*only || !strcmp(only, "moe_routing")) {
    int64_t w[][2] = {{8, 2}, {64, 8}, {128, 8}, {256, 8}};
    for (int i = 0; i < 4; i++) {
      int64_t t = 16384, e = w[i][0], k = w[i][1];
      float *l = malloc(4 * (size_t)(t * e)), *wt = malloc(4 * (size_t)(t * k));
      int32_t *ids = malloc(4 * (size_t)(t * k)),
              *off = malloc(4 * (size_t)(e + 1)),
              *so = malloc(4 * (size_t)(t * k));
      for (int64_t x = 0; x < t * e; x++)
        l[x] = (float)((int)(next() % 25) - 12);
      snprintf(name, sizeof name, "moe_routing tokens16384 experts%lld top%lld",
               (long long)e, (long long)k);
      double t0 = omp_get_wtime();
      moe_routing(l, wt, ids, off, so, t, e, k);
      report(name, t0);
      free(l), free(wt), free(ids), free(off), free(so);
    }
  }
  if (!*only || !strcmp(only, "gemm_bf16")) {
    int64_t w[][3] = {{8192, 8192, 8192},
                      {4096, 4096, 4096},
                      {1000, 1000, 1000},
                      {16, 4096, 4096}};
    for (int i = 0; i < 4; i++) {
      int64_t m = w[i][0], n = w[i][1], k = w[i][2];
      uint16_t *a = bf16s(m * k), *b = bf16s(k * n), *c = bf16s(m * n);
      snprintf(name, sizeof name, "gemm_bf16 %lldx%lldx%lld", (long long)m,
               (long long)n, (long long)k);
      double t0 = omp_get_wtime();
      gemm_bf16(a, b, c, m, n, k);
      report(name, t0);
      free(a), free(b), free(c);
    }
  }
  return 0;
}
