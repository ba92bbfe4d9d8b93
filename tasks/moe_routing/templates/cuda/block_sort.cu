// ksearch: backend=cuda entry=moe_routing
// ksearch: family=block_sort
// ksearch: concepts=warp_shuffle_reduction,block_reduction,atomics
// ksearch: param ROWS in 128,64,256,32
// ksearch: param WARPS in 8,4,16
// ksearch: launch kernel=route_select grid=(cdiv(tokens, ROWS)) block=(32 * WARPS) scratch=(4 * cdiv(tokens, ROWS) * experts)
// ksearch: launch kernel=route_scan grid=(1) block=(256)
// ksearch: launch kernel=route_place grid=(cdiv(tokens, ROWS)) block=(32 * WARPS)
//
// CUDA template for tasks/moe_routing, family block_sort (DESIGN.md:
// Templates): the same selection and stable placement as fused_persistent,
// in three launches instead of a grid barrier, so any number of blocks
// works. route_select: a block per ROWS tokens, a warp per token (k warp
// argmax rounds on (logit desc, expert asc)), the block's expert histogram
// to scratch. route_scan (one block): per expert, the column of block
// counts becomes each block's start and the totals' exclusive scan is
// offsets. route_place: each block ranks its assignments by warp match_any
// and per-warp counts and writes sorted. experts <= 256, topk <= 32.
// warp_topk, place_range and scan_experts are the same text as in
// fused_persistent.cu (a template is one self-contained file): change all.
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

#ifndef ROWS
#define ROWS 128
#endif
#ifndef WARPS
#define WARPS 8
#endif
#define NBLK(tokens) (((tokens) + ROWS - 1) / ROWS)

// pass 1: a block per ROWS tokens: selection (a warp per token) and the
// block's per-expert counts into scratch [nblk][experts]
extern "C" __global__ void __launch_bounds__(32 * WARPS)
    route_select(const float *__restrict__ logits, float *__restrict__ weights,
                 int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                 long tokens, long experts, long topk, int *scratch) {
  (void)offsets, (void)sorted;
  __shared__ int hist[MAXE];
  const int E = (int)experts, K = (int)topk;
  if (E > MAXE || K > MAXK || K > E)
    __trap(); // outside what this template holds
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long t0 = (long)blockIdx.x * ROWS, t1 = t0 + ROWS < tokens ? t0 + ROWS : tokens;
  for (int e = tid; e < E; e += blockDim.x)
    hist[e] = 0;
  __syncthreads();
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
    scratch[(long)blockIdx.x * E + e] = hist[e];
}

// pass 2, one block: per expert, the counts of the blocks turn into each
// block's start (in place), the totals into offsets
extern "C" __global__ void __launch_bounds__(256)
    route_scan(const float *__restrict__ logits, float *__restrict__ weights,
               int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
               long tokens, long experts, long topk, int *scratch) {
  (void)logits, (void)weights, (void)ids, (void)sorted, (void)topk;
  __shared__ int tot[MAXE], off[MAXE + 1];
  const int E = (int)experts;
  const long nb = NBLK(tokens);
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    int run = 0;
    for (long b = 0; b < nb; b++) {
      int c = scratch[b * E + e];
      scratch[b * E + e] = run;
      run += c;
    }
    tot[e] = run;
  }
  __syncthreads();
  scan_experts(tot, off, E);
  __syncthreads();
  for (int e = threadIdx.x; e <= E; e += blockDim.x) {
    offsets[e] = off[e];
    if (e < E)
      for (long b = 0; b < nb; b++)
        scratch[b * E + e] += off[e];
  }
}

// pass 3: each block places its own assignments, stable within an expert
extern "C" __global__ void __launch_bounds__(32 * WARPS)
    route_place(const float *__restrict__ logits, float *__restrict__ weights,
                int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                long tokens, long experts, long topk, int *scratch) {
  (void)logits, (void)weights, (void)offsets;
  __shared__ int base[MAXE];
  __shared__ int wcnt[WARPS * MAXE];
  const int E = (int)experts, K = (int)topk;
  const long t0 = (long)blockIdx.x * ROWS, t1 = t0 + ROWS < tokens ? t0 + ROWS : tokens;
  for (int e = threadIdx.x; e < E; e += blockDim.x)
    base[e] = scratch[(long)blockIdx.x * E + e];
  __syncthreads();
  place_range(ids, sorted, t0 * K, t1 * K, E, base, wcnt);
}
