// ksearch: backend=mlx entry=moe_routing kernel=cuda
// ksearch: family=fused_persistent
// ksearch: concepts=persistent_kernel,warp_shuffle_reduction,block_reduction,atomics
// ksearch: param PERSISTENT in 128,64,32
// ksearch: param WARPS in 16,8,4
// ksearch: param PF in 4,8,2
// ksearch: launch grid=(ceil(PERSISTENT) * (32 * WARPS)) threadgroup=(32 * WARPS) scratch=(4 * (32 + PERSISTENT * experts))
//
// Translated from tasks/moe_routing/templates/cuda/fused_persistent.cu by `ksearch translate --to mlx`: MLX writes the
// __global__ signature, so the kernels are __device__ functions here and the
// body calls ks_mlx_moe_routing with KS_ARGS (the task's arrays, var axes and scalars).
//
// CUDA template for tasks/moe_routing, family fused_persistent (DESIGN.md:
// Templates): the whole routing in ONE kernel. A persistent grid of
// PERSISTENT blocks (all resident: at most one per SM on a GPU of >= 128 SMs
// at the default; fewer blocks for smaller GPUs) splits the tokens into
// contiguous ranges. Phase 1: a warp per token (PF rows loaded ahead) takes
// the top-k on (logit desc, expert asc) (softmax keeps the order, so ties
// are exact): each lane sorts its share of the row once, then k rounds of
// two redux.sync reductions (max key, lowest expert holding it), about 20
// instructions a round where a shuffle argmax took ~90; weights are the
// softmax of the chosen logits (the full denominator cancels in the
// renormalization), and a shared histogram counts experts per block. A grid
// barrier (counter in scratch). Phase 2: each block reads every block's
// counts, all its threads at once: per expert the total (its exclusive scan
// over experts is offsets) and the counts of the blocks before it. Phase 3: the
// block places its assignments, ascending within an expert, by warp
// match_any ranks and a per-warp count scan. experts <= 256, topk <= 32.
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

#define MAXE 256 /* experts held by a warp: 8 per lane */
#define MAXK 32
#define FULL 0xffffffffu

#ifndef PF
#define PF 4 /* token rows a warp loads before it selects on any of them */
#endif

// A float as an unsigned key with the same order (-0 as +0: the reference
// compares floats, so they tie and the lower expert wins); 0 is no key.
__device__ __forceinline__ unsigned f2key(float f) {
  unsigned u = __float_as_uint(f);
  u = u == 0x80000000u ? 0u : u;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key2f(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// Top-k of one token by a warp whose lane holds experts lane, lane+32, ...
// (N = 1, 2, 4 or 8 of them; x = their logits). Each lane sorts its own
// (key, slot) pairs once, descending, ties to the lower slot (a stable
// bubble network: slot order is expert order within a lane). Then k rounds
// of two warp reductions (redux.sync, one instruction each on sm_80+): the
// largest head key, and among the lanes holding it the lowest expert; the
// winner shifts its list. Every lane sees every round's winner, so the
// weights need no shuffles: softmax over the chosen logits (the full
// softmax's denominator cancels in the renormalization). Lane s < topk ends
// with the s-th choice.
template <int N>
__device__ __forceinline__ void select_one(const float (&x)[N], int experts, int topk, int lane,
                                           float *w_out, int *id_out) {
  unsigned long long c[N];
#pragma unroll
  for (int i = 0; i < N; i++) {
    const int e = lane + 32 * i;
    c[i] = e < experts ? ((unsigned long long)f2key(x[i]) << 32) | (unsigned)(N - i) : 0ull;
  }
#pragma unroll
  for (int a = 0; a < N; a++)
#pragma unroll
    for (int b = N - 1; b > a; b--) {
      const unsigned long long hi = c[b] > c[b - 1] ? c[b] : c[b - 1];
      const unsigned long long lo = c[b] > c[b - 1] ? c[b - 1] : c[b];
      c[b - 1] = hi, c[b] = lo;
    }
  float top = 0.f, sum = 0.f, myp = 0.f;
  int myid = -1;
  for (int s = 0; s < topk; s++) {
    const unsigned hk = (unsigned)(c[0] >> 32);
    const unsigned M = __reduce_max_sync(FULL, hk);
    const unsigned cand =
        c[0] != 0ull && hk == M ? (unsigned)lane + 32u * (unsigned)(N - (unsigned)c[0]) : FULL;
    const unsigned W = __reduce_min_sync(FULL, cand);
    if ((int)(W & 31u) == lane) {
#pragma unroll
      for (int i = 0; i + 1 < N; i++)
        c[i] = c[i + 1];
      c[N - 1] = 0ull;
    }
    const float v = key2f(M);
    top = s == 0 ? v : top;
    const float p = expf(v - top);
    sum += p;
    if (lane == s)
      myp = p, myid = (int)W;
  }
  *w_out = myp / sum;
  *id_out = myid;
}

// Stable placement of assignments [a_begin, a_end) (contiguous, ascending):
// sorted[base[e] + rank] = a where rank counts the earlier assignments of e in
// the range. base[] (shared, one per expert) is advanced past them. Chunks
// of blockDim.x assignments: ranks within a warp by __match_any_sync, across
// warps by a per-expert exclusive scan of per-warp counts (wcnt, shared,
// [nwarps][MAXE]). Called by every thread of the block.
__device__ void place_range(const int *ids, int *sorted, long a_begin, long a_end, int experts,
                            int *base, int *wcnt) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nw = blockDim.x >> 5;
  const unsigned lt = (1u << lane) - 1;
  for (long a0 = a_begin; a0 < a_end; a0 += blockDim.x) {
    for (int i = tid; i < nw * experts; i += blockDim.x)
      wcnt[(i / experts) * MAXE + i % experts] = 0;
    __syncthreads();
    const long a = a0 + tid;
    const int e = a < a_end ? ids[a] : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, e);
    const int rank = __popc(peers & lt);
    if (e >= 0 && rank == 0)
      wcnt[warp * MAXE + e] = __popc(peers);
    __syncthreads();
    for (int x = tid; x < experts; x += blockDim.x) {
      int run = base[x];
      for (int w = 0; w < nw; w++) {
        int c = wcnt[w * MAXE + x];
        wcnt[w * MAXE + x] = run;
        run += c;
      }
      base[x] = run;
    }
    __syncthreads();
    if (e >= 0)
      sorted[wcnt[warp * MAXE + e] + rank] = (int)a;
    __syncthreads(); // wcnt is cleared by the next chunk
  }
}

// exclusive scan of tot[0..experts) into off[] by warp 0; returns nothing,
// off[experts] is the total
__device__ void scan_experts(const int *tot, int *off, int experts) {
  if (threadIdx.x >= 32)
    return;
  const int lane = threadIdx.x;
  int carry = 0;
  for (int c0 = 0; c0 < experts; c0 += 32) {
    int e = c0 + lane;
    int x = e < experts ? tot[e] : 0, incl = x;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      int y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d)
        incl += y;
    }
    if (e < experts)
      off[e] = carry + incl - x;
    carry += __shfl_sync(0xffffffffu, incl, 31);
  }
  if (lane == 0)
    off[experts] = carry;
}

#ifndef PERSISTENT
#define PERSISTENT 128
#endif
#ifndef WARPS
#define WARPS 16
#endif
static_assert((PERSISTENT & (PERSISTENT - 1)) == 0, "PERSISTENT must be a power of two");

// Grid-wide barrier for a persistent grid (every block resident). The
// counter starts at 0xFFFFFFFF (scratch is 0xFF-filled once at load) and
// grows by PERSISTENT per launch: the last arrival of a launch is the one
// that sees old + 2 == 0 (mod PERSISTENT, a power of two, so the 2^32 wrap
// is harmless); it bumps the generation the others wait on.
__device__ void grid_barrier(unsigned *arrive, unsigned *gen) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned *vg = gen;
    const unsigned g0 = *vg;
    __threadfence();
    const unsigned old = atomicAdd(arrive, 1u);
    if ((old + 2u) % PERSISTENT == 0) {
      __threadfence();
      atomicAdd(gen, 1u);
    } else {
      while (*vg == g0)
        __nanosleep(64);
    }
    __threadfence();
  }
  __syncthreads();
}

// Phase 1 of a block: tokens [t0, t1), warp w takes t0 + w, t0 + w + WARPS,
// ...; PF rows are loaded before any is used (their latencies overlap);
// lane s < topk writes choice s and counts it in the block's histogram.
template <int N>
__device__ void select_range(const float *__restrict__ logits, float *__restrict__ weights,
                             int *__restrict__ ids, int *hist, long t0, long t1, int E, int K,
                             int warp, int lane) {
  for (long tb = t0 + warp; tb < t1; tb += (long)PF * WARPS) {
    float x[PF][N];
#pragma unroll
    for (int u = 0; u < PF; u++) {
      const long t = tb + (long)u * WARPS;
#pragma unroll
      for (int i = 0; i < N; i++) {
        const int e = lane + 32 * i;
        x[u][i] = t < t1 && e < E ? __ldg(logits + t * E + e) : 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < PF; u++) {
      const long t = tb + (long)u * WARPS;
      if (t >= t1)
        break; // warp-uniform
      float w;
      int id;
      select_one<N>(x[u], E, K, lane, &w, &id);
      if (lane < K) {
        weights[t * K + lane] = w;
        ids[t * K + lane] = id;
        atomicAdd(&hist[id], 1);
      }
    }
  }
}

// phase 2's partial sums: one per thread, or per expert when experts outnumber threads
#define PSH (MAXE > 32 * WARPS ? MAXE : 32 * WARPS)

__device__ __forceinline__ void ks_mlx_moe_routing(const float *__restrict__ logits, float *__restrict__ weights,
                int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                long tokens, long experts, long topk, unsigned *scratch) {
  __shared__ int hist[MAXE], base[MAXE], off[MAXE + 1];
  __shared__ int wcnt[WARPS * MAXE];
  __shared__ int ptot[PSH], ppre[PSH];
  const int E = (int)experts, K = (int)topk;
  if (E > MAXE || K > MAXK || K > E || gridDim.x != PERSISTENT)
    __trap(); // outside what this template holds; never a silent wrong answer
  unsigned *arrive = scratch, *gen = scratch + 1;
  int *cnt = (int *)scratch + 32; // [PERSISTENT][experts]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long per = (tokens + PERSISTENT - 1) / PERSISTENT;
  const long t0 = blockIdx.x * per < tokens ? blockIdx.x * per : tokens;
  const long t1 = t0 + per < tokens ? t0 + per : tokens;
  for (int e = tid; e < E; e += blockDim.x)
    hist[e] = 0;
  __syncthreads();
  // phase 1: selection, a warp per token, the lane's share of the row
  // sized to the expert count (a warp-uniform branch)
  if (E <= 32)
    select_range<1>(logits, weights, ids, hist, t0, t1, E, K, warp, lane);
  else if (E <= 64)
    select_range<2>(logits, weights, ids, hist, t0, t1, E, K, warp, lane);
  else if (E <= 128)
    select_range<4>(logits, weights, ids, hist, t0, t1, E, K, warp, lane);
  else
    select_range<8>(logits, weights, ids, hist, t0, t1, E, K, warp, lane);
  __syncthreads();
  for (int e = tid; e < E; e += blockDim.x)
    cnt[(long)blockIdx.x * E + e] = hist[e];
  grid_barrier(arrive, gen);
  // phase 2: per expert, the total and the count of the blocks before this
  // one; NP threads per expert share the blocks (all threads load at once)
  const int NP = E < (int)blockDim.x ? (int)blockDim.x / E : 1;
  for (int x = tid; x < E * NP; x += blockDim.x) {
    const int e = x % E, part = x / E;
    int tot = 0, pre = 0;
#pragma unroll 8
    for (int b = part; b < PERSISTENT; b += NP) {
      const int c = __ldcg(cnt + (long)b * E + e);
      tot += c;
      pre += b < (int)blockIdx.x ? c : 0;
    }
    ptot[x] = tot, ppre[x] = pre;
  }
  __syncthreads();
  for (int e = tid; e < E; e += blockDim.x) {
    int tot = 0, pre = 0;
    for (int part = 0; part < NP; part++)
      tot += ptot[part * E + e], pre += ppre[part * E + e];
    hist[e] = tot;
    base[e] = pre;
  }
  __syncthreads();
  scan_experts(hist, off, E);
  __syncthreads();
  for (int e = tid; e <= E; e += blockDim.x) {
    if (blockIdx.x == 0)
      offsets[e] = off[e];
    if (e < E)
      base[e] += off[e];
  }
  __syncthreads();
  // phase 3: this block's assignments, stable within each expert
  place_range(ids, sorted, t0 * K, t1 * K, E, base, wcnt);
}

// ksearch: body
ks_mlx_moe_routing(KS_ARGS);
