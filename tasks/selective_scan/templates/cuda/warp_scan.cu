// ksearch: backend=cuda entry=selective_scan
// ksearch: family=warp_scan
// ksearch: concepts=chunked_scan,shared_memory_tiling,bank_conflict_padding,vector_loads_128,launch_bounds_occupancy
// ksearch: param ITEMS in 16,8
// ksearch: param WARPS in 4,8,2
// ksearch: param NU in 1,4
// ksearch: launch grid=(cdiv(dim, WARPS), batch) block=(32 * WARPS, 1) smem=(2 * 16 * 32 * ITEMS * 4)
//
// CUDA template for tasks/selective_scan, family warp_scan (DESIGN.md:
// Task, templates): the time axis is spread over the lanes of a warp, so
// the parallelism is batch*dim*32 lanes however short the batch. One warp
// owns one channel; a block holds WARPS channels of one batch row. The warp
// walks the sequence in windows of 32*ITEMS steps, lane l holding the
// ITEMS consecutive steps [l*ITEMS, (l+1)*ITEMS) of the window. For each
// state n the step h -> e*h + x (e = exp(dt*A[n]), x = dt*u*B[n,t]) is an
// affine map, and affine maps compose associatively, so per state:
//   1. each lane composes its ITEMS maps into one (E, X) pair;
//   2. a Kogge-Stone scan over the 32 lanes (__shfl_up_sync) turns those
//      into each lane's incoming map; applied to the window's carried
//      state it gives the lane's true start state;
//   3. each lane replays its ITEMS steps from there (the e and x kept in
//      registers, so one exp per state and step), adding h*C[n,t] into
//      its outputs; lane 31's end state is the next window's carry.
// The carried states and A (lane-uniform, 16 per warp) live in shared
// memory, so the state loop need not be unrolled whole to index registers
// (a whole unroll took ~200 registers, 8 warps per SM); ptxas 13 keeps
// NU 1 and 4 at 72-136 registers without spills (NU 2 spilled at ITEMS 16).
// B and C go global -> shared by cp.async, every 16-byte piece of a
// thread's share in flight at once (a register round trip per piece, as in
// bc_shared, leaves one load latency per piece exposed when few warps run).
//   ITEMS steps per lane per window (16: 64 KiB of shared memory per block,
//   fewer scan steps per state-step; 8: 32 KiB, more blocks per SM);
//   WARPS channels (warps) per block; NU states unrolled together (ILP
//   against registers)
#include <math.h>
#include <stdint.h>
#define DSTATE 16
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef WARPS
#define WARPS 4
#endif
#define WIN (32 * ITEMS) // steps per window
#define Q (ITEMS / 4)    // float4 per lane per state row
#define SWZ (8 / Q)
#ifndef NU
#define NU 1
#endif
// at ITEMS 16 with 8 warps ptxas 13 held four unrolled states to 128
// registers and spilled 20 bytes, so that corner unrolls none
#if ITEMS == 16 && WARPS == 8
#define NUE 1
#else
#define NUE NU
#endif
#define PRAGMA(x) _Pragma(#x)
#define UNROLL_(n) PRAGMA(unroll n)
#define UNROLL(n) UNROLL_(n)
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
// 16 bytes global -> shared without a register round trip, so a thread's
// whole share of the B/C staging is in flight at once; src_bytes 0 writes
// zeros (steps past seqlen)
__device__ __forceinline__ void cp16(void *dst, const void *src,
                                     int src_bytes) {
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
      "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ITEMS steps of one row from step t: float4 when the row is 16-byte
// aligned (vec) and all ITEMS steps exist, else one by one, 0 past seqlen
__device__ __forceinline__ void load_items(const float *__restrict__ p, long t,
                                           long seqlen, bool vec, float *v) {
  if (vec && t + ITEMS <= seqlen) {
#pragma unroll
    for (int q = 0; q < Q; q++) {
      float4 x = __ldg((const float4 *)(p + t) + q);
      v[4 * q] = x.x;
      v[4 * q + 1] = x.y;
      v[4 * q + 2] = x.z;
      v[4 * q + 3] = x.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      v[i] = t + i < seqlen ? __ldg(p + t + i) : 0.f;
  }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    selective_scan(const float *__restrict__ u, const float *__restrict__ delta,
                   const float *__restrict__ A, const float *__restrict__ B,
                   const float *__restrict__ C, const float *__restrict__ D,
                   const float *__restrict__ z, float *__restrict__ out,
                   long batch, long dim, long seqlen, int delta_softplus) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float4 *sB = (float4 *)smem_raw; // [DSTATE][Q][32]
  float4 *sC = sB + DSTATE * Q * 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long b = blockIdx.y, d = (long)blockIdx.x * WARPS + warp;
  // a warp past dim still stages and meets the barriers, and reads
  // channel 0's rows (in bounds) but writes nothing
  const bool live = d < dim;
  const long row = (b * dim + (live ? d : 0)) * seqlen;
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
  const bool vec = (seqlen & 3) == 0;
  __shared__ float sa[WARPS][DSTATE], sh[WARPS][DSTATE];
  float *a2 = sa[warp], *hc = sh[warp];
  if (lane < DSTATE) {
    a2[lane] = live ? A[d * DSTATE + lane] * LOG2E : 0.f;
    hc[lane] = 0.f;
  }
  const float Dd = live ? D[d] : 0.f;
  for (long t0 = 0; t0 < seqlen; t0 += WIN) {
    const long tl = t0 + (long)lane * ITEMS; // this lane's first step
    float dt[ITEMS], du[ITEMS], y[ITEMS], zv[ITEMS];
    load_items(delta + row, tl, seqlen, vec, dt);
    load_items(u + row, tl, seqlen, vec, du);
    load_items(z + row, tl, seqlen, vec, zv);
    __syncthreads(); // the last window's B and C readers are done
    for (int k = threadIdx.x; k < DSTATE * 32 * Q; k += 32 * WARPS) {
      int n = k / (32 * Q), r = k % (32 * Q), q = r % Q;
      int at = (n * Q + q) * 32 + ((r / Q) ^ (q * SWZ));
      long t = t0 + 4 * r;
      const float *pb = Bb + n * seqlen + t, *pc = Cb + n * seqlen + t;
      if (vec) { // t and seqlen multiples of 4: all 4 steps in or none
        bool in = t < seqlen;
        cp16(&sB[at], in ? pb : Bb, in ? 16 : 0);
        cp16(&sC[at], in ? pc : Cb, in ? 16 : 0);
      } else {
        float vb[4], vc[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
          vb[j] = t + j < seqlen ? __ldg(pb + j) : 0.f;
          vc[j] = t + j < seqlen ? __ldg(pc + j) : 0.f;
        }
        sB[at] = make_float4(vb[0], vb[1], vb[2], vb[3]);
        sC[at] = make_float4(vc[0], vc[1], vc[2], vc[3]);
      }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      float v = dt[i], ut = du[i];
      // steps past seqlen (u = 0, B = 0 there) come after every real step
      // of the row, so what they do to the state is never read
      v = delta_softplus ? (v > 20.f ? v : log1pf(expf(v))) : v;
      dt[i] = v;
      du[i] = v * ut;
      y[i] = Dd * ut;
    }
    cp_commit();
    cp_wait<0>();
    __syncthreads(); // B and C staged
    UNROLL(NUE)
    for (int n = 0; n < DSTATE; n++) {
      float e[ITEMS], x[ITEMS], E = 1.f, X = 0.f;
#pragma unroll
      for (int q = 0; q < Q; q++) {
        float4 bv = sB[(n * Q + q) * 32 + (lane ^ (q * SWZ))];
        float bq[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
          int i = 4 * q + j;
          e[i] = ex2(dt[i] * a2[n]);
          x[i] = du[i] * bq[j];
          X = e[i] * X + x[i];
          E *= e[i];
        }
      }
      // inclusive scan of the lanes' maps: (E, X) after (Ep, Xp) is
      // (E*Ep, E*Xp + X)
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        float Ep = __shfl_up_sync(0xffffffffu, E, off);
        float Xp = __shfl_up_sync(0xffffffffu, X, off);
        if (lane >= off) {
          X = E * Xp + X;
          E *= Ep;
        }
      }
      // this lane's end state; the one before it is this lane's start, and
      // lane 31's is the next window's carry
      float hn = hc[n], he = E * hn + X;
      float h = __shfl_up_sync(0xffffffffu, he, 1);
      h = lane ? h : hn;
      hn = __shfl_sync(0xffffffffu, he, 31);
#pragma unroll
      for (int q = 0; q < Q; q++) {
        float4 cv = sC[(n * Q + q) * 32 + (lane ^ (q * SWZ))];
        float cq[4] = {cv.x, cv.y, cv.z, cv.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
          int i = 4 * q + j;
          h = e[i] * h + x[i];
          y[i] += h * cq[j];
        }
      }
      __syncwarp(); // every lane has read hc[n]
      hc[n] = hn;
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      y[i] *= zv[i] / (1.f + expf(-zv[i]));
    if (!live)
      continue;
    if (vec && tl + ITEMS <= seqlen) {
#pragma unroll
      for (int q = 0; q < Q; q++)
        ((float4 *)(out + row + tl))[q] =
            make_float4(y[4 * q], y[4 * q + 1], y[4 * q + 2], y[4 * q + 3]);
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (tl + i < seqlen)
          out[row + tl + i] = y[i];
    }
  }
}
