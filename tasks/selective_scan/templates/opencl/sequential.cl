// ksearch: backend=opencl entry=selective_scan
// ksearch: family=sequential
// ksearch: concepts=thread_parallel
// ksearch: param LOCAL in 16,64,4
// ksearch: launch global=(batch*dim) local=(LOCAL)
//
// OpenCL template for tasks/selective_scan (Mamba-1), family sequential: the
// reference's algorithm, one work-item per (batch, channel) row walking
// time step by step with its 16 state entries in a private array. The
// baseline the GPU-style variants must beat; it has only batch*dim-way
// parallelism, which is little for few long rows.
//   LOCAL  work-items per work-group (rows per group)
// Kernel arguments follow ksearch's OpenCL convention: inputs, outputs, var
// axes as long, scalars (docs/DESIGN.md: Candidate file); dstate = 16 is a
// const axis, fixed here.

#define DSTATE 16

__kernel void selective_scan(__global const float *u,
                             __global const float *delta,
                             __global const float *A, __global const float *B,
                             __global const float *C, __global const float *D,
                             __global const float *z, __global float *out,
                             long batch, long dim, long seqlen,
                             int delta_softplus) {
  long bd = get_global_id(0);
  if (bd >= batch * dim)
    return;
  long b = bd / dim, d = bd % dim;
  long row = bd * seqlen;
  __global const float *Bb = B + b * DSTATE * seqlen;
  __global const float *Cb = C + b * DSTATE * seqlen;
  float a[DSTATE], h[DSTATE];
  for (int n = 0; n < DSTATE; n++) {
    a[n] = A[d * DSTATE + n];
    h[n] = 0.0f;
  }
  float dd = D[d];
  for (long t = 0; t < seqlen; t++) {
    float dt = delta[row + t];
    if (delta_softplus)
      dt = dt > 20.0f ? dt : log1p(exp(dt));
    float ut = u[row + t];
    float y = 0.0f;
    for (int n = 0; n < DSTATE; n++) {
      h[n] = exp(dt * a[n]) * h[n] + dt * Bb[n * seqlen + t] * ut;
      y += h[n] * Cb[n * seqlen + t];
    }
    y += dd * ut;
    float zt = z[row + t];
    out[row + t] = y * (zt / (1.0f + exp(-zt)));
  }
}
