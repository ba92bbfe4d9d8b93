// ksearch: backend=cuda entry=decode_paged
// ksearch: launch grid=(batch * heads_q) block=(32)
//
// Device baseline for tasks/decode_paged on CUDA (DESIGN.md: Evaluation,
// baselines): the plain kernel, a warp per (sequence, q head), tokens one at
// a time through the page table (each lane head_dim/32 dims, scalar bf16
// loads, a warp sum per score), online softmax in float32.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(32)
    decode_paged(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k_cache,
                 const __nv_bfloat16 *__restrict__ v_cache, const int *__restrict__ page_table,
                 const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o, long batch,
                 long heads_q, long heads_kv, long head_dim, long num_pages, long max_pages) {
  (void)batch, (void)num_pages;
  const long wid = blockIdx.x, b = wid / heads_q, h = wid % heads_q;
  const long g = h / (heads_q / heads_kv);
  const int lane = threadIdx.x, D = (int)head_dim;
  if (D > 256)
    return;
  float qv[8], acc[8];
  for (int i = 0; i < 8; i++) {
    int d = lane + 32 * i;
    qv[i] = d < D ? __bfloat162float(q[wid * D + d]) : 0.f;
    acc[i] = 0.f;
  }
  const float scale = 1.f / sqrtf((float)D);
  float m = -INFINITY, l = 0.f;
  const long len = seq_lens[b];
  for (long t = 0; t < len; t++) {
    const long row = ((long)page_table[b * max_pages + t / 16] * 16 + t % 16) * heads_kv + g;
    float s = 0.f;
    for (int i = 0; i < 8; i++) {
      int d = lane + 32 * i;
      if (d < D)
        s += qv[i] * __bfloat162float(k_cache[row * D + d]);
    }
    for (int off = 16; off > 0; off >>= 1)
      s += __shfl_xor_sync(0xffffffffu, s, off);
    s *= scale;
    const float mn = fmaxf(m, s), corr = expf(m - mn), p = expf(s - mn);
    l = l * corr + p;
    m = mn;
    for (int i = 0; i < 8; i++) {
      int d = lane + 32 * i;
      if (d < D)
        acc[i] = acc[i] * corr + p * __bfloat162float(v_cache[row * D + d]);
    }
  }
  for (int i = 0; i < 8; i++) {
    int d = lane + 32 * i;
    if (d < D)
      o[wid * D + d] = __float2bfloat16_rn(acc[i] / l);
  }
}
