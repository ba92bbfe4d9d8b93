// ksearch: backend=cuda entry=selective_scan
// ksearch: family=thread_per_channel
// ksearch: concepts=state_in_registers,vector_loads_128,loop_unrolling
// ksearch: param BLOCK in 64,128,32,256
// ksearch: param TT in 8,4,16
// ksearch: param EXP in 0,1
// ksearch: launch grid=(batch * dim / BLOCK) block=(BLOCK)
//
// CUDA template for tasks/selective_scan, family thread_per_channel: one
// thread per (batch, channel), the 16 states in registers; time goes in
// tiles of TT steps whose u, delta, z (contiguous in time) are loaded as
// 16-byte vectors before the tile's arithmetic, so the loads of a tile are
// in flight together instead of one latency per step.
//   BLOCK threads per block; TT steps per tile (a multiple of 4)
//   EXP 1: __expf (the SFU), 0: expf
#include <math.h>
#define DSTATE 16
#ifndef BLOCK
#define BLOCK 64
#endif
#ifndef TT
#define TT 8
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
  long ch = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (ch >= batch * dim)
    return;
  long b = ch / dim, d = ch % dim, row = ch * seqlen;
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
  float h[DSTATE], a[DSTATE];
#pragma unroll
  for (int n = 0; n < DSTATE; n++) {
    h[n] = 0.f;
    a[n] = A[d * DSTATE + n];
  }
  const float Dd = D[d];
  const bool vec = seqlen % 4 == 0;
  for (long t0 = 0; t0 < seqlen; t0 += TT) {
    float uu[TT], dd[TT], zz[TT], yy[TT];
    if (vec && t0 + TT <= seqlen) {
#pragma unroll
      for (int i = 0; i < TT; i += 4) {
        float4 a4 = __ldg((const float4 *)(u + row + t0 + i));
        float4 b4 = __ldg((const float4 *)(delta + row + t0 + i));
        float4 c4 = __ldg((const float4 *)(z + row + t0 + i));
        uu[i] = a4.x; uu[i + 1] = a4.y; uu[i + 2] = a4.z; uu[i + 3] = a4.w;
        dd[i] = b4.x; dd[i + 1] = b4.y; dd[i + 2] = b4.z; dd[i + 3] = b4.w;
        zz[i] = c4.x; zz[i + 1] = c4.y; zz[i + 2] = c4.z; zz[i + 3] = c4.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < TT; i++) {
        bool in = t0 + i < seqlen;
        uu[i] = in ? u[row + t0 + i] : 0.f;
        dd[i] = in ? delta[row + t0 + i] : 0.f;
        zz[i] = in ? z[row + t0 + i] : 0.f;
      }
    }
#pragma unroll
    for (int i = 0; i < TT; i++) {
      long t = t0 + i < seqlen ? t0 + i : seqlen - 1;
      float dt = delta_softplus ? softplus(dd[i]) : dd[i];
      float du = dt * uu[i], y = 0.f;
#pragma unroll
      for (int n = 0; n < DSTATE; n++) {
        h[n] = FEXP(dt * a[n]) * h[n] + du * __ldg(Bb + n * seqlen + t);
        y += h[n] * __ldg(Cb + n * seqlen + t);
      }
      y += Dd * uu[i];
      yy[i] = y * (zz[i] / (1.f + FEXP(-zz[i])));
    }
    if (vec && t0 + TT <= seqlen) {
#pragma unroll
      for (int i = 0; i < TT; i += 4)
        *(float4 *)(out + row + t0 + i) =
            make_float4(yy[i], yy[i + 1], yy[i + 2], yy[i + 3]);
    } else {
      for (int i = 0; i < TT && t0 + i < seqlen; i++)
        out[row + t0 + i] = yy[i];
    }
  }
}
