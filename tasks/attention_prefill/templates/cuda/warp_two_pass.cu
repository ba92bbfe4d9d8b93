// ksearch: backend=cuda entry=attention_prefill
// ksearch: family=warp_two_pass
// ksearch: concepts=shared_memory_tiling,warp_shuffle_reduction,bank_conflict_padding
// ksearch: param WARPS in 8,4,16
// ksearch: launch grid=(cdiv(seqlen, WARPS), heads_q, batch) block=(32 * WARPS, 1, 1) smem=(4 * WARPS * head_dim + 2 * 2 * 32 * (head_dim + 2))
//
// CUDA template for tasks/attention_prefill, family warp_two_pass (DESIGN.md:
// Templates): the exact two-pass softmax on the GPU, the CUDA counterpart of
// the C row_materialized family. Same staging as warp_query (WARPS queries
// per block, one warp each, 32-key K/V tiles in shared memory), but pass 1
// only scores keys for the row max and the sum (the sum rescaled when the
// max grows), and pass 2 scores them again and accumulates exp(s - max) / sum
// times V: twice the Q K^T work, no rescaling of the output. Causal and GQA as
// the task says. The staging is the same text as warp_query.cu's: change both.
#include <cuda_bf16.h>

#ifndef WARPS
#define WARPS 8
#endif
#define KT 32
#define MAXDL 8 /* head_dim <= 256 */

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    attention_prefill(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                      const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
                      long batch, long heads_q, long heads_kv, long seqlen, long head_dim) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  (void)batch;
  const int D = (int)head_dim, SK = D + 2;
  if (D > 32 * MAXDL || D % 2)
    __trap(); // outside what this template holds in registers
  float *sq = (float *)smem_raw;                                        // [WARPS][D]
  __nv_bfloat16 *sk = (__nv_bfloat16 *)(smem_raw + 4 * WARPS * D);   // [KT][SK]
  __nv_bfloat16 *sv = sk + KT * SK;                                    // [KT][SK]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long h = blockIdx.y, b = blockIdx.z, g = h / (heads_q / heads_kv);
  const long q0 = (long)blockIdx.x * WARPS, qi = q0 + warp;
  const __nv_bfloat16 *qh = q + (b * heads_q + h) * seqlen * D;
  const __nv_bfloat16 *kh = k + (b * heads_kv + g) * seqlen * D;
  const __nv_bfloat16 *vh = v + (b * heads_kv + g) * seqlen * D;
  const float scale = 1.f / sqrtf((float)D);
  for (int d = lane; d < D; d += 32)
    sq[warp * D + d] = qi < seqlen ? __bfloat162float(qh[qi * D + d]) * scale : 0.f;
  float acc[MAXDL];
#pragma unroll
  for (int i = 0; i < MAXDL; i++)
    acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  const long kv_end = q0 + WARPS < seqlen ? q0 + WARPS : seqlen;
  const float *qw = sq + warp * D;
  for (int pass = 0; pass < 2; pass++) {
    for (long j0 = 0; j0 < kv_end; j0 += KT) {
      __syncthreads(); // the previous tile is consumed (and sq is written)
      for (int e = threadIdx.x; e < KT * D; e += 32 * WARPS) {
        int r = e / D, d = e % D;
        long key = j0 + r;
        __nv_bfloat16 z = __float2bfloat16(0.f);
        sk[r * SK + d] = key < seqlen ? kh[key * D + d] : z;
        if (pass)
          sv[r * SK + d] = key < seqlen ? vh[key * D + d] : z;
      }
      __syncthreads();
      if (j0 > qi) // every key of this tile is after this warp's query
        continue;
      const long key = j0 + lane;
      float s = 0.f;
      const __nv_bfloat162 *kr = (const __nv_bfloat162 *)(sk + lane * SK);
      for (int d = 0; d < D; d += 2) {
        float2 kf = __bfloat1622float2(kr[d / 2]);
        s = fmaf(qw[d], kf.x, s);
        s = fmaf(qw[d + 1], kf.y, s);
      }
      if (key > qi || key >= seqlen)
        s = -INFINITY;
      if (pass == 0) {
        float mx = s;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        mx = fmaxf(mx, m);
        float ps = expf(s - mx);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
          ps += __shfl_xor_sync(0xffffffffu, ps, off);
        l = l * expf(m - mx) + ps; // m = -inf on the first tile: 0
        m = mx;
        continue;
      }
      const float p = expf(s - m) / l; // exact weights: m and l are final
      for (int j = 0; j < KT; j++) {
        const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
        for (int i = 0; i < MAXDL; i++) {
          int d = lane + 32 * i;
          if (d < D)
            acc[i] = fmaf(pj, __bfloat162float(sv[j * SK + d]), acc[i]);
        }
      }
    }
  }
  if (qi >= seqlen)
    return;
  __nv_bfloat16 *orow = o + ((b * heads_q + h) * seqlen + qi) * D;
#pragma unroll
  for (int i = 0; i < MAXDL; i++) {
    int d = lane + 32 * i;
    if (d < D)
      orow[d] = __float2bfloat16_rn(acc[i]);
  }
}
