// ksearch: backend=mlx entry=mamba_chunked_scan kernel=cuda
// ksearch: family=chunked_scan
// ksearch: concepts=chunked_scan,state_in_registers,coalesced_access
// ksearch: param CH in 16,32,8
// ksearch: param NCH in 16,8,32,4
// ksearch: launch grid=(cdiv(dim, CH) * CH * NCH, batch) threadgroup=(CH * NCH, 1) smem=(4 * NCH * CH * 17)
//
// MLX template for tasks/mamba_mlx (an mx.fast.cuda_kernel body), the
// Mamba-1 scan in mlx-lm's layout: x, delta, y [batch, seqlen, dim], B, C
// [batch, seqlen, dstate], A [dim, dstate], D [dim]. A block holds CH
// channels (adjacent d: coalesced loads of x and delta) times NCH chunks of
// time; thread (c, k) scans chunk k of channel c with its dstate states in
// registers, three phases:
//   1. from a zero state, the chunk's end state and the sum of its deltas
//      (the chunk's decay is exp(A * sum delta));
//   2. the state entering chunk k, folded over chunks 0..k-1 from shared
//      memory: h = h * exp(A * S_j) + h_end_j;
//   3. the chunk again from that state, writing y.
// So a sequence of seqlen steps costs about 2 * seqlen / NCH dependent
// steps per thread instead of seqlen, and batch * dim * NCH threads run.
// B[b, t, :] and C[b, t, :] are the same for every channel: broadcast loads.
// ksearch: body
extern __shared__ float sm[]; // [NCH][dstate][CH] end states, then [NCH][CH] sums
float *hs = sm;
float *ss = sm + NCH * dstate * CH;
const int c = threadIdx.x % CH, k = threadIdx.x / CH;
const int d = blockIdx.x * CH + c, bb = blockIdx.y;
const bool live = d < dim;
const int L = (seqlen + NCH - 1) / NCH;
const int t0 = k * L, t1 = min(seqlen, t0 + L);
float a[dstate], h[dstate];
#pragma unroll
for (int n = 0; n < dstate; n++) {
  a[n] = live ? A[d * dstate + n] : 0.f;
  h[n] = 0.f;
}
const long long base = (long long)bb * seqlen;
float S = 0.f;
if (live)
  for (int t = t0; t < t1; t++) {
    const long long i = (base + t) * dim + d;
    const float dt = delta[i], u = dt * x[i];
    const float *Bt = B + (base + t) * dstate;
#pragma unroll
    for (int n = 0; n < dstate; n++)
      h[n] = __expf(dt * a[n]) * h[n] + u * Bt[n];
    S += dt;
  }
#pragma unroll
for (int n = 0; n < dstate; n++)
  hs[(k * dstate + n) * CH + c] = h[n];
ss[k * CH + c] = S;
__syncthreads();
#pragma unroll
for (int n = 0; n < dstate; n++)
  h[n] = 0.f;
for (int j = 0; j < k; j++) {
  const float Sj = ss[j * CH + c];
#pragma unroll
  for (int n = 0; n < dstate; n++)
    h[n] = h[n] * __expf(a[n] * Sj) + hs[(j * dstate + n) * CH + c];
}
if (!live)
  return;
const float Dd = D[d];
for (int t = t0; t < t1; t++) {
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
