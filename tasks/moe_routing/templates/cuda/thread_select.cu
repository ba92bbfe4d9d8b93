// ksearch: backend=cuda entry=moe_routing
// ksearch: family=thread_select
// ksearch: concepts=register_blocking,block_reduction,atomics
// ksearch: param THREADS in 128,64,256
// ksearch: launch kernel=route_thread_select grid=(cdiv(tokens, THREADS)) block=(THREADS)
// ksearch: launch kernel=route_block_sort grid=(1) block=(1024)
//
// CUDA template for tasks/moe_routing, family thread_select (DESIGN.md:
// Templates): the simple two-launch layout. A thread per token walks its
// logits once keeping the 8 best (logit desc, expert asc) in registers by
// compare-and-swap; weights are the softmax of the chosen logits. Then ONE
// block counts experts (shared atomics), scans, and places every assignment
// in order with the same stable chunk ranking as the other families (warp
// match_any + per-warp count scan). Serial in the second pass: the family
// that shows what the fused and block-parallel layouts buy. topk <= 8,
// experts <= 256. place_range and scan_experts are the same text as in
// fused_persistent.cu (a template is one self-contained file): change all.
#include <cuda_bf16.h>
#include <stdint.h>

#define MAXE 256 /* experts held by a warp: 8 per lane */
#define EPL (MAXE / 32)
#define MAXK 32

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

#ifndef THREADS
#define THREADS 128
#endif
#define KMAX 8 /* the list a thread keeps in registers */

// pass 1: a thread per token keeps a sorted list of its KMAX best (logit
// desc, expert asc) by compare-and-swap down the list (unrolled: registers)
extern "C" __global__ void __launch_bounds__(THREADS)
    route_thread_select(const float *__restrict__ logits, float *__restrict__ weights,
                        int *__restrict__ ids, int *__restrict__ offsets,
                        int *__restrict__ sorted, long tokens, long experts, long topk) {
  (void)offsets, (void)sorted;
  const int E = (int)experts, K = (int)topk;
  if (K > KMAX || K > E)
    __trap(); // outside what this template holds
  const long t = (long)blockIdx.x * THREADS + threadIdx.x;
  if (t >= tokens)
    return;
  float bv[KMAX];
  int bi[KMAX];
#pragma unroll
  for (int j = 0; j < KMAX; j++) {
    bv[j] = 0.f;
    bi[j] = -1; // empty slot
  }
  const float *row = logits + t * E;
  for (int e = 0; e < E; e++) {
    float x = __ldg(row + e);
    int xi = e;
#pragma unroll
    for (int j = 0; j < KMAX; j++) {
      // order (logit desc, expert asc); a displaced entry carries on down
      if (xi >= 0 && (bi[j] < 0 || x > bv[j] || (x == bv[j] && xi < bi[j]))) {
        float tv = bv[j];
        int ti = bi[j];
        bv[j] = x;
        bi[j] = xi;
        x = tv;
        xi = ti;
      }
    }
  }
  float sum = 0.f;
  for (int j = 0; j < K; j++)
    sum += expf(bv[j] - bv[0]);
  for (int j = 0; j < K; j++) {
    weights[t * K + j] = expf(bv[j] - bv[0]) / sum;
    ids[t * K + j] = bi[j];
  }
}

// pass 2, one block of 1024: the expert histogram, offsets, and every
// assignment placed in order (chunks of 1024, stable within an expert)
extern "C" __global__ void __launch_bounds__(1024)
    route_block_sort(const float *__restrict__ logits, float *__restrict__ weights,
                     int *__restrict__ ids, int *__restrict__ offsets,
                     int *__restrict__ sorted, long tokens, long experts, long topk) {
  (void)logits, (void)weights;
  __shared__ int hist[MAXE], off[MAXE + 1];
  __shared__ int wcnt[32 * MAXE];
  const int E = (int)experts;
  if (E > MAXE)
    __trap();
  const long n = tokens * topk;
  for (int e = threadIdx.x; e < E; e += blockDim.x)
    hist[e] = 0;
  __syncthreads();
  for (long a = threadIdx.x; a < n; a += blockDim.x)
    atomicAdd(&hist[ids[a]], 1);
  __syncthreads();
  scan_experts(hist, off, E);
  __syncthreads();
  for (int e = threadIdx.x; e <= E; e += blockDim.x) {
    offsets[e] = off[e];
    if (e < E)
      hist[e] = off[e]; // the running start of each expert
  }
  __syncthreads();
  place_range(ids, sorted, 0, n, E, hist, wcnt);
}
