// ksearch: backend=opencl entry=attention_prefill
// ksearch: family=query_per_item
// ksearch: concepts=online_softmax,thread_parallel,half_bf16_conversion
// ksearch: param LOCAL in 16,64,4
// ksearch: launch global=(seqlen, batch*heads_q) local=(LOCAL, 1)
//
// OpenCL template for tasks/attention_prefill, family query_per_item: one
// work-item per (batch, q head, query i) walks keys 0..i with an online
// softmax (running max m, sum l, unnormalized output in private memory,
// rescaled by exp(m_old - m_new) when the max grows); neighbouring
// work-items are neighbouring queries of one head, so they read the same K/V
// rows. head_dim up to MAXD in private memory (past it, MAXD output columns
// at a time).
//   LOCAL  queries per work-group
// Kernel arguments follow ksearch's OpenCL convention (docs/DESIGN.md).

#define MAXD 256
float bf(ushort h) { return as_float((uint)h << 16); }
ushort to_bf(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (ushort)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

__kernel void attention_prefill(__global const ushort *q,
                                __global const ushort *k,
                                __global const ushort *v, __global ushort *o,
                                long batch, long heads_q, long heads_kv,
                                long seqlen, long head_dim) {
  long i = get_global_id(0), bh = get_global_id(1);
  if (i >= seqlen || bh >= batch * heads_q)
    return;
  long b = bh / heads_q, h = bh % heads_q, g = h / (heads_q / heads_kv);
  long D = head_dim;
  __global const ushort *qi = q + (bh * seqlen + i) * D;
  __global const ushort *kh = k + (b * heads_kv + g) * seqlen * D;
  __global const ushort *vh = v + (b * heads_kv + g) * seqlen * D;
  float scale = 1.0f / sqrt((float)D);
  // the query in private memory up to MAXD; past it (a rare shape) it is
  // read again from global memory and the output is made MAXD columns at a
  // time, each chunk walking the keys again
  int cached = D <= MAXD;
  float qf[MAXD], acc[MAXD];
  if (cached)
    for (long x = 0; x < D; x++)
      qf[x] = bf(qi[x]) * scale;
  for (long c0 = 0; c0 < D; c0 += MAXD) {
    long cw = D - c0 < MAXD ? D - c0 : MAXD;
    for (long x = 0; x < cw; x++)
      acc[x] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (long j = 0; j <= i; j++) {
      float s = 0.0f;
      if (cached)
        for (long x = 0; x < D; x++)
          s += qf[x] * bf(kh[j * D + x]);
      else
        for (long x = 0; x < D; x++)
          s += bf(qi[x]) * scale * bf(kh[j * D + x]);
      float mn = fmax(m, s), alpha = exp(m - mn), p = exp(s - mn);
      l = l * alpha + p;
      for (long x = 0; x < cw; x++)
        acc[x] = acc[x] * alpha + p * bf(vh[j * D + c0 + x]);
      m = mn;
    }
    float inv = 1.0f / l;
    for (long x = 0; x < cw; x++)
      o[(bh * seqlen + i) * D + c0 + x] = to_bf(acc[x] * inv);
  }
}
