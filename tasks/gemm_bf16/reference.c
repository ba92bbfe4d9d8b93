// ksearch: backend=c entry=gemm_bf16
// Reference for tasks/gemm_bf16 (DESIGN.md: Task, built-in tasks): row-major
// C = A x B on bfloat16 bit patterns, the sum carried in double (better than
// the float32 accumulation candidates use) and rounded to bfloat16 (nearest
// even) once. The CPU workloads take the plain dot product, single-threaded
// like the other references (the baseline of speedups); the GPU-sized ones
// (over 1e10 flops, workloads_gpu.json) take i-p-j order on all threads, 16
// rows of C per pass over B, which adds the same products in the same order
// (p ascending): both paths give the same bfloat16 outputs (checked on
// 2154^3, whose first rows were also computed by the scalar path).
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
    enum { IB = 16 }; // rows of C per pass over B: B streams m/IB times
    double *acc = malloc(sizeof(double) * IB * (size_t)n);
    if (!acc)
      abort();
#pragma omp for schedule(dynamic)
    for (int64_t i0 = 0; i0 < m; i0 += IB) {
      int64_t rows = m - i0 < IB ? m - i0 : IB;
      for (int64_t x = 0; x < rows * n; x++)
        acc[x] = 0;
      for (int64_t p = 0; p < k; p++)
        for (int64_t r = 0; r < rows; r++) {
          double aip = bf16_to_d(a[(i0 + r) * k + p]);
          double *ar = acc + r * n;
          for (int64_t j = 0; j < n; j++)
            ar[j] += aip * bf16_to_d(b[p * n + j]);
        }
      for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++)
          c[(i0 + r) * n + j] = f_to_bf16((float)acc[r * n + j]);
    }
    free(acc);
  }
}
