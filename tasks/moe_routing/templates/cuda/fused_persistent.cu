// ksearch: backend=cuda entry=moe_routing
// ksearch: family=fused_persistent
// ksearch: concepts=persistent_kernel,warp_shuffle_reduction,block_reduction,atomics
// ksearch: param PERSISTENT in 128,64,32
// ksearch: param WARPS in 16,8,4
// ksearch: launch grid=(PERSISTENT) block=(32 * WARPS) scratch=(4 * (32 + PERSISTENT * experts))
//
// CUDA template for tasks/moe_routing, family fused_persistent (DESIGN.md:
// Templates): the whole routing in ONE kernel. A persistent grid of
// PERSISTENT blocks (all resident: at most one per SM on a GPU of >= 128 SMs
// at the default; fewer blocks for smaller GPUs) splits the tokens into
// contiguous ranges. Phase 1: a warp per token takes the top-k by k warp
// argmax rounds on (logit desc, expert asc) (softmax keeps the order, so ties
// are exact), weights are the softmax of the chosen logits (the full
// denominator cancels in the renormalization), and a shared histogram counts
// experts per block. A grid barrier (counter in scratch). Phase 2: each block
// reads every block's counts: per expert the total (its exclusive scan over
// experts is offsets) and the counts of the blocks before it. Phase 3: the
// block places its assignments, ascending within an expert, by warp
// match_any ranks and a per-warp count scan. experts <= 256, topk <= 32.
#include <cuda_bf16.h>
#include <stdint.h>

#define MAXE 256 /* experts held by a warp: 8 per lane */
#define EPL (MAXE / 32)
#define MAXK 32

// Top-k of one token by a warp: each lane holds experts lane, lane+32, ...;
// k rounds of a warp argmax on (logit desc, expert asc). Lane s < topk ends
// with the s-th choice; weights are softmax over the chosen logits (the full
// softmax's denominator cancels in the renormalization).
__device__ __forceinline__ void warp_topk(const float *__restrict__ row, int experts, int topk,
                                          int lane, float *w_out, int *id_out) {
  float v[EPL];
  unsigned sel = 0;
#pragma unroll
  for (int i = 0; i < EPL; i++) {
    int e = lane + 32 * i;
    v[i] = e < experts ? row[e] : 0.f;
  }
  float myv = 0.f;
  int myid = -1;
  for (int s = 0; s < topk; s++) {
    float bv = 0.f;
    int bi = -1;
#pragma unroll
    for (int i = 0; i < EPL; i++) {
      int e = lane + 32 * i;
      // within a lane the expert index grows with i: strict > keeps the lower on ties
      if (e < experts && !(sel >> i & 1) && (bi < 0 || v[i] > bv)) {
        bv = v[i];
        bi = e;
      }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      float ov = __shfl_xor_sync(0xffffffffu, bv, off);
      int oi = __shfl_xor_sync(0xffffffffu, bi, off);
      if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) {
        bv = ov;
        bi = oi;
      }
    }
    if (bi >= 0 && (bi & 31) == lane)
      sel |= 1u << (bi >> 5);
    if (lane == s) {
      myv = bv;
      myid = bi;
    }
  }
  const float top = __shfl_sync(0xffffffffu, myv, 0);
  float p = lane < topk ? expf(myv - top) : 0.f;
  float sum = p;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, off);
  *w_out = p / sum;
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

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    moe_routing(const float *__restrict__ logits, float *__restrict__ weights,
                int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                long tokens, long experts, long topk, unsigned *scratch) {
  __shared__ int hist[MAXE], base[MAXE], off[MAXE + 1];
  __shared__ int wcnt[WARPS * MAXE];
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
  // phase 1: selection, a warp per token
  for (long t = t0 + warp; t < t1; t += WARPS) {
    float w;
    int id;
    warp_topk(logits + t * E, E, K, lane, &w, &id);
    if (lane < K) {
      weights[t * K + lane] = w;
      ids[t * K + lane] = id;
      atomicAdd(&hist[id], 1);
    }
  }
  __syncthreads();
  for (int e = tid; e < E; e += blockDim.x)
    cnt[(long)blockIdx.x * E + e] = hist[e];
  grid_barrier(arrive, gen);
  // phase 2: per expert, the total and the count of the blocks before this one
  for (int e = tid; e < E; e += blockDim.x) {
    int tot = 0, pre = 0;
#pragma unroll 8
    for (int b = 0; b < PERSISTENT; b++) {
      int c = __ldcg(cnt + (long)b * E + e);
      tot += c;
      pre += b < (int)blockIdx.x ? c : 0;
    }
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
