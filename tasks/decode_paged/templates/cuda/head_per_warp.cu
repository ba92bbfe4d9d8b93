// ksearch: backend=cuda entry=decode_paged
// ksearch: family=head_per_warp
// ksearch: concepts=online_softmax,paged_gather,vector_loads_128,warp_shuffle_reduction
// ksearch: param WARPS in 4,8,2
// ksearch: param UNROLL in 4,2,8
// ksearch: launch grid=(cdiv(batch * heads_q, WARPS)) block=(32 * WARPS)
//
// CUDA template for tasks/decode_paged, family head_per_warp (DESIGN.md:
// Templates): the simplest fast layout, a warp per (sequence, q head), no GQA
// sharing (a K/V row is read once per query head of its group; the repeats
// mostly hit L2) and no shared memory: head_dim/8 lanes per token with
// 16-byte loads, 32/(head_dim/8) tokens per warp step, UNROLL steps loaded
// before use; each lane group keeps an online-softmax state and the groups
// merge by butterfly shuffles at the end.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef WARPS
#define WARPS 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#define PAGE 16

__device__ __forceinline__ void bf8(const uint4 &u, float *f) {
  const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 x = __bfloat1622float2(h[i]);
    f[2 * i] = x.x;
    f[2 * i + 1] = x.y;
  }
}

template <int D>
__device__ void head(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ kc,
                     const __nv_bfloat16 *__restrict__ vc, const int *__restrict__ page_table,
                     const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o,
                     long batch, long heads_q, long heads_kv, long max_pages) {
  constexpr int LPT = D / 8, TPW = 32 / LPT;
  const long wid = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (wid >= batch * heads_q)
    return; // a whole warp
  const int lane = threadIdx.x & 31, sub = lane / LPT, li = lane % LPT;
  const long b = wid / heads_q, h = wid % heads_q, g = h / (heads_q / heads_kv);
  const long len = seq_lens[b];
  const int *pt = page_table + b * max_pages;
  float qv[8], acc[8], m = -INFINITY, l = 0.f;
  bf8(__ldg((const uint4 *)(q + wid * D + li * 8)), qv);
  const float scale = 1.f / sqrtf((float)D);
#pragma unroll
  for (int e = 0; e < 8; e++) {
    qv[e] *= scale;
    acc[e] = 0.f;
  }
  for (long base = 0; base < len; base += (long)TPW * UNROLL) { // warp-uniform bound
    uint4 ku[UNROLL], vu[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      long t = base + sub + (long)u * TPW;
      ku[u] = vu[u] = make_uint4(0, 0, 0, 0);
      if (t < len) {
        long off = ((__ldg(pt + t / PAGE) * (long)PAGE + t % PAGE) * heads_kv + g) * D + li * 8;
        ku[u] = __ldg((const uint4 *)(kc + off));
        vu[u] = __ldg((const uint4 *)(vc + off));
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      float kf[8], vf[8], s = 0.f;
      bf8(ku[u], kf);
      bf8(vu[u], vf);
#pragma unroll
      for (int e = 0; e < 8; e++)
        s = fmaf(qv[e], kf[e], s);
#pragma unroll
      for (int off = LPT / 2; off > 0; off >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, off);
      if (base + sub + (long)u * TPW >= len)
        continue;
      float mn = fmaxf(m, s), corr = __expf(m - mn), p = __expf(s - mn);
      m = mn;
      l = l * corr + p;
#pragma unroll
      for (int e = 0; e < 8; e++)
        acc[e] = fmaf(acc[e], corr, p * vf[e]);
    }
  }
#pragma unroll
  for (int off = LPT; off < 32; off <<= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, off), l2 = __shfl_xor_sync(0xffffffffu, l, off);
    float mn = fmaxf(m, m2);
    float w1 = mn == -INFINITY ? 0.f : __expf(m - mn), w2 = mn == -INFINITY ? 0.f : __expf(m2 - mn);
    l = l * w1 + l2 * w2;
#pragma unroll
    for (int e = 0; e < 8; e++)
      acc[e] = acc[e] * w1 + __shfl_xor_sync(0xffffffffu, acc[e], off) * w2;
    m = mn;
  }
  if (sub == 0) {
    uint4 u;
    __nv_bfloat162 *hp = (__nv_bfloat162 *)&u;
#pragma unroll
    for (int i = 0; i < 4; i++)
      hp[i] = __floats2bfloat162_rn(acc[2 * i] / l, acc[2 * i + 1] / l);
    *(uint4 *)(o + wid * D + li * 8) = u;
  }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    decode_paged(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k_cache,
                 const __nv_bfloat16 *__restrict__ v_cache, const int *__restrict__ page_table,
                 const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o, long batch,
                 long heads_q, long heads_kv, long head_dim, long num_pages, long max_pages) {
  (void)num_pages;
  switch (head_dim) {
  case 64:
    head<64>(q, k_cache, v_cache, page_table, seq_lens, o, batch, heads_q, heads_kv, max_pages);
    break;
  case 128:
    head<128>(q, k_cache, v_cache, page_table, seq_lens, o, batch, heads_q, heads_kv, max_pages);
    break;
  case 32:
    head<32>(q, k_cache, v_cache, page_table, seq_lens, o, batch, heads_q, heads_kv, max_pages);
    break;
  default:
    __trap();
  }
}
