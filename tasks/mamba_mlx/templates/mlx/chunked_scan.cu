// ksearch: backend=mlx entry=mamba_chunked_scan kernel=cuda
// ksearch: family=chunked_scan
// ksearch: concepts=chunked_scan,state_in_registers,coalesced_access
// ksearch: param CH in 16,32,8
// ksearch: param NCH in 32,16,8,4
// ksearch: param U in 4,8,1
// ksearch: param PREFIX in 1,0
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
//      memory: h = h * exp(A * S_j) + h_end_j (PREFIX=0: thread k folds k
//      chunks, so the last chunk's thread waits ~NCH steps of 16 exps;
//      PREFIX=1, the default: a Kogge-Stone scan over the chunks in
//      log2(NCH) rounds (H200 2026-12-05: the scan alone 0.063 against
//      0.078 ms at T 1024, 0.19 against 0.28 ms at T 4096),
//      (S1, h1) then (S2, h2) = (S1 + S2, h1 * exp(A * S2) + h2), and the
//      state entering chunk k is the prefix of chunk k - 1);
//   3. the chunk again from that state, writing y.
// So a sequence of seqlen steps costs about 2 * seqlen / NCH dependent
// steps per thread instead of seqlen, and batch * dim * NCH threads run.
// B[b, t, :] and C[b, t, :] are the same for every channel: broadcast loads.
// Phases 1 and 3 go U steps at a time: delta and x of the U steps loaded
// first, and phase 3's y stores after the U steps, so no store sits
// between a batch's loads and the compiler may issue them all (B and C rows
// too) before the first step's math: a thread waits for memory about once
// per U steps instead of every step (the scan is latency-bound: ~8 warps
// per SM at 2048 channels). The last batch of a chunk clamps its loads to
// the chunk and skips the steps past it.
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
  for (int t = t0; t < t1; t += U) {
    float dv[U], xv[U];
#pragma unroll
    for (int s = 0; s < U; s++) {
      const long long i = (base + min(t + s, t1 - 1)) * dim + d;
      dv[s] = delta[i], xv[s] = x[i];
    }
#pragma unroll
    for (int s = 0; s < U; s++) {
      if (t + s >= t1)
        break;
      const float dt = dv[s], u = dt * xv[s];
      const float *Bt = B + (base + t + s) * dstate;
#pragma unroll
      for (int n = 0; n < dstate; n++)
        h[n] = __expf(dt * a[n]) * h[n] + u * Bt[n];
      S += dt;
    }
  }
#pragma unroll
for (int n = 0; n < dstate; n++)
  hs[(k * dstate + n) * CH + c] = h[n];
ss[k * CH + c] = S;
__syncthreads();
#if PREFIX
// every thread holds its chunk's (S, h); after round r, chunks k - 2^r + 1
// .. k (two barriers a round: reads of the round before its writes)
for (int dd = 1; dd < NCH; dd <<= 1) {
  float Sp = 0.f, hp[dstate];
  const bool has = k >= dd;
#pragma unroll
  for (int n = 0; n < dstate; n++)
    hp[n] = has ? hs[((k - dd) * dstate + n) * CH + c] : 0.f;
  if (has)
    Sp = ss[(k - dd) * CH + c];
  __syncthreads();
  if (has) {
#pragma unroll
    for (int n = 0; n < dstate; n++)
      h[n] = hp[n] * __expf(a[n] * S) + h[n];
    S += Sp;
  }
#pragma unroll
  for (int n = 0; n < dstate; n++)
    hs[(k * dstate + n) * CH + c] = h[n];
  ss[k * CH + c] = S;
  __syncthreads();
}
#pragma unroll
for (int n = 0; n < dstate; n++)
  h[n] = k > 0 ? hs[((k - 1) * dstate + n) * CH + c] : 0.f;
#else
#pragma unroll
for (int n = 0; n < dstate; n++)
  h[n] = 0.f;
for (int j = 0; j < k; j++) {
  const float Sj = ss[j * CH + c];
#pragma unroll
  for (int n = 0; n < dstate; n++)
    h[n] = h[n] * __expf(a[n] * Sj) + hs[(j * dstate + n) * CH + c];
}
#endif
if (!live)
  return;
const float Dd = D[d];
for (int t = t0; t < t1; t += U) {
  float dv[U], xv[U], yv[U];
#pragma unroll
  for (int s = 0; s < U; s++) {
    const long long i = (base + min(t + s, t1 - 1)) * dim + d;
    dv[s] = delta[i], xv[s] = x[i];
  }
  // no store inside the batch: the compiler may issue every load of it
  // (B and C rows too) before the first step's math
#pragma unroll
  for (int s = 0; s < U; s++) {
    const int tt = min(t + s, t1 - 1);
    const float dt = t + s < t1 ? dv[s] : 0.f, u = dt * xv[s];
    const float *Bt = B + (base + tt) * dstate;
    const float *Ct = C + (base + tt) * dstate;
    float acc = 0.f;
#pragma unroll
    for (int n = 0; n < dstate; n++) {
      h[n] = __expf(dt * a[n]) * h[n] + u * Bt[n]; // dt = 0 past the chunk: h stays
      acc += h[n] * Ct[n];
    }
    yv[s] = acc + Dd * xv[s];
  }
#pragma unroll
  for (int s = 0; s < U; s++)
    if (t + s < t1)
      y[(base + t + s) * dim + d] = yv[s];
}
