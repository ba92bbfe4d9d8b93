// ksearch: backend=mlx entry=mamba_thread_per_channel kernel=cuda
// ksearch: family=thread_per_channel
// ksearch: concepts=state_in_registers,coalesced_access
// ksearch: param TG in 128,64,256,32
// ksearch: launch grid=(cdiv(dim, TG) * TG, batch) threadgroup=(TG, 1)
//
// MLX template for tasks/mamba_mlx: the naive fused scan, one thread per
// (batch, channel) walking all of seqlen with its dstate states in
// registers (the "naive fused kernel" of issue 15, 82x mlx-lm's
// MambaBlock). Few threads (batch * dim) and seqlen dependent steps each:
// the baseline the chunked scan is measured against.
// ksearch: body
const int d = blockIdx.x * TG + threadIdx.x, bb = blockIdx.y;
if (d >= dim)
  return;
float a[dstate], h[dstate];
#pragma unroll
for (int n = 0; n < dstate; n++) {
  a[n] = A[d * dstate + n];
  h[n] = 0.f;
}
const float Dd = D[d];
const long long base = (long long)bb * seqlen;
for (int t = 0; t < seqlen; t++) {
  const long long i = (base + t) * dim + d;
  const float dt = delta[i], xt = x[i], u = dt * xt;
  const float *Bt = B + (base + t) * dstate;
  const float *Ct = C + (base + t) * dstate;
  float acc = 0.f;
#pragma unroll
  for (int n = 0; n < dstate; n++) {
    h[n] = __expf(dt * a[n]) * h[n] + u * Bt[n];
    acc += h[n] * Ct[n];
  }
  y[i] = acc + Dd * xt;
}
