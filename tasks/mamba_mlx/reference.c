// ksearch: backend=c entry=mamba_mlx
// Reference for tasks/mamba_mlx: the Mamba-1 selective scan as mlx-lm's
// MambaBlock computes it (ssm_step over t), with mlx-lm's layout: x, delta
// and y [batch, seqlen, dim], B and C [batch, seqlen, dstate], A [dim,
// dstate] (already -exp(A_log)), D [dim]; delta already through softplus;
// the state starts at zero. Plain, single-threaded, state in double.
#include <math.h>
#include <stdint.h>

#define DSTATE 16

void mamba_mlx(const float *restrict x, const float *restrict delta,
               const float *restrict A, const float *restrict B,
               const float *restrict C, const float *restrict D,
               float *restrict y, int64_t batch, int64_t seqlen, int64_t dim) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t d = 0; d < dim; d++) {
      double h[DSTATE];
      for (int n = 0; n < DSTATE; n++)
        h[n] = 0.0;
      for (int64_t t = 0; t < seqlen; t++) {
        int64_t i = (b * seqlen + t) * dim + d; // x, delta, y [b, t, d]
        const float *Bt = B + (b * seqlen + t) * DSTATE; // B, C [b, t, n]
        const float *Ct = C + (b * seqlen + t) * DSTATE;
        double dt = delta[i], xt = x[i], acc = 0.0;
        for (int n = 0; n < DSTATE; n++) {
          h[n] = exp(dt * (double)A[d * DSTATE + n]) * h[n] +
                 dt * xt * (double)Bt[n];
          acc += h[n] * (double)Ct[n];
        }
        y[i] = (float)(acc + (double)D[d] * xt);
      }
    }
}
