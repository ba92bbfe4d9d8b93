// ksearch: backend=cuda entry=attention_prefill
// ksearch: family=warp_query
// ksearch: concepts=online_softmax,shared_memory_tiling,warp_shuffle_reduction,bank_conflict_padding
// ksearch: param WARPS in 8,4,16
// ksearch: launch grid=(cdiv(seqlen, WARPS), heads_q, batch) block=(32 * WARPS, 1, 1) smem=(4 * WARPS * head_dim + 2 * 2 * 32 * (head_dim + 2))
//
// CUDA template for tasks/attention_prefill, family warp_query (DESIGN.md:
// Templates): no tensor cores. A block owns WARPS consecutive queries of one
// (batch, q head), one warp each; tiles of 32 keys (K and V, bf16) are staged
// in shared memory once for all of them. Per tile, lane j scores key j
// (a full dot product against the warp's float query in shared memory; K rows
// padded to an odd word stride so the 32 rows hit 32 banks), then the warp
// does an online-softmax step (one max and one sum reduction per 32 keys,
// float32) and each lane accumulates head_dim/32 output dims from V. Causal
// and GQA as the task says; tile 0 (key 0) comes first, so a row's max is
// finite before any masked tile.
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
  for (long j0 = 0; j0 < kv_end; j0 += KT) {
    __syncthreads(); // the previous tile is consumed (and sq is written)
    for (int e = threadIdx.x; e < KT * D; e += 32 * WARPS) {
      int r = e / D, d = e % D;
      long key = j0 + r;
      __nv_bfloat16 z = __float2bfloat16(0.f);
      sk[r * SK + d] = key < seqlen ? kh[key * D + d] : z;
      sv[r * SK + d] = key < seqlen ? vh[key * D + d] : z;
    }
    __syncthreads();
    if (j0 > qi) // every key of this tile is after this warp's query
      continue;
    const long key = j0 + lane;
    float s = 0.f;
    const float *qw = sq + warp * D;
    const __nv_bfloat162 *kr = (const __nv_bfloat162 *)(sk + lane * SK);
    for (int d = 0; d < D; d += 2) {
      float2 kf = __bfloat1622float2(kr[d / 2]);
      s = fmaf(qw[d], kf.x, s);
      s = fmaf(qw[d + 1], kf.y, s);
    }
    if (key > qi || key >= seqlen)
      s = -INFINITY;
    float mx = s;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    mx = fmaxf(mx, m);
    const float corr = __expf(m - mx); // m = -inf on the first tile: 0
    const float p = __expf(s - mx);
    float ps = p;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      ps += __shfl_xor_sync(0xffffffffu, ps, off);
    l = l * corr + ps;
    m = mx;
#pragma unroll
    for (int i = 0; i < MAXDL; i++)
      acc[i] *= corr;
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
  if (qi >= seqlen)
    return;
  const float inv = 1.f / l;
  __nv_bfloat16 *orow = o + ((b * heads_q + h) * seqlen + qi) * D;
#pragma unroll
  for (int i = 0; i < MAXDL; i++) {
    int d = lane + 32 * i;
    if (d < D)
      orow[d] = __float2bfloat16_rn(acc[i] * inv);
  }
}
