// ksearch: backend=mlx entry=decode_paged kernel=cuda
// ksearch: family=flash_decode
// ksearch: concepts=split_kv_flash_decoding,tensor_core_mma,online_softmax,paged_gather,vector_loads_128,warp_shuffle_reduction,launch_bounds_occupancy,programmatic_dependent_launch
// ksearch: param SPLIT_PAGES in 32,64,16,8
// ksearch: param SPLIT_BLOCKS in 264,1048576,1024,2048,512,396
// ksearch: param WARPS in 8,4,2
// ksearch: param PIPE in 0,1,2
// ksearch: param MINW in 16,0
// ksearch: param MERGE in 1
// ksearch: param PDL in 0
// ksearch: param HEAD_WAIT in 0
// ksearch: launch grid=(ceil(heads_kv) * (32 * WARPS), ceil( cdiv(max_pages, max(SPLIT_PAGES, cdiv(batch * heads_kv * max_pages, SPLIT_BLOCKS)))) * ( 1), ceil( batch) * ( 1)) threadgroup=(32 * WARPS,  1,  1) scratch=(4 * 65536 + 4 * batch * heads_q * cdiv(max_pages, max(SPLIT_PAGES, cdiv(batch * heads_kv * max_pages, SPLIT_BLOCKS))) * (head_dim + 2))
//
// Translated from tasks/decode_paged/templates/cuda/flash_decode.cu by `ksearch translate --to mlx`: MLX writes the
// __global__ signature, so the kernels are __device__ functions here and the
// body calls ks_mlx_fd_split with KS_ARGS (the task's arrays, var axes and scalars).
// One edit after translate: MERGE is pinned to 1 (the last block of each
// sequence and kv head merges its ranges inside fd_split, through the
// scratch words MLX's init_value fills with 0xFF at each call), PDL and
// HEAD_WAIT to 0 (there is no second launch to overlap or wait on), so the
// one kernel MLX launches is the whole computation and fd_merge is
// never needed.
#include <cuda/std/cmath>
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
//
// CUDA template for tasks/decode_paged, family flash_decode (DESIGN.md:
// Templates): flash-decoding whose inner loop runs on the tensor cores, so
// the SMs issue few instructions per KV byte and stay memory-bound (counted,
// not measured: split_kv's per-token softmax and shuffles cost ~1600 warp
// instructions per 16-token page and kv head at head_dim 128 and a group of
// 4; here the loop body is 32 mma and ~330 other PTX instructions).
// Pass 1 (fd_split): a block per (kv head, range of SP pages, sequence),
// SP = max(SPLIT_PAGES, cdiv(batch * heads_kv * max_pages, SPLIT_BLOCKS)):
// at most about SPLIT_BLOCKS blocks, so a short batch still splits its
// sequences finely and a large one is not cut into ranges of few pages
// (1048576: SP = SPLIT_PAGES whatever the shape); consecutive blocks are
// the kv heads of the same pages, so a 32 KiB page is read by neighbours
// at about the same time. Each warp takes
// whole pages of the range (warp w: pages w, w + WARPS, ...), 16 16-byte
// loads per lane per page; PIPE 0 / 2 load 1 / 2 pages before using them,
// PIPE 1 requests page k+1's K once S(k) is computed and its V once O has
// absorbed V(k) (loads in flight during the math, at the price of holding
// the next K: ~203 registers, 8 warps per SM instead of 12); page ids come
// from one coalesced load per 32 pages and a shuffle. Per page, with the
// GQA group's queries as rows of an m16n8k16 A operand (rows 0..G-1, G <= 8,
// the rest zero; kept in shared memory) and head_dim permuted identically in
// Q and K (a dot product does not care about order, so a K row is read as
// 64-byte runs by its 4 lanes): S = Q K^T in 2 x head_dim/16 mma; the S
// accumulator already holds, per lane, the 4 scores that are its B fragment
// of O^T = V^T P^T (no shuffle); P is split into bf16 hi + lo parts (two
// mma, ~16-bit weights, so the result matches float32 softmax to ~1e-5);
// V^T's A fragments are byte permutes of two tokens' 16-byte loads. Online
// softmax in float32 (log2 domain), the max per page by 2 shuffles, the sums
// per lane (reduced once at the end). Warps merge in shared memory; a
// sequence of one range writes o directly, others write (o, m, l) records.
// MERGE=1: no pass 2; the last block of a (sequence, kv head) to finish
// its range merges all ranges of its GQA group (a counter per pair in the
// first 64 Ki words of scratch: 0xFFFFFFFF as the executor fills scratch at
// load, so the last arrival sees ns - 2, and it puts the counter back),
// saving the second launch and its drain (at batch 1 the merge pass and the
// boundary were ~3 us of 42).
// Pass 2 (fd_merge): a block per (q head, sequence[, 32 columns]) merges:
// M = max m_s, o = sum o_s 2^(m_s - M) / sum l_s 2^(m_s - M), one online
// pass of float4 reads spread over split lanes, 8 records in flight each.
// With one range per sequence (pass 1's grid y is 1: batch 64 x 1024 at the
// defaults) pass 1 answers everything and the launch line skips pass 2 (its
// launch and wait cost 6.7 us of 113 on an H100, bench/results/
// gpu-h100-2026-12-05-decode-diag.json).
// HEAD_WAIT=1 (MERGE=0): pass 2's block of a q head waits for that head's
// ranges only, not for all of pass 1: each pass 1 block that wrote records
// counts them on a word per (sequence, q head) in scratch (fenced first), and
// the merge block polls its word until every range holding tokens arrived,
// then puts it back (0xFFFFFFFF, as the executor fills scratch). Under PDL
// the merge then starts as soon as its own ranges are in, without the
// grid-wide completion griddepcontrol.wait stands for; no deadlock: a
// dependent grid is placed only once every pass 1 block has started. Off by
// default: on an H100 at batch 1 x 32768 it was slower (64.5 against 63.4
// us; the counting costs pass 1 1.4 us, bench/results/
// gpu-h100-2026-12-05b-decode-diag.json); not yet timed on the H200.
// PDL=1: pass 2 is a programmatic dependent launch (sm_90): pass 1's blocks
// let it launch as they start, so its blocks are placed on SMs as pass 1's
// leave and wait (griddepcontrol.wait) for pass 1's memory instead of for a
// launch after pass 1 drained (the boundary is most of pass 2's cost at
// batch 1).
// Shapes without an instance (head_dim not 32/64/128, GQA group above 8)
// skip pass 1 and get a slow exact path in pass 2, so no shape is answered
// wrong.
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

#ifndef SPLIT_PAGES
#define SPLIT_PAGES 32
#endif
#ifndef SPLIT_BLOCKS
#define SPLIT_BLOCKS 264
#endif
#ifndef MERGE
#define MERGE 0 /* 1: the last block of each (sequence, kv head) merges */
#endif
#ifndef PDL
#define PDL 1 /* 1: pass 2 launched programmatically (its launch line) */
#endif
#ifndef HEAD_WAIT
#define HEAD_WAIT 0 /* 1: pass 2 waits on per-head counters, not the grid */
#endif
#define FD_CNT 65536 /* scratch words before the records: the counters */
#ifndef WARPS
#define WARPS 8
#endif
#ifndef PIPE
// 0 / 2: load 1 / 2 pages, then use them; 1: rotating K/V prefetch
#define PIPE 0
#endif
#define PAGE 16
#define MAXD 128
#define LOG2E 1.4426950408889634f
// registers (ptxas -v, no spills): PIPE 0 ~144 fits 12 warps per SM; PIPE 1
// holds the next K while using V (~203), PIPE 2 two pages (~251): 8 warps
// MINW > 0 asks for that many resident warps per SM instead (16 at PIPE 0:
// 128 registers, no spill; a wave of 4 blocks of 4 warps per SM)
#ifndef MINW
#define MINW 16
#endif
#define MINW_ ((MINW) > 0 ? (MINW) : (PIPE) == 0 ? 12 : 8)
#define MINB (MINW_ / (WARPS) > 0 ? MINW_ / (WARPS) : 1)

// d += a * b, m16n8k16, bf16 inputs, f32 accumulators
__device__ __forceinline__ void mma16816(float *d, const uint32_t *a,
                                         const uint32_t *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}

// programmatic dependent launch (PTX griddepcontrol, sm_90): pass 1 lets
// pass 2 launch; pass 2 waits for pass 1's completion and memory. Both are
// no-ops in a kernel not launched that way.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// low (high) bf16 halves of two words -> one word: a byte permute
__device__ __forceinline__ uint32_t lo2(uint32_t a, uint32_t b) {
  return (a & 0xffffu) | (b << 16);
}
__device__ __forceinline__ uint32_t hi2(uint32_t a, uint32_t b) {
  return (a >> 16) | (b & 0xffff0000u);
}

// (a, b) as bf16 pairs hi + lo with hi + lo = (a, b) to ~2^-17 relative
__device__ __forceinline__ void split_bf16(float a, float b, uint32_t &hi,
                                           uint32_t &lo) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  float2 f = __bfloat1622float2(h);
  __nv_bfloat162 l = __floats2bfloat162_rn(a - f.x, b - f.y);
  memcpy(&hi, &h, 4);
  memcpy(&lo, &l, 4);
}

// pages per range (the launch lines compute the same)
__device__ __forceinline__ long fd_sp(long batch, long heads_kv, long max_pages) {
  const long a = (batch * heads_kv * max_pages + SPLIT_BLOCKS - 1) / SPLIT_BLOCKS;
  return a > SPLIT_PAGES ? a : SPLIT_PAGES;
}

// the shapes pass 1 has instances for; both kernels decide alike
__device__ __forceinline__ bool fd_supported(long heads_q, long heads_kv,
                                             long head_dim) {
  return (head_dim == 32 || head_dim == 64 || head_dim == 128) &&
         heads_kv > 0 && heads_q % heads_kv == 0 && heads_q / heads_kv >= 1 &&
         heads_q / heads_kv <= 8;
}

// no pass 2 runs: MERGE=1, or one range per sequence (pass 1's grid y is 1,
// where the launch line skips fd_merge); pass 1 then answers what pass 2
// would have (zero-length sequences, shapes without an instance)
__device__ __forceinline__ bool fd_no_pass2() {
  return MERGE == 1 || gridDim.y == 1;
}

// pass 2's blocks per (sequence, q head): the launch line's grid z,
// 1 + (head_dim / 32 - 1) * min(1, floor(nsg / 64)) (32 columns a block once
// a row has 64 ranges); fd_merge traps if its grid disagrees, and HEAD_WAIT's
// counting in pass 1 (which cannot see pass 2's grid) uses the same words
__device__ __forceinline__ long fd_merge_z(long nsg, long head_dim) {
  return nsg >= 64 ? head_dim / 32 : 1;
}

// pages holding seq_lens[b] tokens, never past the page table's row
__device__ __forceinline__ long fd_pages(const int *seq_lens, long b,
                                         long max_pages) {
  long len = seq_lens[b], np = len > 0 ? (len + PAGE - 1) / PAGE : 0;
  return np < max_pages ? np : max_pages;
}

// Lane (g, q) = (lane / 4, lane % 4). K: rows (tokens) g and g + 8 of a
// page, head_dim/32 16-byte loads each at uint4 index q + 4j, word w of a
// row is chunk w/2's b0 (w even) or b1. V: tokens 2q, 2q+1, 2q+8, 2q+9,
// head_dim/8 values each at d = 64u + 8g + e (head_dim 32: d = 4g + e), word
// i of a token is tile i's rows g (low half) and g + 8 (high half).
// one page's K / V words of the lane; base = the page's slot 0 at kv head
// gk, hkd = heads_kv * head_dim (32-bit offsets inside a page: fewer
// registers than 64-bit row indices)
template <int D>
__device__ __forceinline__ void load_k(uint4 (&k)[2][D / 32],
                                       const __nv_bfloat16 *__restrict__ base,
                                       int hkd, int g, int q) {
#pragma unroll
  for (int r = 0; r < 2; r++) {
    const uint4 *kp = (const uint4 *)(base + (g + 8 * r) * hkd) + q;
#pragma unroll
    for (int j = 0; j < D / 32; j++)
      k[r][j] = __ldg(kp + 4 * j);
  }
}

template <int D>
__device__ __forceinline__ void load_v(uint32_t (&v)[4][D / 16],
                                       const __nv_bfloat16 *__restrict__ base,
                                       int hkd, int g, int q) {
#pragma unroll
  for (int k = 0; k < 4; k++) {
    const int t = 2 * q + (k & 1) + 8 * (k >> 1);
    const __nv_bfloat16 *vp = base + t * hkd;
    if constexpr (D >= 64) {
#pragma unroll
      for (int u = 0; u < D / 64; u++) {
        uint4 x = __ldg((const uint4 *)vp + 8 * u + g);
        v[k][4 * u] = x.x, v[k][4 * u + 1] = x.y;
        v[k][4 * u + 2] = x.z, v[k][4 * u + 3] = x.w;
      }
    } else {
      uint2 x = __ldg((const uint2 *)vp + g);
      v[k][0] = x.x, v[k][1] = x.y;
    }
  }
}

// S[h = g][t = 8n + 2q + i] of one page in sacc[n][i] (rows g + 8 unused):
// Q rows as A (a0, a2 = the lane's words 2c, 2c+1, kept in shared memory:
// 16 registers fewer for the loads in flight), K as B
template <int D>
__device__ __forceinline__ void score(const uint4 (&k)[2][D / 32],
                                      const uint2 *qs, int lane,
                                      float (&sacc)[2][4]) {
#pragma unroll
  for (int n = 0; n < 2; n++)
    sacc[n][0] = sacc[n][1] = sacc[n][2] = sacc[n][3] = 0.f;
#pragma unroll
  for (int c = 0; c < D / 16; c++) {
    const uint2 qw = qs[c * 32 + lane];
    const uint32_t a[4] = {qw.x, 0u, qw.y, 0u};
#pragma unroll
    for (int n = 0; n < 2; n++) {
      const uint4 &kw = k[n][c / 2];
      const uint32_t bb[2] = {c % 2 ? kw.z : kw.x, c % 2 ? kw.w : kw.y};
      mma16816(sacc[n], a, bb);
    }
  }
}

// one page's scores into the online softmax of head g (m, l in the log2
// domain, l per lane) and its V into the O^T tiles acc (columns = heads 2q,
// 2q+1); tok0 = the page's first token, slots at or past len are empty
template <int D>
__device__ __forceinline__ void
absorb(const float (&sacc)[2][4], uint32_t (&v)[4][D / 16], long tok0, long len,
       float sl2, int q, float &m, float &l, float (&acc)[D / 16][4]) {
  const bool tail = tok0 + PAGE > len; // only the last page has empty slots
  float x[4];
#pragma unroll
  for (int n = 0; n < 2; n++)
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const long t = tok0 + 8 * n + 2 * q + i;
      x[2 * n + i] = tail && t >= len ? -INFINITY : sacc[n][i] * sl2;
    }
  if (tail) // empty slots' V (whatever they hold) must not reach 0 * V
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (tok0 + 2 * q + (k & 1) + 8 * (k >> 1) >= len)
#pragma unroll
        for (int i = 0; i < D / 16; i++)
          v[k][i] = 0u;
  float mx = fmaxf(fmaxf(x[0], x[1]), fmaxf(x[2], x[3]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const float mn = fmaxf(m, mx); // finite: a page holds >= 1 token
  const float corr = exp2f(m - mn);
  m = mn;
  float p[4];
#pragma unroll
  for (int i = 0; i < 4; i++)
    p[i] = exp2f(x[i] - mn);
  l = l * corr + ((p[0] + p[1]) + (p[2] + p[3]));
  // B fragments of P^T: b0 = P[g][2q, 2q+1], b1 = P[g][2q+8, 2q+9]
  uint32_t ph[2], plo[2];
  split_bf16(p[0], p[1], ph[0], plo[0]);
  split_bf16(p[2], p[3], ph[1], plo[1]);
  // O^T columns are heads 2q, 2q+1: their corrections are lanes 8q, 8q+4's
  const float c0 = __shfl_sync(0xffffffffu, corr, 8 * q),
              c1 = __shfl_sync(0xffffffffu, corr, 8 * q + 4);
#pragma unroll
  for (int i = 0; i < D / 16; i++) {
    acc[i][0] *= c0, acc[i][1] *= c1, acc[i][2] *= c0, acc[i][3] *= c1;
    const uint32_t a[4] = {lo2(v[0][i], v[1][i]), hi2(v[0][i], v[1][i]),
                           lo2(v[2][i], v[3][i]), hi2(v[2][i], v[3][i])};
    mma16816(acc[i], a, ph);
    mma16816(acc[i], a, plo);
  }
}

// d of lane g's value pair i (word i of its V tokens; tile i's row g)
template <int D> __device__ __forceinline__ int vdim(int i, int g) {
  return D >= 64 ? 64 * (i / 4) + 8 * g + 2 * (i % 4) : 4 * g + 2 * i;
}

#if MERGE
// The block that finishes a (sequence, kv head)'s ranges last merges them:
// each block arrives once its records are written (fenced); the arrival
// that sees ns - 2 (the counter starts at 0xFFFFFFFF) merges the G heads and
// puts the counter back. The merge is spread so that no thread waits on a
// chain of loads (a thread per output element looping over the ranges
// twice made batch 1 at 32768 tokens slower fused than with pass 2: 45.5
// against 41.5 us on the H200): a warp per head takes the (m, l) pairs, its
// lanes strided over the ranges, and leaves each range's weight
// 2^(m - M) and the sum of w l in shared memory; then each thread sums a
// float4 column of the o parts over its share of the ranges (P threads per
// column, 8 loads in flight), the shares added in shared memory. The block's
// shared scratch `sm` (smn floats, free once the records are written) holds
// it; a group too large for it takes the plain path.
template <int D>
__device__ void merge_last(const float *rec, unsigned *cnt,
                           __nv_bfloat16 *__restrict__ o, long h0, long G,
                           long ns, long nsg, long ml_off, unsigned *flag,
                           float *sm, int smn) {
  // every thread's records visible device-wide before the arrival (each
  // fences its own writes; the barrier then orders them before thread 0's)
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned old = atomicAdd(cnt, 1u);
    *flag = old + 2u == (unsigned)ns;
    if (*flag)
      __threadfence(); // the others' records before the reads below
  }
  __syncthreads();
  if (!*flag)
    return;
  const int nt = blockDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int ncol = (int)G * (D / 4); // float4 columns of the group's outputs
  const int wfl = ((int)(G * ns + G) + 3) & ~3; // weights + sums, 16-aligned
  if (wfl > smn) { // plain path: one output element per thread at a time
    for (int idx = threadIdx.x; idx < G * D; idx += nt) {
      const long hh = idx / D, d = idx % D, r0 = (h0 + hh) * nsg;
      const float *ml = rec + ml_off + 2 * r0;
      float M = -INFINITY;
      for (long x = 0; x < ns; x++)
        M = fmaxf(M, __ldcg(ml + 2 * x)); // finite: range 0 holds a token
      float L = 0.f, O = 0.f;
      for (long x = 0; x < ns; x++) {
        const float w = exp2f(__ldcg(ml + 2 * x) - M);
        L += w * __ldcg(ml + 2 * x + 1);
        O += w * __ldcg(rec + (r0 + x) * D + d);
      }
      o[(h0 + hh) * D + d] = __float2bfloat16_rn(O / L);
    }
  } else {
    float *w = sm, *Ls = sm + G * ns; // [G][ns] weights, [G] sums
    for (long hh = warp; hh < G; hh += nt / 32) {
      const float *ml = rec + ml_off + 2 * (h0 + hh) * nsg;
      float M = -INFINITY;
      for (long x = lane; x < ns; x += 32)
        M = fmaxf(M, __ldcg(ml + 2 * x)); // finite: range 0 holds a token
#pragma unroll
      for (int off = 16; off; off >>= 1)
        M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, off));
      float L = 0.f;
      for (long x = lane; x < ns; x += 32) {
        const float wx = exp2f(__ldcg(ml + 2 * x) - M);
        w[hh * ns + x] = wx;
        L += wx * __ldcg(ml + 2 * x + 1);
      }
#pragma unroll
      for (int off = 16; off; off >>= 1)
        L += __shfl_xor_sync(0xffffffffu, L, off);
      if (lane == 0)
        Ls[hh] = L;
    }
    __syncthreads();
    // P threads per column (at most 8, and their shares must fit)
    int P = nt / ncol;
    P = P < 1 ? 1 : P > 8 ? 8 : P;
    while (P > 1 && wfl + 4 * (nt / P) * (P - 1) > smn)
      P--;
    const int per = nt / P; // columns taken at once
    float4 *shr = (float4 *)(sm + wfl);
    const int ci = threadIdx.x % per, p = threadIdx.x / per;
    for (int cb = 0; cb < ncol; cb += per) { // block-uniform trip count
      const int c = cb + ci;
      const long hh = c / (D / 4), d4 = c % (D / 4);
      float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
      if (c < ncol && p < P) {
        const float4 *src =
            (const float4 *)(rec + (h0 + hh) * nsg * D) + d4; // record x
        const float *wh = w + hh * ns;
#pragma unroll 8
        for (long x = p; x < ns; x += P) {
          const float4 v = __ldcg(src + x * (D / 4));
          const float wx = wh[x];
          acc.x += wx * v.x, acc.y += wx * v.y;
          acc.z += wx * v.z, acc.w += wx * v.w;
        }
      }
      if (P > 1) {
        if (p > 0 && p < P)
          shr[(p - 1) * per + ci] = acc;
        __syncthreads();
        if (p == 0)
          for (int j = 1; j < P; j++) {
            const float4 v = shr[(j - 1) * per + ci];
            acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
          }
        __syncthreads(); // shares read before the next columns' writes
      }
      if (p == 0 && c < ncol) {
        const float inv = 1.f / Ls[hh];
        __nv_bfloat16 *oo = o + (h0 + hh) * D + 4 * d4;
        oo[0] = __float2bfloat16_rn(acc.x * inv);
        oo[1] = __float2bfloat16_rn(acc.y * inv);
        oo[2] = __float2bfloat16_rn(acc.z * inv);
        oo[3] = __float2bfloat16_rn(acc.w * inv);
      }
    }
  }
  __syncthreads(); // every read of the counter's group done
  if (threadIdx.x == 0)
    atomicExch(cnt, 0xFFFFFFFFu); // ready for the next launch
}
#endif

template <int D>
__device__ void split_pass(
    const __nv_bfloat16 *__restrict__ qg, const __nv_bfloat16 *__restrict__ kc,
    const __nv_bfloat16 *__restrict__ vc, const int *__restrict__ page_table,
    const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o,
    long heads_q, long heads_kv, long max_pages, float *__restrict__ scratch,
    float *smem, uint2 *qs, unsigned *flag) {
  constexpr int NC = D / 16; // k chunks of S = Q K^T, m tiles of O^T
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2,
            q = lane & 3;
  const long gk = blockIdx.x, s = blockIdx.y, b = blockIdx.z,
             G = heads_q / heads_kv;
  const long nsg = gridDim.y,
             h0 = b * heads_q + gk * G; // the group's first q head
  const long SP = fd_sp(gridDim.z, heads_kv, max_pages);
  float *rec = scratch + FD_CNT; // the records (after MERGE's counters)
  const long p0 = (long)s * SP;
  // loads that need no sequence length first, so their latencies overlap:
  // the warp's first 32 page ids (inside the page table's row) and Q
  const long pend = p0 + SP < max_pages ? p0 + SP : max_pages;
  const int *pt = page_table + b * max_pages + p0 + warp;
  int pids = p0 + warp + (long)lane * WARPS < pend
                 ? __ldg(pt + (long)lane * WARPS)
                 : 0;
  // Q rows g < G as A fragments (rows g + 8 are zero), one copy per block:
  // qs[c][lane] = (a0, a2) of chunk c
  if (warp == 0)
#pragma unroll
    for (int j = 0; j < D / 32; j++) {
      uint4 u = make_uint4(0, 0, 0, 0);
      if (g < G)
        u = __ldg((const uint4 *)(qg + (h0 + g) * D) + q + 4 * j);
      qs[(2 * j) * 32 + lane] = make_uint2(u.x, u.y);
      qs[(2 * j + 1) * 32 + lane] = make_uint2(u.z, u.w);
    }
  const long len = seq_lens[b], np = fd_pages(seq_lens, b, max_pages);
  // no token: no softmax, the output is 0 (here when there is no pass 2)
  if (fd_no_pass2() && np == 0 && s == 0)
    for (int idx = threadIdx.x; idx < G * D; idx += 32 * WARPS)
      o[(h0 + idx / D) * D + idx % D] = __float2bfloat16_rn(0.f);
  if (p0 >= np)
    return; // the merge reads only the ranges that hold tokens (block-uniform)
  __syncthreads(); // qs
  const long p1 = p0 + SP < np ? p0 + SP : np;
  const long ns = (np + SP - 1) / SP;
  const float sl2 = LOG2E / sqrtf((float)D); // scores in the log2 domain
  float acc[NC][4], m = -INFINITY, l = 0.f;  // O^T tiles; m, l of head g
#pragma unroll
  for (int i = 0; i < NC; i++)
    acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;

  const long cnt = p1 - p0 > warp ? (p1 - p0 - warp + WARPS - 1) / WARPS : 0;
  const int hkd = (int)(heads_kv * D); // elements per token slot (15 * hkd
                                       // fits an int for any real model)
  // first token and K/V row (token slot 0, kv head gk) of the warp's page k
#define TOK0(k) ((p0 + warp + (k)*WARPS) * PAGE)
#define ROW0(pid) (((long)(pid)*PAGE * heads_kv + gk) * D)
#if PIPE == 1
  // rotating: page k+1's K is requested as soon as S(k) has used K(k), its
  // V once O absorbed V(k), so loads are in flight during the math
  uint4 kb[2][D / 32];
  uint32_t vb[4][D / 16];
  if (cnt > 0) {
    const long r = ROW0(__shfl_sync(0xffffffffu, pids, 0));
    load_k<D>(kb, kc + r, hkd, g, q);
    load_v<D>(vb, vc + r, hkd, g, q);
  }
  for (long k = 0; k < cnt; k++) { // warp-uniform
    float sacc[2][4];
    score<D>(kb, qs, lane, sacc);
    const bool more = k + 1 < cnt;
    long rn = 0;
    if (more) {
      if ((k + 1) % 32 == 0) // the next 32 page ids, one per lane
        pids = k + 1 + lane < cnt ? __ldg(pt + (k + 1 + lane) * WARPS) : 0;
      rn = ROW0(__shfl_sync(0xffffffffu, pids, (int)((k + 1) & 31)));
      load_k<D>(kb, kc + rn, hkd, g, q);
    }
    absorb<D>(sacc, vb, TOK0(k), len, sl2, q, m, l, acc);
    if (more)
      load_v<D>(vb, vc + rn, hkd, g, q);
  }
#else
  // PIPE 0 / 2: one / two pages loaded, then used
  constexpr int PIF = PIPE > 1 ? PIPE : 1;
  for (long k0 = 0; k0 < cnt; k0 += PIF) { // warp-uniform
    if (k0 % 32 == 0 && k0 > 0)            // the next 32 page ids, one per lane
      pids = k0 + lane < cnt ? __ldg(pt + (k0 + lane) * WARPS) : 0;
    uint4 kb[PIF][2][D / 32];
    uint32_t vb[PIF][4][D / 16];
#pragma unroll
    for (int u = 0; u < PIF; u++) {
      const long r = ROW0(__shfl_sync(0xffffffffu, pids, (int)((k0 + u) & 31)));
      if (k0 + u < cnt) {
        load_k<D>(kb[u], kc + r, hkd, g, q);
        load_v<D>(vb[u], vc + r, hkd, g, q);
      }
    }
#pragma unroll
    for (int u = 0; u < PIF; u++) {
      if (k0 + u >= cnt)
        break;
      float sacc[2][4];
      score<D>(kb[u], qs, lane, sacc);
      absorb<D>(sacc, vb[u], TOK0(k0 + u), len, sl2, q, m, l, acc);
    }
  }
#endif
#undef TOK0
#undef ROW0
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);

  // the warps' states -> shared memory: so[warp][h][d], sm/sl[warp][h]
  float *so = smem, *sm = so + WARPS * 8 * MAXD, *sl = sm + WARPS * 8;
  if (q == 0)
    sm[warp * 8 + g] = m, sl[warp * 8 + g] = l; // a warp without pages: -inf, 0
#pragma unroll
  for (int i = 0; i < NC; i++) {
    const int d = vdim<D>(i, g);
    float *r0 = so + (warp * 8 + 2 * q) * MAXD + d, *r1 = r0 + MAXD;
    r0[0] = acc[i][0], r0[1] = acc[i][2], r1[0] = acc[i][1], r1[1] = acc[i][3];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += 32 * WARPS) {
    const int hh = idx / D, d = idx % D;
    float M = -INFINITY, L = 0.f, O = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; w++)
      M = fmaxf(M, sm[w * 8 + hh]); // finite: warp 0 has a page
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
      const float wt = exp2f(sm[w * 8 + hh] - M);
      L += sl[w * 8 + hh] * wt;
      O += so[(w * 8 + hh) * MAXD + d] * wt;
    }
    if (ns == 1) { // one range: the answer itself
      o[(h0 + hh) * D + d] = __float2bfloat16_rn(O / L);
      continue;
    }
    // records: o part [b, h, split][D], then (m, l) pairs [b, h, split]
    const long r = (h0 + hh) * nsg + s;
    rec[r * D + d] = O;
    if (d == 0) {
      float *ml = rec + gridDim.z * heads_q * nsg * D + 2 * r;
      ml[0] = M, ml[1] = L;
    }
  }
#if HEAD_WAIT && !MERGE
  // this range's records are in: count them for each q head of the group
  // (the release half of pass 2's poll; sequences of one range have no pass 2)
  const long Z = fd_merge_z(nsg, D); // a word per merge block
  if (ns > 1 && gridDim.z * heads_q * Z <= FD_CNT) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x < G * Z)
      atomicAdd((unsigned *)scratch + h0 * Z + threadIdx.x, 1u);
  }
#endif
#if MERGE
  if (ns > 1)
    merge_last<D>(rec, (unsigned *)scratch + b * heads_kv + gk, o, h0, G, ns,
                  nsg, gridDim.z * heads_q * nsg * D, flag, smem,
                  WARPS * 8 * (MAXD + 2));
#endif
}

__device__ void fallback(const __nv_bfloat16 *q, const __nv_bfloat16 *kc,
                         const __nv_bfloat16 *vc, const int *pt, long len,
                         __nv_bfloat16 *oh, long h, long g, long heads_kv,
                         long D);

__device__ __forceinline__ void ks_mlx_fd_split(const __nv_bfloat16 *__restrict__ q,
             const __nv_bfloat16 *__restrict__ k_cache,
             const __nv_bfloat16 *__restrict__ v_cache,
             const int *__restrict__ page_table,
             const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o,
             long batch, long heads_q, long heads_kv, long head_dim,
             long num_pages, long max_pages, float *scratch) {
  (void)batch, (void)num_pages;
#if PDL
  pdl_trigger(); // pass 2 may be placed as this grid's blocks leave
#endif
  __shared__ __align__(16) float red[WARPS * 8 * (MAXD + 2)];
  __shared__ __align__(16) uint2 qs[MAXD / 16 * 32];
  __shared__ unsigned mflag; // MERGE: this block merges
  if (!fd_supported(heads_q, heads_kv, head_dim)) {
    // no pass 2: range 0's block answers its group the slow exact way
    const long b = blockIdx.z, gk = blockIdx.x, G = heads_q / heads_kv;
    if (fd_no_pass2() && blockIdx.y == 0) {
      long len = seq_lens[b];
      len = len < max_pages * PAGE ? len : max_pages * PAGE;
      for (long hh = 0; hh < G; hh++) {
        const long h = b * heads_q + gk * G + hh;
        fallback(q, k_cache, v_cache, page_table + b * max_pages, len,
                 o + h * head_dim, h, gk, heads_kv, head_dim);
      }
    }
    return; // else fd_merge's exact path answers these
  }
#if MERGE
  if (batch * heads_kv > FD_CNT)
    __trap(); // more (sequence, kv head) pairs than counters
#endif
  switch (head_dim) {
  case 128:
    split_pass<128>(q, k_cache, v_cache, page_table, seq_lens, o, heads_q,
                    heads_kv, max_pages, scratch, red, qs, &mflag);
    break;
  case 64:
    split_pass<64>(q, k_cache, v_cache, page_table, seq_lens, o, heads_q,
                   heads_kv, max_pages, scratch, red, qs, &mflag);
    break;
  default:
    split_pass<32>(q, k_cache, v_cache, page_table, seq_lens, o, heads_q,
                   heads_kv, max_pages, scratch, red, qs, &mflag);
    break;
  }
}

// the slow exact path for shapes pass 1 has no instance for: warp 0, a
// token at a time (head_dim <= 256)
__device__ void fallback(const __nv_bfloat16 *q, const __nv_bfloat16 *kc,
                         const __nv_bfloat16 *vc, const int *pt, long len,
                         __nv_bfloat16 *oh, long h, long g, long heads_kv,
                         long D) {
  const int lane = threadIdx.x;
  if (lane >= 32)
    return;
  if (D > 256)
    __trap();
  float qv[8], acc[8], m = -INFINITY, l = 0.f;
  for (int i = 0; i < 8; i++) {
    const long d = lane + 32 * i;
    qv[i] = d < D ? __bfloat162float(q[h * D + d]) : 0.f;
    acc[i] = 0.f;
  }
  const float sc = 1.f / sqrtf((float)D);
  for (long t = 0; t < len; t++) {
    const long row = ((long)pt[t / PAGE] * PAGE + t % PAGE) * heads_kv + g;
    float sv = 0.f;
    for (int i = 0; i < 8; i++) {
      const long d = lane + 32 * i;
      if (d < D)
        sv += qv[i] * __bfloat162float(kc[row * D + d]);
    }
    for (int off = 16; off > 0; off >>= 1)
      sv += __shfl_xor_sync(0xffffffffu, sv, off);
    sv *= sc;
    const float mn = fmaxf(m, sv), corr = expf(m - mn), p = expf(sv - mn);
    l = l * corr + p;
    m = mn;
    for (int i = 0; i < 8; i++) {
      const long d = lane + 32 * i;
      if (d < D)
        acc[i] = acc[i] * corr + p * __bfloat162float(vc[row * D + d]);
    }
  }
  for (int i = 0; i < 8; i++) {
    const long d = lane + 32 * i;
    if (d < D)
      oh[d] = __float2bfloat16_rn(len > 0 ? acc[i] / l : 0.f);
  }
}

#define MT 256 /* fd_merge's threads */
__device__ __forceinline__ void ks_mlx_fd_merge(const __nv_bfloat16 *__restrict__ q,
             const __nv_bfloat16 *__restrict__ k_cache,
             const __nv_bfloat16 *__restrict__ v_cache,
             const int *__restrict__ page_table,
             const int *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ o,
             long batch, long heads_q, long heads_kv, long head_dim,
             long num_pages, long max_pages, float *scratch) {
  (void)num_pages;
  __shared__ __align__(16) float4 po[MT];
  __shared__ float pm[MT], pl[MT];
  const long h = blockIdx.x, b = blockIdx.y, D = head_dim;
  __nv_bfloat16 *oh = o + (b * heads_q + h) * D;
  if (!fd_supported(heads_q, heads_kv, head_dim)) {
    if (blockIdx.z > 0)
      return; // block z = 0 answers the whole row
#if PDL
    pdl_wait(); // nothing of pass 1 is read, but keep the passes in order
#endif
    long len = seq_lens[b];
    len = len < max_pages * PAGE ? len : max_pages * PAGE;
    const long G = heads_q / heads_kv; // the task: heads_kv divides heads_q
    fallback(q, k_cache, v_cache, page_table + b * max_pages, len, oh,
             b * heads_q + h, G > 0 ? h / G : 0, heads_kv, D);
    return;
  }
  // inputs only up to the wait (seq_lens is the judge's, not pass 1's), so
  // their loads are off the path that starts when pass 1 ends
  const long rp = fd_sp(batch, heads_kv, max_pages); // pages per range
  const long nsg = (max_pages + rp - 1) / rp;         // pass 1's grid y
  const long ns = (fd_pages(seq_lens, b, max_pages) + rp - 1) / rp;
  if (fd_merge_z(nsg, D) != (long)gridDim.z)
    __trap(); // the launch line and this kernel disagree
  if (ns == 1)
    return;      // pass 1 wrote o
  if (ns == 0) { // no token: no softmax, the output is 0
    if (blockIdx.z == 0)
      for (long d = threadIdx.x; d < D; d += MT)
        oh[d] = __float2bfloat16_rn(0.f);
    return;
  }
#if HEAD_WAIT
  const long Z = gridDim.z; // fd_merge_z: pass 1 counts with the same Z
  if (batch * heads_q * Z <= FD_CNT) {
    // this block's word: its head's ns ranges counted (from 0xFFFFFFFF:
    // ns - 1), then put back for the next launch (no other block reads it)
    unsigned *cnt = (unsigned *)scratch + (b * heads_q + h) * Z + blockIdx.z;
    if (threadIdx.x == 0) {
      while (atomicAdd(cnt, 0u) != (unsigned)(ns - 1))
        __nanosleep(64);
      __threadfence(); // the ranges' records before the reads below
      atomicExch(cnt, 0xFFFFFFFFu);
    }
    __syncthreads();
  } else {
#if PDL
    pdl_wait();
#endif
  }
#elif PDL
  pdl_wait(); // pass 1 done and its records visible
#endif
  const long r0 = (b * heads_q + h) * nsg;
  const float *rec = scratch + FD_CNT; // after MERGE's counters
  const float4 *ro = (const float4 *)(rec + r0 * D);
  const float *ml = rec + batch * heads_q * nsg * D + 2 * r0;
  // gridDim.z = 1 (a block per row) or head_dim / 32 (32 columns each, when
  // a row has 64 ranges or more: one round of loads instead of several);
  // one pass, online: thread = (split lane sp, float4 column c4) takes
  // splits sp, sp + SP, ..., 8 records in flight, its own (M, L, O)
  const int D4 = (int)(D / 4), C4 = D4 / (int)gridDim.z, SP = MT / C4,
            c4 = C4 * blockIdx.z + threadIdx.x % C4, sp = threadIdx.x / C4;
  if (C4 * (int)gridDim.z != D4 || MT % C4 != 0)
    __trap(); // the launch line and this kernel disagree
  float M = -INFINITY, L = 0.f;
  float4 O = make_float4(0.f, 0.f, 0.f, 0.f);
  for (long s0 = sp; s0 < ns; s0 += 8L * SP) { // s0 < ns: record s0 exists
    float mv[8], lv[8];
    float4 v[8];
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const long s = s0 + (long)u * SP;
      const bool ok = s < ns;
      mv[u] = ok ? __ldcg(ml + 2 * s) : -INFINITY; // L2: another SM's writes
      lv[u] = ok ? __ldcg(ml + 2 * s + 1) : 0.f;
      v[u] = ok ? __ldcg(ro + s * D4 + c4) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float mx = M;
#pragma unroll
    for (int u = 0; u < 8; u++)
      mx = fmaxf(mx, mv[u]); // finite
    const float c = exp2f(M - mx);
    L *= c, O.x *= c, O.y *= c, O.z *= c, O.w *= c;
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const float w = exp2f(mv[u] - mx); // a missing record: 0
      L += w * lv[u];
      O.x += w * v[u].x, O.y += w * v[u].y, O.z += w * v[u].z,
          O.w += w * v[u].w;
    }
    M = mx;
  }
  pm[threadIdx.x] = M, pl[threadIdx.x] = L, po[threadIdx.x] = O;
  __syncthreads();
  if (threadIdx.x < C4) {
    float Mx = -INFINITY, Lx = 0.f;
    float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int k = 0; k < SP; k++)
      Mx = fmaxf(Mx, pm[k * C4 + threadIdx.x]); // finite: lane 0 has split 0
    for (int k = 0; k < SP; k++) {
      const int i = k * C4 + threadIdx.x;
      const float w = exp2f(pm[i] - Mx); // a lane without splits: 0
      Lx += w * pl[i];
      t.x += w * po[i].x, t.y += w * po[i].y, t.z += w * po[i].z,
          t.w += w * po[i].w;
    }
    const float il = 1.f / Lx;
    __nv_bfloat162 lo = __floats2bfloat162_rn(t.x * il, t.y * il),
                   hi = __floats2bfloat162_rn(t.z * il, t.w * il);
    *((__nv_bfloat162 *)oh + 2 * c4) = lo;
    *((__nv_bfloat162 *)oh + 2 * c4 + 1) = hi;
  }
}

// ksearch: body
ks_mlx_fd_split(KS_ARGS);
