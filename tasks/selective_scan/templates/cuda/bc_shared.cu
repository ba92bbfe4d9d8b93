// ksearch: backend=cuda entry=selective_scan
// ksearch: family=bc_shared
// ksearch: concepts=state_in_registers,shared_memory_tiling,coalesced_access
// ksearch: param BLOCK in 64,32
// ksearch: param TT in 32,16,8
// ksearch: param EXP in 0,1
// ksearch: launch grid=(dim / BLOCK, batch) block=(BLOCK, 1)
//
// CUDA template for tasks/selective_scan, family bc_shared: a block holds
// BLOCK channels of one batch row, one thread per channel with its 16
// states in registers. B and C (shared by every channel of a batch row) are
// staged in shared memory TT steps at a time by the whole block, coalesced,
// and reused by all BLOCK channels; u, delta and z are staged transposed
// (time-major) so the per-step reads of a warp hit different banks.
//   BLOCK channels per block; TT steps per tile (BLOCK*TT <= 2048: the
//   three staged tiles stay under 48 KiB of static shared memory)
//   EXP 1: __expf (the SFU), 0: expf
#include <math.h>
#define DSTATE 16
#ifndef BLOCK
#define BLOCK 64
#endif
#ifndef TT
#define TT 32
#endif
#ifndef EXP
#define EXP 0
#endif
#if EXP
#define FEXP __expf
#else
#define FEXP expf
#endif
__device__ __forceinline__ float softplus(float v) {
  return v > 20.f ? v : log1pf(FEXP(v));
}
extern "C" __global__ void __launch_bounds__(BLOCK) selective_scan(
    const float *__restrict__ u, const float *__restrict__ delta,
    const float *__restrict__ A, const float *__restrict__ B,
    const float *__restrict__ C, const float *__restrict__ D,
    const float *__restrict__ z, float *__restrict__ out, long batch,
    long dim, long seqlen, int delta_softplus) {
  __shared__ float sB[DSTATE][TT], sC[DSTATE][TT];
  __shared__ float su[TT][BLOCK + 1], sd[TT][BLOCK + 1], sz[TT][BLOCK + 1];
  const long b = blockIdx.y, d0 = (long)blockIdx.x * BLOCK;
  const int tid = threadIdx.x;
  const long d = d0 + tid;
  const bool live = d < dim;
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
  float h[DSTATE], a[DSTATE];
#pragma unroll
  for (int n = 0; n < DSTATE; n++) {
    h[n] = 0.f;
    a[n] = live ? A[d * DSTATE + n] : 0.f;
  }
  const float Dd = live ? D[d] : 0.f;
  for (long t0 = 0; t0 < seqlen; t0 += TT) {
    const int tn = seqlen - t0 < TT ? (int)(seqlen - t0) : TT;
    __syncthreads(); // the last tile's readers are done
    for (int i = tid; i < DSTATE * TT; i += BLOCK) {
      int n = i / TT, t = i % TT;
      sB[n][t] = t < tn ? Bb[n * seqlen + t0 + t] : 0.f;
      sC[n][t] = t < tn ? Cb[n * seqlen + t0 + t] : 0.f;
    }
    // channel-major in memory: consecutive threads read consecutive steps
    // of one channel, then the tile is stored time-major
    for (int i = tid; i < BLOCK * TT; i += BLOCK) {
      int c = i / TT, t = i % TT;
      long dc = d0 + c, off = (b * dim + dc) * seqlen + t0 + t;
      bool in = dc < dim && t < tn;
      su[t][c] = in ? u[off] : 0.f;
      sd[t][c] = in ? delta[off] : 0.f;
      sz[t][c] = in ? z[off] : 0.f;
    }
    __syncthreads();
    for (int t = 0; t < tn; t++) {
      float dt = sd[t][tid];
      dt = delta_softplus ? softplus(dt) : dt;
      float ut = su[t][tid], du = dt * ut, y = 0.f;
#pragma unroll
      for (int n = 0; n < DSTATE; n++) {
        h[n] = FEXP(dt * a[n]) * h[n] + du * sB[n][t];
        y += h[n] * sC[n][t];
      }
      y += Dd * ut;
      float zt = sz[t][tid];
      su[t][tid] = y * (zt / (1.f + FEXP(-zt))); // the output, in place
    }
    __syncthreads();
    for (int i = tid; i < BLOCK * TT; i += BLOCK) {
      int c = i / TT, t = i % TT;
      long dc = d0 + c;
      if (dc < dim && t < tn)
        out[(b * dim + dc) * seqlen + t0 + t] = su[t][c];
    }
  }
}
