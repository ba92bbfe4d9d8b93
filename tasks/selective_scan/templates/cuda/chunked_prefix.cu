// ksearch: backend=cuda entry=selective_scan
// ksearch: family=chunked_prefix
// ksearch: concepts=chunked_scan,state_in_registers,thread_parallel
// ksearch: param NCH in 16,8,32,4
// ksearch: param BLOCK in 128,64,256
// ksearch: param EXP in 0,1
// ksearch: launch kernel=scan_chunks grid=(batch * dim * NCH / BLOCK) block=(BLOCK) scratch=(batch * dim * NCH * 17 * 4)
// ksearch: launch kernel=scan_finish grid=(batch * dim * NCH / BLOCK) block=(BLOCK) scratch=(batch * dim * NCH * 17 * 4)
//
// CUDA template for tasks/selective_scan, family chunked_prefix: time is cut
// into NCH chunks, so batch*dim*NCH threads work instead of batch*dim. The
// recurrence h = exp(dt*A)*h + dt*B*u is linear in h, so a chunk started
// from h = 0 gives a local end state, and its decay over the chunk is
// exp(A * sum dt). scan_chunks writes both per (channel, chunk) to scratch;
// scan_finish folds the earlier chunks of its channel into its start state
// (a prefix over time, NCH*16 multiply-adds) and scans its chunk again from
// there, writing the outputs. Consecutive threads are consecutive chunks
// of one channel.
//   NCH chunks per channel; BLOCK threads per block; EXP as elsewhere
#include <math.h>
#define DSTATE 16
#ifndef NCH
#define NCH 16
#endif
#ifndef BLOCK
#define BLOCK 128
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
// scratch per (channel, chunk): 16 end states, then the sum of dt
#define SLOT 17

// Scans steps [t0, t1) of channel ch from state h; writes outputs if out.
__device__ __forceinline__ void scan_range(
    const float *__restrict__ u, const float *__restrict__ delta,
    const float *__restrict__ Bb, const float *__restrict__ Cb,
    const float *__restrict__ z, float *__restrict__ out, const float *a,
    float Dd, float *h, long row, long seqlen, long t0, long t1,
    int delta_softplus, float *dtsum) {
  float s = 0.f;
  for (long t = t0; t < t1; t++) {
    float dt = __ldg(delta + row + t);
    dt = delta_softplus ? softplus(dt) : dt;
    s += dt;
    float ut = __ldg(u + row + t), du = dt * ut, y = 0.f;
#pragma unroll
    for (int n = 0; n < DSTATE; n++) {
      h[n] = FEXP(dt * a[n]) * h[n] + du * __ldg(Bb + n * seqlen + t);
      y += h[n] * __ldg(Cb + n * seqlen + t);
    }
    if (out) {
      y += Dd * ut;
      float zt = __ldg(z + row + t);
      out[row + t] = y * (zt / (1.f + FEXP(-zt)));
    }
  }
  *dtsum = s;
}

#define SETUP                                                                  \
  long gidx = (long)blockIdx.x * BLOCK + threadIdx.x;                          \
  if (gidx >= batch * dim * NCH)                                               \
    return;                                                                    \
  long ch = gidx / NCH, k = gidx % NCH;                                        \
  long b = ch / dim, d = ch % dim, row = ch * seqlen;                          \
  long len = (seqlen + NCH - 1) / NCH;                                         \
  long t0 = k * len < seqlen ? k * len : seqlen;                               \
  long t1 = t0 + len < seqlen ? t0 + len : seqlen;                             \
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;    \
  float h[DSTATE], a[DSTATE];                                                  \
  _Pragma("unroll") for (int n = 0; n < DSTATE; n++) {                         \
    h[n] = 0.f;                                                                \
    a[n] = A[d * DSTATE + n];                                                  \
  }                                                                            \
  float *sc = (float *)scratch;

extern "C" __global__ void __launch_bounds__(BLOCK) scan_chunks(
    const float *__restrict__ u, const float *__restrict__ delta,
    const float *__restrict__ A, const float *__restrict__ B,
    const float *__restrict__ C, const float *__restrict__ D,
    const float *__restrict__ z, float *__restrict__ out, long batch,
    long dim, long seqlen, int delta_softplus, void *scratch) {
  SETUP
  float s;
  if (k == NCH - 1) { // the last chunk's end state is never needed
    sc[gidx * SLOT + DSTATE] = 0.f;
    return;
  }
  scan_range(u, delta, Bb, Cb, z, 0, a, 0.f, h, row, seqlen, t0, t1,
             delta_softplus, &s);
#pragma unroll
  for (int n = 0; n < DSTATE; n++)
    sc[gidx * SLOT + n] = h[n];
  sc[gidx * SLOT + DSTATE] = s;
}

extern "C" __global__ void __launch_bounds__(BLOCK) scan_finish(
    const float *__restrict__ u, const float *__restrict__ delta,
    const float *__restrict__ A, const float *__restrict__ B,
    const float *__restrict__ C, const float *__restrict__ D,
    const float *__restrict__ z, float *__restrict__ out, long batch,
    long dim, long seqlen, int delta_softplus, void *scratch) {
  SETUP
  // the prefix: fold chunks 0..k-1 of this channel into the start state
  for (long j = 0; j < k; j++) {
    const float *slot = sc + (ch * NCH + j) * SLOT;
    float S = slot[DSTATE];
#pragma unroll
    for (int n = 0; n < DSTATE; n++)
      h[n] = FEXP(S * a[n]) * h[n] + slot[n];
  }
  float s;
  scan_range(u, delta, Bb, Cb, z, out, a, D[d], h, row, seqlen, t0, t1,
             delta_softplus, &s);
}
