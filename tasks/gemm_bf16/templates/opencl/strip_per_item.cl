// ksearch: backend=opencl entry=gemm_bf16
// ksearch: family=strip_per_item
// ksearch: concepts=thread_parallel,register_blocking,half_bf16_conversion
// ksearch: param WPT in 4,8,1,16
// ksearch: param LOCAL in 16,64,4
// ksearch: launch global=(cdiv(n,WPT), m) local=(LOCAL, 1)
//
// OpenCL template for tasks/gemm_bf16, family strip_per_item: work-item
// (x, i) computes WPT neighbouring outputs c[i, x*WPT ..] in float registers;
// each a[i, p] is widened once and used WPT times, B rows are read
// contiguously by neighbouring work-items. bfloat16 is widened with a 16-bit
// shift and the output rounded to nearest even. Bounds-checked on n and m.
//   WPT    outputs per work-item (register blocking along n)
//   LOCAL  work-items per work-group along n
// Kernel arguments follow ksearch's OpenCL convention (docs/DESIGN.md).

float bf(ushort h) { return as_float((uint)h << 16); }
ushort to_bf(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (ushort)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

__kernel void gemm_bf16(__global const ushort *a, __global const ushort *b,
                        __global ushort *c, long m, long n, long k) {
  long j0 = get_global_id(0) * WPT, i = get_global_id(1);
  if (i >= m || j0 >= n)
    return;
  float acc[WPT];
  for (int w = 0; w < WPT; w++)
    acc[w] = 0.0f;
  __global const ushort *ar = a + i * k;
  if (j0 + WPT <= n) {
    for (long p = 0; p < k; p++) {
      float av = bf(ar[p]);
      __global const ushort *br = b + p * n + j0;
      for (int w = 0; w < WPT; w++)
        acc[w] += av * bf(br[w]);
    }
  } else {
    for (long p = 0; p < k; p++) {
      float av = bf(ar[p]);
      for (int w = 0; w < WPT && j0 + w < n; w++)
        acc[w] += av * bf(b[p * n + j0 + w]);
    }
  }
  for (int w = 0; w < WPT && j0 + w < n; w++)
    c[i * n + j0 + w] = to_bf(acc[w]);
}
