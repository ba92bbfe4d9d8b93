// ksearch: backend=cuda entry=attention_prefill
// ksearch: launch grid=(cdiv(seqlen, 4), heads_q, batch) block=(128, 1, 1)
//
// Device baseline for tasks/attention_prefill on CUDA (DESIGN.md:
// Evaluation, baselines): the plain kernel, one warp per query, keys one at
// a time straight from global memory (each lane head_dim/32 dims, a warp sum
// per score), online softmax in float32, no shared memory, no tensor cores.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(128)
    attention_prefill(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                      const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
                      long batch, long heads_q, long heads_kv, long seqlen, long head_dim) {
  (void)batch;
  const int lane = threadIdx.x & 31;
  const long qi = (long)blockIdx.x * 4 + (threadIdx.x >> 5);
  const long h = blockIdx.y, b = blockIdx.z, g = h / (heads_q / heads_kv);
  const int D = (int)head_dim;
  if (qi >= seqlen || D > 256)
    return;
  const __nv_bfloat16 *qr = q + ((b * heads_q + h) * seqlen + qi) * D;
  const __nv_bfloat16 *kh = k + (b * heads_kv + g) * seqlen * D;
  const __nv_bfloat16 *vh = v + (b * heads_kv + g) * seqlen * D;
  float qv[8], acc[8];
  for (int i = 0; i < 8; i++) {
    int d = lane + 32 * i;
    qv[i] = d < D ? __bfloat162float(qr[d]) : 0.f;
    acc[i] = 0.f;
  }
  const float scale = 1.f / sqrtf((float)D);
  float m = -INFINITY, l = 0.f;
  for (long j = 0; j <= qi; j++) {
    float s = 0.f;
    for (int i = 0; i < 8; i++) {
      int d = lane + 32 * i;
      if (d < D)
        s += qv[i] * __bfloat162float(kh[j * D + d]);
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
        acc[i] = acc[i] * corr + p * __bfloat162float(vh[j * D + d]);
    }
  }
  __nv_bfloat16 *orow = o + ((b * heads_q + h) * seqlen + qi) * D;
  for (int i = 0; i < 8; i++) {
    int d = lane + 32 * i;
    if (d < D)
      orow[d] = __float2bfloat16_rn(acc[i] / l);
  }
}
