// ksearch: backend=opencl entry=decode_paged
// ksearch: family=head_per_item
// ksearch: concepts=online_softmax,thread_parallel,half_bf16_conversion
// ksearch: param LOCAL in 8,32,1
// ksearch: launch global=(batch*heads_q) local=(LOCAL)
//
// OpenCL template for tasks/decode_paged, family head_per_item: one
// work-item per (sequence, q head) walks its seq_lens[b] tokens through
// page_table (page t/16, slot t%16) with an online softmax in private
// memory (head_dim up to MAXD; past it, MAXD output columns at a time).
// Neighbouring work-items are the q heads of one GQA group, so they
// read the same K/V rows. Page size 16 (const axis).
//   LOCAL  work-items per work-group
// Kernel arguments follow ksearch's OpenCL convention (docs/DESIGN.md).

#define MAXD 256
#define PAGE 16
float bf(ushort h) { return as_float((uint)h << 16); }
ushort to_bf(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (ushort)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

__kernel void decode_paged(__global const ushort *q,
                           __global const ushort *k_cache,
                           __global const ushort *v_cache,
                           __global const int *page_table,
                           __global const int *seq_lens, __global ushort *o,
                           long batch, long heads_q, long heads_kv,
                           long head_dim, long num_pages, long max_pages) {
  long bh = get_global_id(0);
  if (bh >= batch * heads_q)
    return;
  long b = bh / heads_q, h = bh % heads_q, g = h / (heads_q / heads_kv);
  long D = head_dim, tok = heads_kv * D, len = seq_lens[b];
  float scale = 1.0f / sqrt((float)D);
  __global const ushort *qh = q + bh * D;
  // the query in private memory up to MAXD; past it (a rare shape) it is
  // read again from global memory and the output is made MAXD columns at a
  // time, each chunk walking the tokens again
  int cached = D <= MAXD;
  float qf[MAXD], acc[MAXD];
  if (cached)
    for (long x = 0; x < D; x++)
      qf[x] = bf(qh[x]) * scale;
  for (long c0 = 0; c0 < D; c0 += MAXD) {
    long cw = D - c0 < MAXD ? D - c0 : MAXD;
    for (long x = 0; x < cw; x++)
      acc[x] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (long t = 0; t < len; t++) {
      long page = page_table[b * max_pages + t / PAGE];
      __global const ushort *kt =
          k_cache + (page * PAGE + t % PAGE) * tok + g * D;
      __global const ushort *vt =
          v_cache + (page * PAGE + t % PAGE) * tok + g * D;
      float s = 0.0f;
      if (cached)
        for (long x = 0; x < D; x++)
          s += qf[x] * bf(kt[x]);
      else
        for (long x = 0; x < D; x++)
          s += bf(qh[x]) * scale * bf(kt[x]);
      float mn = fmax(m, s), alpha = exp(m - mn), p = exp(s - mn);
      l = l * alpha + p;
      for (long x = 0; x < cw; x++)
        acc[x] = acc[x] * alpha + p * bf(vt[c0 + x]);
      m = mn;
    }
    for (long x = 0; x < cw; x++)
      o[bh * D + c0 + x] = to_bf(l > 0.0f ? acc[x] / l : 0.0f);
  }
}
