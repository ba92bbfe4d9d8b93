// ksearch: backend=cuda entry=selective_scan
// ksearch: family=warp_scan
// ksearch: concepts=chunked_scan,shared_memory_tiling,bank_conflict_padding,vector_loads_128,launch_bounds_occupancy
// ksearch: param ITEMS in 16,8
// ksearch: param WARPS in 4,8,2
// ksearch: param NU in 1,4
// ksearch: param CPW in 1,2
// ksearch: launch grid=(cdiv(dim, WARPS * CPW), batch) block=(32 * WARPS, 1) smem=(2 * 16 * 32 * min(ITEMS, 16 / CPW) * 4)
//
// CUDA template for tasks/selective_scan, family warp_scan (DESIGN.md:
// Task, templates): the time axis is spread over the lanes of a warp, so
// the parallelism is batch*dim*32/CPW lanes however short the batch. A warp
// owns CPW channels; a block holds WARPS warps of one batch row. The warp
// walks the sequence in windows of 32*IT steps, lane l holding the IT
// consecutive steps [l*IT, (l+1)*IT) of the window. For each state n the
// step h -> e*h + x (e = exp(dt*A[n]), x = dt*u*B[n,t]) is an affine map,
// and affine maps compose associatively, so per state and channel:
//   1. each lane composes its IT maps into one (E, X) pair;
//   2. a Kogge-Stone scan over the 32 lanes (__shfl_up_sync) turns those
//      into inclusive maps; applied to the window's carried state they give
//      each lane's end state, and the lane before's is its start;
//   3. each lane replays its IT steps from there (the e and x kept in
//      registers, so one exp per state and step), adding h*C[n,t] into
//      its outputs; lane 31's end state is the next window's carry.
// The exp is ex2.approx with log2(e) folded into A once. B and C (shared by
// every channel of a batch row) are staged once per window for the block in
// shared memory, laid out so that a lane's float4 of steps is one
// conflict-free 16-byte read: float4 (n, q, lane) holds steps
// l*IT+4q..+3 of state n at column lane ^ (q * 8/Q) of row (n, q) (the XOR
// keeps the staging stores conflict-free too). They go global -> shared by
// cp.async, a thread's whole share in flight at once (a register round trip
// per piece, as in bc_shared, leaves one load latency per piece exposed when
// few warps run). With CPW 2 a lane's B and C registers serve two channels:
// half the shared-memory reads per state-step, the scan's shuffles the same.
// The carried states and A (lane-uniform) live in shared memory, so the
// state loop need not be unrolled whole to index registers (a whole unroll
// took ~200 registers, 8 warps per SM); with NU 1 or 4 ptxas 13 keeps every
// parameter point at 80-136 registers without spills (NU 2 spilled). u,
// delta, z and out move as float4 where seqlen is a multiple of 4, scalar
// (bounds-checked) elsewhere; steps past seqlen read as 0.
//   ITEMS steps per lane per window (16: 64 KiB of shared memory per block,
//   fewer scan steps per state-step; 8: 32 KiB, more blocks per SM); with
//   CPW 2 the lane takes IT = min(ITEMS, 8) (registers);
//   WARPS warps per block; CPW channels per warp; NU states unrolled
//   together (ILP against registers)
#include <math.h>
#include <stdint.h>
#define DSTATE 16
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef CPW
#define CPW 1
#endif
#ifndef NU
#define NU 1
#endif
// steps per lane: CPW channels share the lane's B/C registers, so their
// per-channel arrays multiply; 16 steps for 2 channels would not fit
#define IT (ITEMS * CPW > 16 ? 16 / CPW : ITEMS)
#define WIN (32 * IT) // steps per window
#define Q (IT / 4)    // float4 per lane per state row
#define SWZ (8 / Q)
// at 16 steps per lane (over its channels) with 8 warps ptxas 13 held
// four unrolled states to 128 registers and spilled 8-20 bytes, so that
// corner unrolls none
#if IT * CPW >= 16 && WARPS == 8
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

// IT steps of one row from step t: float4 when the row is 16-byte
// aligned (vec) and all IT steps exist, else one by one, 0 past seqlen
__device__ __forceinline__ void load_items(const float *__restrict__ p, long t,
                                           long seqlen, bool vec, float *v) {
  if (vec && t + IT <= seqlen) {
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
    for (int i = 0; i < IT; i++)
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
  // per warp and channel: A*log2(e) and the carried state, lane-uniform
  __shared__ float sa[WARPS][CPW][DSTATE], sh[WARPS][CPW][DSTATE];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long b = blockIdx.y, d0 = ((long)blockIdx.x * WARPS + warp) * CPW;
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
  const bool vec = (seqlen & 3) == 0;
  // a channel past dim still stages and meets the barriers, and reads
  // channel 0's rows (in bounds) but writes nothing
  bool live[CPW];
  long row[CPW];
  float Dd[CPW];
#pragma unroll
  for (int c = 0; c < CPW; c++) {
    live[c] = d0 + c < dim;
    row[c] = (b * dim + (live[c] ? d0 + c : 0)) * seqlen;
    Dd[c] = live[c] ? D[d0 + c] : 0.f;
  }
  if (lane < DSTATE * CPW) {
    int c = lane / DSTATE, n = lane % DSTATE;
    sa[warp][c][n] = d0 + c < dim ? A[(d0 + c) * DSTATE + n] * LOG2E : 0.f;
    sh[warp][c][n] = 0.f;
  }
  for (long t0 = 0; t0 < seqlen; t0 += WIN) {
    const long tl = t0 + (long)lane * IT; // this lane's first step
    float dt[CPW][IT], du[CPW][IT], y[CPW][IT], zv[CPW][IT];
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      load_items(delta + row[c], tl, seqlen, vec, dt[c]);
      load_items(u + row[c], tl, seqlen, vec, du[c]);
      load_items(z + row[c], tl, seqlen, vec, zv[c]);
    }
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
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int i = 0; i < IT; i++) {
        float v = dt[c][i], ut = du[c][i];
        // steps past seqlen (u = 0, B = 0 there) come after every real
        // step of the row, so what they do to the state is never read
        v = delta_softplus ? (v > 20.f ? v : log1pf(expf(v))) : v;
        dt[c][i] = v;
        du[c][i] = v * ut;
        y[c][i] = Dd[c] * ut;
      }
    cp_commit();
    cp_wait<0>();
    __syncthreads(); // B and C staged
    UNROLL(NUE)
    for (int n = 0; n < DSTATE; n++) {
      // this lane's B and C steps of state n, read once for all channels
      float bq[IT], cq[IT];
#pragma unroll
      for (int q = 0; q < Q; q++) {
        float4 bv = sB[(n * Q + q) * 32 + (lane ^ (q * SWZ))];
        bq[4 * q] = bv.x;
        bq[4 * q + 1] = bv.y;
        bq[4 * q + 2] = bv.z;
        bq[4 * q + 3] = bv.w;
      }
#pragma unroll
      for (int c = 0; c < CPW; c++) {
        const float an = sa[warp][c][n];
        float e[IT], x[IT], E = 1.f, X = 0.f;
#pragma unroll
        for (int i = 0; i < IT; i++) {
          e[i] = ex2(dt[c][i] * an);
          x[i] = du[c][i] * bq[i];
          X = e[i] * X + x[i];
          E *= e[i];
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
        // this lane's end state; the one before it is this lane's start,
        // and lane 31's is the next window's carry
        float hn = sh[warp][c][n], he = E * hn + X;
        float h = __shfl_up_sync(0xffffffffu, he, 1);
        h = lane ? h : hn;
        hn = __shfl_sync(0xffffffffu, he, 31);
        if (c == 0) // C read after the first scan: fewer registers live
#pragma unroll
          for (int q = 0; q < Q; q++) {
            float4 cv = sC[(n * Q + q) * 32 + (lane ^ (q * SWZ))];
            cq[4 * q] = cv.x;
            cq[4 * q + 1] = cv.y;
            cq[4 * q + 2] = cv.z;
            cq[4 * q + 3] = cv.w;
          }
#pragma unroll
        for (int i = 0; i < IT; i++) {
          h = e[i] * h + x[i];
          y[c][i] += h * cq[i];
        }
        __syncwarp(); // every lane has read the carry
        sh[warp][c][n] = hn;
      }
    }
#pragma unroll
    for (int c = 0; c < CPW; c++) {
#pragma unroll
      for (int i = 0; i < IT; i++)
        y[c][i] *= zv[c][i] / (1.f + expf(-zv[c][i]));
      if (!live[c])
        continue;
      float *o = out + row[c] + tl;
      if (vec && tl + IT <= seqlen) {
#pragma unroll
        for (int q = 0; q < Q; q++)
          ((float4 *)o)[q] = make_float4(y[c][4 * q], y[c][4 * q + 1],
                                         y[c][4 * q + 2], y[c][4 * q + 3]);
      } else {
#pragma unroll
        for (int i = 0; i < IT; i++)
          if (tl + i < seqlen)
            o[i] = y[c][i];
      }
    }
  }
}
