// ksearch: backend=mlx entry=decode_paged kernel=cuda
// ksearch: family=group_per_block
// ksearch: concepts=online_softmax,paged_gather,vector_loads_128,warp_shuffle_reduction
// ksearch: param WARPS in 8,4,2
// ksearch: param UNROLL in 4,2,1
// ksearch: param GMAX in 4,8
// ksearch: launch grid=(ceil(heads_kv) * (32 * WARPS), ceil( batch) * ( 1)) threadgroup=(32 * WARPS,  1)
//
// Translated from tasks/decode_paged/templates/cuda/group_per_block.cu by `ksearch translate --to mlx`: MLX writes the
// __global__ signature, so the kernels are __device__ functions here and the
// body calls ks_mlx_decode_paged with KS_ARGS (the task's arrays, var axes and scalars).
#include <cuda/std/cmath>
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
//
// CUDA template for tasks/decode_paged, family group_per_block (DESIGN.md:
// Templates): one launch, no split: a block per (kv head, sequence) walks the
// whole paged KV of its sequence once for the GQA group (same inner loop as
// split_kv: head_dim/8 lanes per token, 16-byte loads, UNROLL tokens in flight,
// per-lane-group online softmax merged by warp butterflies and shared memory)
// and writes o directly. No scratch and no second pass; parallelism is only
// batch x heads_kv blocks, so it suits many sequences and loses to split_kv
// on few long ones. range_state and its helpers are the same text as
// split_kv.cu's (a template is one self-contained file): change both.
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

#ifndef WARPS
#define WARPS 4
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#define PAGE 16
#ifndef GMAX
#define GMAX 4
#endif
#define MAXG 8 /* query heads per kv head: instances for 1, 2, 4 and, with GMAX 8, 8 */
#define MAXD 128 /* largest head_dim instance */

__device__ __forceinline__ void bf8(const uint4 &u, float *f) {
  const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 x = __bfloat1622float2(h[i]);
    f[2 * i] = x.x;
    f[2 * i + 1] = x.y;
  }
}

// One (sequence b, kv head g, token range [t0, t1)): the group's partial
// softmax state, merged over the block, into part[(b*heads_q + h)*ns + s]
template <int D, int G>
__device__ void range_state(const __nv_bfloat16 *__restrict__ q,
                            const __nv_bfloat16 *__restrict__ kc,
                            const __nv_bfloat16 *__restrict__ vc,
                            const int *__restrict__ page_table, long heads_q,
                            long heads_kv, long max_pages, long b, long g, long t0,
                            long t1, float *out_m, float *out_l, float *out_o,
                            long out_stride, float *smem,
                            __nv_bfloat16 *final_o) {
  constexpr int LPT = D / 8;       // lanes per token
  constexpr int TPW = 32 / LPT;    // tokens per warp at once
  constexpr int NGRP = WARPS * TPW; // lane groups in the block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sub = lane / LPT, li = lane % LPT, grp = warp * TPW + sub;
  const float scale = 1.f / sqrtf((float)D);
  float qv[G][8], acc[G][8], m[G], l[G];
#pragma unroll
  for (int hh = 0; hh < G; hh++) {
    m[hh] = -INFINITY;
    l[hh] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; e++) {
      acc[hh][e] = 0.f;
      qv[hh][e] = 0.f;
    }
    uint4 u = __ldg((const uint4 *)(q + ((b * heads_q + g * G + hh) * D + li * 8)));
    bf8(u, qv[hh]);
#pragma unroll
    for (int e = 0; e < 8; e++)
      qv[hh][e] *= scale;
  }
  const int *pt = page_table + b * max_pages;
  // the loop bound is the same for every lane (the shuffles below need the
  // whole warp); a lane group past t1 computes nothing it keeps
  for (long base = t0; base < t1; base += (long)NGRP * UNROLL) {
    uint4 ku[UNROLL], vu[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      long t = base + grp + (long)u * NGRP;
      ok[u] = t < t1;
      ku[u] = vu[u] = make_uint4(0, 0, 0, 0);
      if (ok[u]) {
        long page = __ldg(pt + t / PAGE);
        long off = ((page * PAGE + t % PAGE) * heads_kv + g) * D + li * 8;
        ku[u] = __ldg((const uint4 *)(kc + off));
        vu[u] = __ldg((const uint4 *)(vc + off));
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      float kf[8], vf[8];
      bf8(ku[u], kf);
      bf8(vu[u], vf);
#pragma unroll
      for (int hh = 0; hh < G; hh++) {
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < 8; e++)
          s = fmaf(qv[hh][e], kf[e], s);
#pragma unroll
        for (int off = LPT / 2; off > 0; off >>= 1)
          s += __shfl_xor_sync(0xffffffffu, s, off);
        if (!ok[u])
          continue;
        float mn = fmaxf(m[hh], s);
        float corr = __expf(m[hh] - mn), p = __expf(s - mn);
        m[hh] = mn;
        l[hh] = l[hh] * corr + p;
#pragma unroll
        for (int e = 0; e < 8; e++)
          acc[hh][e] = fmaf(acc[hh][e], corr, p * vf[e]);
      }
    }
  }
  // merge the lane groups of a warp (butterfly over the token lanes), then
  // the warps in shared memory, per (head, dim)
#pragma unroll
  for (int off = LPT; off < 32; off <<= 1)
#pragma unroll
    for (int hh = 0; hh < G; hh++) {
      float m2 = __shfl_xor_sync(0xffffffffu, m[hh], off);
      float l2 = __shfl_xor_sync(0xffffffffu, l[hh], off);
      float mn = fmaxf(m[hh], m2);
      // an empty group has m = -inf, l = 0: weight 0, never NaN
      float w1 = mn == -INFINITY ? 0.f : __expf(m[hh] - mn);
      float w2 = mn == -INFINITY ? 0.f : __expf(m2 - mn);
      l[hh] = l[hh] * w1 + l2 * w2;
#pragma unroll
      for (int e = 0; e < 8; e++) {
        float a2 = __shfl_xor_sync(0xffffffffu, acc[hh][e], off);
        acc[hh][e] = acc[hh][e] * w1 + a2 * w2;
      }
      m[hh] = mn;
    }
  float *so = smem;                       // [WARPS][MAXG][D]
  float *sm = so + WARPS * MAXG * D;      // [WARPS][MAXG]
  float *sl = sm + WARPS * MAXG;          // [WARPS][MAXG]
  if (sub == 0)
#pragma unroll
    for (int hh = 0; hh < G; hh++) {
      if (li == 0) {
        sm[warp * MAXG + hh] = m[hh];
        sl[warp * MAXG + hh] = l[hh];
      }
#pragma unroll
      for (int e = 0; e < 8; e++)
        so[(warp * MAXG + hh) * D + li * 8 + e] = acc[hh][e];
    }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += 32 * WARPS) {
    int hh = idx / D, d = idx % D;
    float M = -INFINITY;
    for (int r = 0; r < WARPS; r++)
      M = fmaxf(M, sm[r * MAXG + hh]);
    float L = 0.f, O = 0.f;
    if (M > -INFINITY)
      for (int r = 0; r < WARPS; r++) {
        float w = __expf(sm[r * MAXG + hh] - M); // an empty warp: e^-inf = 0
        L += sl[r * MAXG + hh] * w;
        O += so[(r * MAXG + hh) * D + d] * w;
      }
    if (final_o) { // one range: the answer itself
      final_o[(long)hh * D + d] = __float2bfloat16_rn(O / L);
      continue;
    }
    float *op = out_o + (long)hh * out_stride;
    op[d] = O;
    if (d == 0) {
      out_m[(long)hh * out_stride] = M;
      out_l[(long)hh * out_stride] = L;
    }
  }
}

template <int D, int G>
__device__ void group_pass(const __nv_bfloat16 *q, const __nv_bfloat16 *kc,
                           const __nv_bfloat16 *vc, const int *page_table,
                           const int *seq_lens, __nv_bfloat16 *o, long heads_q,
                           long heads_kv, long max_pages, float *smem) {
  const long g = blockIdx.x, b = blockIdx.y;
  range_state<D, G>(q, kc, vc, page_table, heads_q, heads_kv, max_pages, b, g, 0,
                    seq_lens[b], nullptr, nullptr, nullptr, 0, smem,
                    o + (b * heads_q + g * G) * D);
}

__device__ __forceinline__ void ks_mlx_decode_paged(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k_cache,
                 const __nv_bfloat16 *__restrict__ v_cache, const int *__restrict__ page_table,
                 const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o, long batch,
                 long heads_q, long heads_kv, long head_dim, long num_pages, long max_pages) {
  (void)batch, (void)num_pages;
  __shared__ float red[WARPS * MAXG * (MAXD + 2)];
  // compile-time head_dim and group width: registers for exactly the group
  switch (head_dim * 16 + heads_q / heads_kv) {
#define GROUP_CASE(DD, GG)                                                     \
  case DD * 16 + GG:                                                           \
    group_pass<DD, GG>(q, k_cache, v_cache, page_table, seq_lens, o, heads_q,  \
                       heads_kv, max_pages, red);                              \
    break;
    GROUP_CASE(128, 4) GROUP_CASE(128, 1) GROUP_CASE(128, 2)
    GROUP_CASE(64, 4) GROUP_CASE(64, 1) GROUP_CASE(64, 2)
    GROUP_CASE(32, 4) GROUP_CASE(32, 1) GROUP_CASE(32, 2)
#if GMAX >= 8
    GROUP_CASE(128, 8) GROUP_CASE(64, 8) GROUP_CASE(32, 8)
#endif
  default:
    __trap(); // no instance: head_dim 32/64/128 and groups of 1, 2, 4 (8 with GMAX 8)
  }
}

// ksearch: body
ks_mlx_decode_paged(KS_ARGS);
