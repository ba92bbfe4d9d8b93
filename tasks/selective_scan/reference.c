// ksearch: backend=c entry=selective_scan
// Reference for tasks/selective_scan: the Mamba-1 selective scan (prefill),
// the same math as the Mamba paper's selective_scan_ref (DESIGN.md: Task).
// Plain and single-threaded on purpose; the state and the output are carried
// in double so that float candidates are compared with something better than
// themselves. dstate is a const axis, so it is fixed here and not passed.
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define DSTATE 16

static double softplus(double v) { return v > 20.0 ? v : log1p(exp(v)); }

void selective_scan(const float *restrict u, const float *restrict delta,
                    const float *restrict A, const float *restrict B,
                    const float *restrict C, const float *restrict D,
                    const float *restrict z, float *restrict out, int64_t batch,
                    int64_t dim, int64_t seqlen, int32_t delta_softplus) {
  for (int64_t b = 0; b < batch; b++) {
    const float *Bb = B + b * DSTATE * seqlen; // B[b, n, t]
    const float *Cb = C + b * DSTATE * seqlen; // C[b, n, t]
    for (int64_t d = 0; d < dim; d++) {
      int64_t row = (b * dim + d) * seqlen; // u, delta, z, out [b, d, t]
      const float *Ad = A + d * DSTATE;     // A[d, n]
      double h[DSTATE];
      for (int n = 0; n < DSTATE; n++)
        h[n] = 0.0;
      for (int64_t t = 0; t < seqlen; t++) {
        double dt = delta[row + t];
        if (delta_softplus)
          dt = softplus(dt);
        double ut = u[row + t];
        for (int n = 0; n < DSTATE; n++)
          h[n] = exp(dt * (double)Ad[n]) * h[n] +
                 dt * (double)Bb[n * seqlen + t] * ut;
        double y = 0.0;
        for (int n = 0; n < DSTATE; n++)
          y += h[n] * (double)Cb[n * seqlen + t];
        y += (double)D[d] * ut;
        double zt = z[row + t];
        out[row + t] = (float)(y * (zt / (1.0 + exp(-zt))));
      }
    }
  }
}
