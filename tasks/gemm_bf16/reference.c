// ksearch: backend=c entry=gemm_bf16
// Reference for tasks/gemm_bf16 (DESIGN.md: Task, built-in tasks): row-major
// C = A x B on bfloat16 bit patterns, the sum carried in double (better than
// the float32 accumulation candidates use) and rounded to bfloat16 (nearest
// even) once. The CPU workloads take the plain dot product, single-threaded
// like the other references (the baseline of speedups); the GPU-sized ones
// (over 1e10 flops, workloads_gpu.json) take i-p-j order on all threads,
// which adds the same products in the same order (p ascending), so both
// paths agree to the last bits of a double.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double bf16_to_d(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

void gemm_bf16(const uint16_t *restrict a, const uint16_t *restrict b,
               uint16_t *restrict c, int64_t m, int64_t n, int64_t k) {
  if ((double)m * n * k <= 1e10) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++)
          s += bf16_to_d(a[i * k + p]) * bf16_to_d(b[p * n + j]);
        c[i * n + j] = f_to_bf16((float)s);
      }
    return;
  }
#pragma omp parallel
  {
    double *acc = malloc(sizeof(double) * (size_t)n);
    if (!acc)
      abort();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++)
        acc[j] = 0;
      for (int64_t p = 0; p < k; p++) {
        double aip = bf16_to_d(a[i * k + p]);
        for (int64_t j = 0; j < n; j++)
          acc[j] += aip * bf16_to_d(b[p * n + j]);
      }
      for (int64_t j = 0; j < n; j++)
        c[i * n + j] = f_to_bf16((float)acc[j]);
    }
    free(acc);
  }
}
