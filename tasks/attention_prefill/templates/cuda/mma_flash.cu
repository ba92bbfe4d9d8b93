// ksearch: backend=cuda entry=attention_prefill
// ksearch: family=mma_flash
// ksearch: concepts=online_softmax,tensor_core_mma,ldmatrix_fragments,double_buffering_cp_async,shared_memory_tiling,bank_conflict_padding
// ksearch: param BQ in 128,64
// ksearch: param BKV in 64,32
// ksearch: param WM in 2,1
// ksearch: param LAZY in 0,1
// ksearch: param KU in 1,4,2,8
// ksearch: param TREE in 1,0
// ksearch: launch grid=(cdiv(seqlen, BQ), heads_q, batch) block=(2 * BQ / WM, 1, 1) smem=((BQ + 4 * BKV) * (head_dim + 8) * 2)
//
// CUDA template for tasks/attention_prefill, family mma_flash (DESIGN.md:
// Templates): FlashAttention-2 on mma.sync m16n8k16 bf16 (sm_80+). A block
// owns BQ queries of one (batch, q head), one warp per 16 * WM of them. WM 1
// keeps Q's fragments in registers, but every K and V fragment read from
// shared memory then feeds one mma: 256 bytes per 4096 flops, which is about
// all the shared-memory bandwidth an SM has at mma.sync's rate; WM 2 (two
// row tiles per warp, as FlashAttention-2 does at 128 x 64) halves that and
// re-reads Q's fragments per tile instead (O 128 and S 64 registers a lane
// at head_dim 128, no room for Q's 64). K/V tiles
// of BKV keys stream through shared memory with cp.async, two stages (the
// next tile loads while this one is computed). S = Q K^T leaves the tensor
// cores as float accumulators in exactly the layout of the A operand of
// P V, so P never touches shared memory (converted to bf16 in registers).
// Online softmax per row in float32 with exp2 (scale folded into log2 e);
// a row's max is reduced over the 4 lanes that share it. Causal: a block
// reads key tiles up to its last query; only tiles crossing the diagonal or
// the end of the sequence are masked; tile 0 is always first, so a row's
// max is finite before any fully masked tile (no exp(-inf - -inf)). GQA: q
// head h reads kv head h / (heads_q / heads_kv). head_dim 64 or 128
// (compile-time instances; others are refused by writing nothing and
// trapping). Blocks run last query tile first (the longest) for balance.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef BQ
#define BQ 128
#endif
#ifndef BKV
#define BKV 64
#endif
#ifndef WM
#define WM 2
#endif
#ifndef LAZY
#define LAZY 0
#endif
#ifndef TREE
#define TREE 1 /* row max and sum as trees (0: chains) */
#endif
#ifndef KU
#define KU 1 /* WM 2: unroll of the Q K^T k-loop */
#endif
#define NW (BQ / (16 * WM))
#define THREADS (32 * NW)

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp16(void *dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
               "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldm_x4(uint32_t *r, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldm_x4_t(uint32_t *r, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma16816(float *d, const uint32_t *a, const uint32_t *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// 2^x on the special-function unit, subnormals flushed (exp2f adds a range
// fix of three instructions around it; a probability under 2^-126 adds
// nothing a bf16 output can show)
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *(uint32_t *)&h;
}

// rows [r0, r0+nrows) of a [seqlen, D] head into shared rows of stride D+8
template <int D>
__device__ __forceinline__ void load_rows(__nv_bfloat16 *dst, const __nv_bfloat16 *src,
                                          long r0, int nrows, long seqlen) {
  constexpr int CPR = D / 8; // 16-byte chunks per row
  for (int c = threadIdx.x; c < nrows * CPR; c += THREADS) {
    int r = c / CPR, cc = (c % CPR) * 8;
    long gr = r0 + r;
    bool in = gr < seqlen;
    cp16(dst + r * (D + 8) + cc, in ? (const void *)(src + gr * D + cc) : (const void *)src,
         in ? 16 : 0);
  }
}

template <int D>
__device__ __forceinline__ void flash(const __nv_bfloat16 *__restrict__ q,
                                      const __nv_bfloat16 *__restrict__ k,
                                      const __nv_bfloat16 *__restrict__ v,
                                      __nv_bfloat16 *__restrict__ o, long heads_q,
                                      long heads_kv, long seqlen, unsigned char *smem) {
  constexpr int SD = D + 8;
  constexpr int KF = D / 16;  // k-steps of Q K^T
  constexpr int NF = BKV / 8; // n-fragments of S
  constexpr int OF = D / 8;   // n-fragments of O
  constexpr int QR = WM == 1; // Q's fragments held in registers (WM 2: re-read per tile)
  constexpr int KUN = KU;     // a pragma does not expand macros
  __nv_bfloat16 *sQ = (__nv_bfloat16 *)smem;
  __nv_bfloat16 *sK = sQ + BQ * SD; // [2][BKV][SD]
  __nv_bfloat16 *sV = sK + 2 * BKV * SD;

  const long nqt = (seqlen + BQ - 1) / BQ;
  const long qt = nqt - 1 - blockIdx.x; // longest first
  const long h = blockIdx.y, bidx = blockIdx.z;
  const long g = h / (heads_q / heads_kv);
  const long q0 = qt * BQ;
  const __nv_bfloat16 *qh = q + (bidx * heads_q + h) * seqlen * D;
  const __nv_bfloat16 *kh = k + (bidx * heads_kv + g) * seqlen * D;
  const __nv_bfloat16 *vh = v + (bidx * heads_kv + g) * seqlen * D;
  __nv_bfloat16 *oh = o + (bidx * heads_q + h) * seqlen * D;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gr = lane >> 2, qd = lane & 3;
  const long kv_end = q0 + BQ < seqlen ? q0 + BQ : seqlen;
  const int ntiles = (int)((kv_end + BKV - 1) / BKV);
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);
  const int wrow = warp * 16 * WM; // the warp's first row in the block

  load_rows<D>(sQ, qh, q0, BQ, seqlen);
  load_rows<D>(sK, kh, 0, BKV, seqlen);
  load_rows<D>(sV, vh, 0, BKV, seqlen);
  cp_commit();

  uint32_t qf[QR ? KF : 1][4];
  float acc[WM][OF][4];
#pragma unroll
  for (int m = 0; m < WM; m++)
#pragma unroll
    for (int j = 0; j < OF; j++)
#pragma unroll
      for (int e = 0; e < 4; e++)
        acc[m][j][e] = 0.f;
  float mrow[WM][2], lrow[WM][2];
#pragma unroll
  for (int m = 0; m < WM; m++)
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
      mrow[m][hh] = -INFINITY;
      lrow[m][hh] = 0.f;
    }

  for (int t = 0; t < ntiles; t++) {
    const int st = t & 1;
    if (t + 1 < ntiles) {
      load_rows<D>(sK + (st ^ 1) * BKV * SD, kh, (long)(t + 1) * BKV, BKV, seqlen);
      load_rows<D>(sV + (st ^ 1) * BKV * SD, vh, (long)(t + 1) * BKV, BKV, seqlen);
    }
    cp_commit();
    cp_wait<1>();
    __syncthreads();
    if (QR && t == 0) {
#pragma unroll
      for (int kk = 0; kk < (QR ? KF : 0); kk++)
        ldm_x4(qf[kk], sQ + (wrow + (lane & 15)) * SD + kk * 16 + (lane >> 4) * 8);
    }
    const __nv_bfloat16 *tK = sK + st * BKV * SD, *tV = sV + st * BKV * SD;
    const int j0 = t * BKV;
    // a warp whose rows all precede this tile has nothing to do in it
    const bool live = j0 <= q0 + wrow + 16 * WM - 1;
    if (live) {
      float s[WM][NF][4];
#pragma unroll
      for (int m = 0; m < WM; m++)
#pragma unroll
        for (int j = 0; j < NF; j++)
#pragma unroll
          for (int e = 0; e < 4; e++)
            s[m][j][e] = 0.f;
      // WM 2 unrolls this loop KU times: fully unrolled, ptxas hoists the
      // fragment loads past 255 registers and spills (WM 1 needs it
      // unrolled: qf[kk]). Which KU is fastest depends on the build: on an
      // H100, nvcc's (one build for all shapes) KU 4, MLX's NVRTC (axes as
      // constants) KU 1, by 1.46x at S 1024
#pragma unroll(QR ? KF : KUN)
      for (int kk = 0; kk < KF; kk++) {
        // WM 2: each K fragment read from shared memory feeds two row tiles
        uint32_t qa[WM][4];
        if (QR) {
#pragma unroll
          for (int e = 0; e < 4; e++)
            qa[0][e] = qf[QR ? kk : 0][e];
        } else {
#pragma unroll
          for (int m = 0; m < WM; m++)
            ldm_x4(qa[m], sQ + (wrow + m * 16 + (lane & 15)) * SD + kk * 16 + (lane >> 4) * 8);
        }
#pragma unroll
        for (int j = 0; j < NF; j += 2) {
          // matrices (keys j0-7, d0-7) (keys j0-7, d8-15) (j8-15, d0-7) (j8-15, d8-15)
          uint32_t r4[4];
          int key = j * 8 + (lane & 7) + (lane >> 4) * 8;
          ldm_x4(r4, tK + key * SD + kk * 16 + ((lane >> 3) & 1) * 8);
          uint32_t b0[2] = {r4[0], r4[1]}, b1[2] = {r4[2], r4[3]};
#pragma unroll
          for (int m = 0; m < WM; m++) {
            mma16816(s[m][j], qa[m], b0);
            mma16816(s[m][j + 1], qa[m], b1);
          }
        }
      }
#pragma unroll
      for (int m = 0; m < WM; m++) {
        const int r0 = wrow + m * 16; // this row tile's first row in the block
        const bool need_mask = j0 + BKV - 1 > q0 + r0 || j0 + BKV > seqlen;
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
          const int qi = (int)q0 + r0 + gr + hh * 8;
          if (need_mask) {
#pragma unroll
            for (int j = 0; j < NF; j++)
#pragma unroll
              for (int e = 0; e < 2; e++) {
                const int key = j0 + j * 8 + qd * 2 + e;
                if (key > qi || key >= (int)seqlen)
                  s[m][j][hh * 2 + e] = -INFINITY;
              }
          }
          // the row's max and (below) sum as trees (TREE 1): a chain of
          // 2 * NF dependent instructions is what a warp waits on here
          // (H100, ncu: fixed-latency dependencies, a third of the stalls)
          float mx;
          if (TREE) {
            float t[NF];
#pragma unroll
            for (int j = 0; j < NF; j++)
              t[j] = fmaxf(s[m][j][hh * 2], s[m][j][hh * 2 + 1]);
#pragma unroll
            for (int w = NF / 2; w >= 1; w /= 2)
#pragma unroll
              for (int j = 0; j < w; j++)
                t[j] = fmaxf(t[j], t[j + w]);
            mx = fmaxf(mrow[m][hh], t[0]);
          } else {
            mx = mrow[m][hh];
#pragma unroll
            for (int j = 0; j < NF; j++)
              mx = fmaxf(mx, fmaxf(s[m][j][hh * 2], s[m][j][hh * 2 + 1]));
          }
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          // mx is finite: key 0 (tile 0, seen first) is visible to every row
          const float corr = ex2((mrow[m][hh] - mx) * sl2);
          mrow[m][hh] = mx;
          const float mxs = mx * sl2;
          float sum = 0.f;
#pragma unroll
          for (int j = 0; j < NF; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
              s[m][j][hh * 2 + e] = ex2(fmaf(s[m][j][hh * 2 + e], sl2, -mxs));
          if (TREE) {
            float t[NF];
#pragma unroll
            for (int j = 0; j < NF; j++)
              t[j] = s[m][j][hh * 2] + s[m][j][hh * 2 + 1];
#pragma unroll
            for (int w = NF / 2; w >= 1; w /= 2)
#pragma unroll
              for (int j = 0; j < w; j++)
                t[j] += t[j + w];
            sum = t[0];
          } else {
#pragma unroll
            for (int j = 0; j < NF; j++)
              sum += s[m][j][hh * 2] + s[m][j][hh * 2 + 1];
          }
          lrow[m][hh] = lrow[m][hh] * corr + sum; // lane-partial; reduced at the end
          // LAZY 1: once the running maxima settle (most tiles past the first
          // few), a warp skips the 2 * OF multiplies when none of its rows moved
          if (!LAZY || __any_sync(0xffffffffu, corr != 1.f)) {
#pragma unroll
            for (int j = 0; j < OF; j++) {
              acc[m][j][hh * 2] *= corr;
              acc[m][j][hh * 2 + 1] *= corr;
            }
          }
        }
      }
      // O += P V: P's accumulators are the A fragments of 16-key steps
#pragma unroll
      for (int kk = 0; kk < BKV / 16; kk++) {
        uint32_t pa[WM][4];
#pragma unroll
        for (int m = 0; m < WM; m++) {
          pa[m][0] = pack_bf16(s[m][2 * kk][0], s[m][2 * kk][1]);
          pa[m][1] = pack_bf16(s[m][2 * kk][2], s[m][2 * kk][3]);
          pa[m][2] = pack_bf16(s[m][2 * kk + 1][0], s[m][2 * kk + 1][1]);
          pa[m][3] = pack_bf16(s[m][2 * kk + 1][2], s[m][2 * kk + 1][3]);
        }
#pragma unroll
        for (int j = 0; j < OF; j += 2) {
          // matrices (keys 0-7, d0) (keys 8-15, d0) (keys 0-7, d8) (keys 8-15, d8), transposed
          uint32_t r4[4];
          int key = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
          ldm_x4_t(r4, tV + key * SD + j * 8 + (lane >> 4) * 8);
          uint32_t b0[2] = {r4[0], r4[1]}, b1[2] = {r4[2], r4[3]};
#pragma unroll
          for (int m = 0; m < WM; m++) {
            mma16816(acc[m][j], pa[m], b0);
            mma16816(acc[m][j + 1], pa[m], b1);
          }
        }
      }
    }
    __syncthreads(); // stage st is refilled by the next iteration
  }
#pragma unroll
  for (int m = 0; m < WM; m++)
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
      float l = lrow[m][hh];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = 1.f / l;
      const long qi = q0 + wrow + m * 16 + gr + hh * 8;
      if (qi >= seqlen)
        continue;
#pragma unroll
      for (int j = 0; j < OF; j++)
        *(__nv_bfloat162 *)(oh + qi * D + j * 8 + qd * 2) =
            __floats2bfloat162_rn(acc[m][j][hh * 2] * inv, acc[m][j][hh * 2 + 1] * inv);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_prefill(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                      const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
                      long batch, long heads_q, long heads_kv, long seqlen, long head_dim) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  (void)batch;
  if (head_dim == 128)
    flash<128>(q, k, v, o, heads_q, heads_kv, seqlen, smem_raw);
  else if (head_dim == 64)
    flash<64>(q, k, v, o, heads_q, heads_kv, seqlen, smem_raw);
  else
    __trap(); // no instance for this head_dim: a launch error, never a wrong answer
}
