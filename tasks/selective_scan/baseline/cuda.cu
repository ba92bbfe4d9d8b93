// ksearch: backend=cuda entry=selective_scan
// ksearch: launch grid=(batch * dim / 128) block=(128)
//
// Device baseline for tasks/selective_scan on CUDA (DESIGN.md: Evaluation,
// baselines): the naive fused kernel, one thread per (batch, channel) with
// the 16 states in registers, reading every input straight from global
// memory at every step. Speedups on a GPU are measured over this.
#include <math.h>
#define DSTATE 16
extern "C" __global__ void selective_scan(
    const float *u, const float *delta, const float *A, const float *B,
    const float *C, const float *D, const float *z, float *out, long batch,
    long dim, long seqlen, int delta_softplus) {
  long ch = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= batch * dim)
    return;
  long b = ch / dim, d = ch % dim, row = ch * seqlen;
  const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
  float h[DSTATE], a[DSTATE];
  for (int n = 0; n < DSTATE; n++) {
    h[n] = 0.f;
    a[n] = A[d * DSTATE + n];
  }
  for (long t = 0; t < seqlen; t++) {
    float dt = delta[row + t];
    if (delta_softplus)
      dt = dt > 20.f ? dt : log1pf(expf(dt));
    float ut = u[row + t], y = 0.f;
    for (int n = 0; n < DSTATE; n++) {
      h[n] = expf(dt * a[n]) * h[n] + dt * Bb[n * seqlen + t] * ut;
      y += h[n] * Cb[n * seqlen + t];
    }
    y += D[d] * ut;
    float zt = z[row + t];
    out[row + t] = y * (zt / (1.f + expf(-zt)));
  }
}
