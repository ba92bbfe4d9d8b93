// ksearch: backend=c entry=attention_prefill
// ksearch: family=flash_blocked
// ksearch: concepts=online_softmax,cache_blocking,simd_vectorization,fast_exp_poly,thread_parallel,omp_schedule
// ksearch: param VEC in 16,8
// ksearch: param BQ in 32,16,64,8
// ksearch: param BKV in 64,32,128
// ksearch: param SCHED in 2,0,1
// ksearch: param QR in 4,2,1
// ksearch: param SMALL in 4,0,16
//
// Template for tasks/attention_prefill, family flash_blocked (FlashAttention
// on the CPU): one task per (batch, q head, block of BQ queries); key/value
// blocks of BKV tokens are widened to float (K transposed, so the scores
// S = Q K^T vectorize over keys; V padded to whole vectors, so O += P V
// vectorizes over head_dim); an online softmax keeps, per query, the running
// max m and sum l and rescales O by exp(m_old - m_new) when the max grows.
// Causal: blocks past the last query are never read; a row whose keys are all
// masked in a block skips it (no exp(-inf - -inf)). Float32 throughout.
//   VEC    floats per SIMD vector (GCC vector extensions); BKV is a multiple
//   BQ     queries per task (reuse of each widened K/V block)
//   BKV    keys per block
//   SCHED  OpenMP schedule over tasks: 0 static, 1 dynamic, 2 guided
//   QR     queries per register block: their scores share each loaded row
//          of K^T, their P V updates each loaded row of V (held in
//          registers over 2 vectors of head_dim at a time)
//   SMALL  sequences of at most SMALL tokens take a direct path (a query
//          at a time against its keys, no blocks): a tile's buffers and
//          padding cost more than the few products such a call has (at
//          seqlen 1 the blocked path took ~2 us against the reference's ~1)
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef BQ
#define BQ 32
#endif
#ifndef BKV
#define BKV 64
#endif
#ifndef SCHED
#define SCHED 2
#endif
#ifndef QR
#define QR 4
#endif
#ifndef SMALL
#define SMALL 4
#endif
_Static_assert(BKV % VEC == 0, "BKV must be a multiple of VEC");
_Static_assert(QR >= 1 && BQ % QR == 0, "QR must divide BQ");

#define KS_STR_(x) #x
#define KS_PRAGMA(x) _Pragma(KS_STR_(x))
#if SCHED == 0
#define KS_KIND static
#elif SCHED == 1
#define KS_KIND dynamic
#else
#define KS_KIND guided
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));

static inline float bf(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t to_bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static inline vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

// Cephes-style exp: x = n ln2 + r, |r| <= ln2/2, degree-6 polynomial, times
// 2^n built in the exponent bits; 0 below -87.3 (also for -inf).
static inline vf vexp(vf x) {
  const vf lo = (vf){0} - 87.3f, hi = (vf){0} + 88.3f;
  vi under = x < lo;
  x = (vf)(((vi)x & ~(vi)(x > hi)) | ((vi)hi & (vi)(x > hi)));
  x = (vf)(((vi)x & ~under) | ((vi)lo & under));
  vf t = x * 1.44269504088896341f;
  vi sign = (vi)t & (vi){0} + (int32_t)0x80000000;
  vf half = (vf)(sign | (vi)((vf){0} + 0.5f));
  vi n = __builtin_convertvector(t + half, vi);
  vf nf = __builtin_convertvector(n, vf);
  vf r = x - nf * 0.693359375f + nf * 2.12194440e-4f;
  vf p = (vf){0} + 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  vi e = (n + 127) << 23;
  return (vf)((vi)(p * (vf)e) & ~under);
}

// Scores of QR queries (rows of qs) against the keys of a block (K^T in kt):
// each K^T row is loaded once for the QR queries. Only the first nr rows
// and ncv vectors of keys are computed, the others left 0 (unused or masked
// by the caller): inlined twice, with the constants QR and BKV / VEC for
// full blocks, and the block's own counts for a short one.
static inline __attribute__((always_inline)) void
qk(vf sv[QR][BKV / VEC], const float *kt, const float *qs, int64_t D,
   int64_t Dp, int nr, int ncv) {
  for (int r = 0; r < QR; r++)
    for (int c = 0; c < BKV / VEC; c++)
      sv[r][c] = (vf){0};
  for (int64_t x = 0; x < D; x++) {
    vf kx[BKV / VEC];
    for (int c = 0; c < BKV / VEC; c++)
      if (c < ncv)
        kx[c] = vload(kt + x * BKV + c * VEC);
    for (int r = 0; r < QR; r++) {
      if (r >= nr)
        break;
      vf qx = (vf){0} + qs[r * Dp + x];
      for (int c = 0; c < BKV / VEC; c++)
        if (c < ncv)
          sv[r][c] += qx * kx[c];
    }
  }
}

// The direct path (seqlen <= SMALL): per (sequence, q head, query) an
// online softmax over its keys, a head_dim row at a time, no buffers but
// two rows of head_dim floats (on the stack: the caller sends only head_dim
// up to DIRECT_MAXD here).
#define DIRECT_MAXD 256
static void attn_direct(const uint16_t *restrict q, const uint16_t *restrict k,
                        const uint16_t *restrict v, uint16_t *restrict o,
                        int64_t batch, int64_t heads_q, int64_t heads_kv,
                        int64_t seqlen, int64_t D, float scale) {
  int64_t group = heads_q / heads_kv;
  float qf[DIRECT_MAXD], acc[DIRECT_MAXD];
  for (int64_t b = 0; b < batch; b++)
    for (int64_t h = 0; h < heads_q; h++) {
      const uint16_t *kh = k + (b * heads_kv + h / group) * seqlen * D;
      const uint16_t *vh = v + (b * heads_kv + h / group) * seqlen * D;
      for (int64_t i = 0; i < seqlen; i++) {
        const uint16_t *qi = q + ((b * heads_q + h) * seqlen + i) * D;
        for (int64_t x = 0; x < D; x++) {
          qf[x] = bf(qi[x]) * scale;
          acc[x] = 0;
        }
        float m = -INFINITY, l = 0;
        for (int64_t j = 0; j <= i; j++) {
          float sc = 0;
          for (int64_t x = 0; x < D; x++)
            sc += qf[x] * bf(kh[j * D + x]);
          float mn = sc > m ? sc : m, a = expf(m - mn), p = expf(sc - mn);
          l = l * a + p;
          m = mn;
          for (int64_t x = 0; x < D; x++)
            acc[x] = acc[x] * a + p * bf(vh[j * D + x]);
        }
        uint16_t *oi = o + ((b * heads_q + h) * seqlen + i) * D;
        for (int64_t x = 0; x < D; x++)
          oi[x] = to_bf(acc[x] / l);
      }
    }
}

// The tasks of one thread of the team, or all of them when called outside a
// parallel region (the `omp for` is then orphaned and runs every iteration
// in the caller).
static void attn_tasks(const uint16_t *restrict q, const uint16_t *restrict k,
                       const uint16_t *restrict v, uint16_t *restrict o,
                       int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t seqlen, int64_t D, int64_t Dp, float scale) {
  int64_t group = heads_q / heads_kv;
  int64_t nqb = (seqlen + BQ - 1) / BQ, ntask = batch * heads_q * nqb;
  // per-thread buffers on the stack up to head_dim 256 (2 x 32 KiB at
  // BQ = BKV = 64 for each of the four; a small call then costs no
  // allocation), on the heap past it
  const int on_stack = Dp <= 256;
  float stk[on_stack ? 2 * (BQ + BKV) * Dp : 1] __attribute__((aligned(64)));
  float *heap = on_stack ? NULL : malloc((size_t)(2 * (BQ + BKV) * Dp) * 4);
  float *qs = on_stack ? stk : heap;
  if (!qs)
    abort(); // the judge reports the failed allocation
  float *kt = qs + BQ * Dp, *vb = kt + Dp * BKV, *acc = vb + BKV * Dp;
  // V's padding lanes (head_dim up to Dp) are 0, so O's stay finite; the
  // rest is written before it is read (K^T columns past a short block's
  // keys are masked to -inf, Q rows past a block's queries are unused)
  if (Dp != D)
    memset(vb, 0, (size_t)(BKV * Dp) * 4);
  float s[BQ][BKV] __attribute__((aligned(64)));
  float mrow[BQ], lrow[BQ];
  KS_PRAGMA(omp for schedule(KS_KIND))
  for (int64_t t = 0; t < ntask; t++) {
    // last query blocks first: they cost the most (causal), so the guided
    // and dynamic schedules balance better
    int64_t qb = nqb - 1 - t % nqb, bh = t / nqb;
    int64_t b = bh / heads_q, h = bh % heads_q, g = h / group;
    const uint16_t *qh = q + (b * heads_q + h) * seqlen * D;
    const uint16_t *kh = k + (b * heads_kv + g) * seqlen * D;
    const uint16_t *vh = v + (b * heads_kv + g) * seqlen * D;
    uint16_t *oh = o + (b * heads_q + h) * seqlen * D;
    int64_t i0 = qb * BQ, nq = seqlen - i0 < BQ ? seqlen - i0 : BQ;
    for (int64_t i = 0; i < nq; i++) {
      for (int64_t x = 0; x < D; x++)
        qs[i * Dp + x] = bf(qh[(i0 + i) * D + x]) * scale;
      for (int64_t x = 0; x < Dp; x++)
        acc[i * Dp + x] = 0;
      mrow[i] = -INFINITY;
      lrow[i] = 0;
    }
    int64_t jend = i0 + nq; // keys 0 .. last query of the block
    for (int64_t j0 = 0; j0 < jend; j0 += BKV) {
      int64_t nk = jend - j0 < BKV ? jend - j0 : BKV;
      // only the nk keys: scores past them are masked, their V rows never
      // read; V's padding lanes stay the zeros set above
      for (int64_t j = 0; j < nk; j++)
        for (int64_t x = 0; x < D; x++) {
          kt[x * BKV + j] = bf(kh[(j0 + j) * D + x]);
          vb[j * Dp + x] = bf(vh[(j0 + j) * D + x]);
        }
      for (int64_t i = 0; i < nq; i += QR) {
        int64_t nr = nq - i < QR ? nq - i : QR; // queries of this group
        int64_t qlast = i0 + i + nr - 1;
        if (qlast < j0)
          continue; // every key of this block is in the group's future
        // scores of QR queries at once: each K^T row is loaded once
        // (rows of qs past nq hold whatever was there; unused)
        vf sv[QR][BKV / VEC];
        const int ncv = (int)((nk + VEC - 1) / VEC); // vectors holding keys
        if (ncv == BKV / VEC && nr == QR)
          qk(sv, kt, qs + i * Dp, D, Dp, QR, BKV / VEC);
        else // a short block (the last one, or a short sequence)
          qk(sv, kt, qs + i * Dp, D, Dp, (int)nr, ncv);
        float alpha[QR];
        for (int r = 0; r < QR; r++) {
          float *sr = s[i + r];
          int64_t qi = i0 + i + r;
          // visible keys of this query in this block (none: its p row is
          // 0 and its state stays; also the group's unused rows)
          int64_t lim = qi - j0 + 1 < nk ? qi - j0 + 1 : nk;
          if (r >= nr || lim <= 0) {
            for (int64_t j = 0; j < BKV; j++)
              sr[j] = 0;
            alpha[r] = 1;
            continue;
          }
          float bmax = -INFINITY;
          if (lim >= BKV) { // every key visible: the max in registers
            vf mx = sv[r][0];
            for (int c = 1; c < BKV / VEC; c++) {
              vi gt = sv[r][c] > mx;
              mx = (vf)(((vi)sv[r][c] & gt) | ((vi)mx & ~gt));
            }
            for (int e = 0; e < VEC; e++)
              bmax = mx[e] > bmax ? mx[e] : bmax;
          } else { // the diagonal block: keys past the query masked
            for (int c = 0; c < BKV / VEC; c++)
              vstore(sr + c * VEC, sv[r][c]);
            for (int64_t j = 0; j < BKV; j++) {
              if (j >= lim)
                sr[j] = -INFINITY;
              else if (sr[j] > bmax)
                bmax = sr[j];
            }
            for (int c = 0; c < BKV / VEC; c++)
              sv[r][c] = vload(sr + c * VEC);
          }
          int64_t ir = i + r;
          float mnew = bmax > mrow[ir] ? bmax : mrow[ir];
          alpha[r] = expf(mrow[ir] - mnew); // 0 on the first block
          vf mv = (vf){0} + mnew, lsum = (vf){0};
          for (int c = 0; c < BKV / VEC; c++) {
            vf p = vexp(sv[r][c] - mv); // masked: 0
            lsum += p;
            vstore(sr + c * VEC, p);
          }
          float l = 0;
          for (int e = 0; e < VEC; e++)
            l += lsum[e];
          lrow[ir] = lrow[ir] * alpha[r] + l;
          mrow[ir] = mnew;
        }
        // O = alpha O + P V for the group, 2 vectors of head_dim at a
        // time in registers: each V row is loaded once for QR queries
        int64_t jmax = qlast - j0 + 1 < nk ? qlast - j0 + 1 : nk;
        for (int64_t x = 0; x < Dp; x += 2 * VEC) {
          vf a0[QR], a1[QR];
          for (int r = 0; r < QR; r++) {
            float *ai = acc + (i + r) * Dp + x;
            a0[r] = vload(ai) * alpha[r];
            a1[r] = vload(ai + VEC) * alpha[r];
          }
          for (int64_t j = 0; j < jmax; j++) {
            const float *vj = vb + j * Dp + x;
            vf v0 = vload(vj), v1 = vload(vj + VEC);
            for (int r = 0; r < QR; r++) {
              vf pj = (vf){0} + s[i + r][j];
              a0[r] += pj * v0;
              a1[r] += pj * v1;
            }
          }
          for (int r = 0; r < QR; r++) {
            float *ai = acc + (i + r) * Dp + x;
            vstore(ai, a0[r]);
            vstore(ai + VEC, a1[r]);
          }
        }
      }
    }
    for (int64_t i = 0; i < nq; i++) {
      float inv = 1.0f / lrow[i];
      for (int64_t x = 0; x < D; x++)
        oh[(i0 + i) * D + x] = to_bf(acc[i * Dp + x] * inv);
    }
  }
  free(heap);
}

void attention_prefill(const uint16_t *restrict q, const uint16_t *restrict k,
                       const uint16_t *restrict v, uint16_t *restrict o,
                       int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t seqlen, int64_t head_dim) {
  int64_t D = head_dim;
  // head_dim padded to whole pairs of vectors (the P V register tile)
  int64_t Dp = (D + 2 * VEC - 1) / (2 * VEC) * (2 * VEC);
  float scale = 1.0f / sqrtf((float)D);
  if (seqlen <= SMALL && D <= DIRECT_MAXD) {
    attn_direct(q, k, v, o, batch, heads_q, heads_kv, seqlen, D, scale);
    return;
  }
  int64_t nqb = (seqlen + BQ - 1) / BQ, ntask = batch * heads_q * nqb;
  if (ntask > 1 && seqlen * seqlen * D * heads_q * batch > (1 << 16)) {
#pragma omp parallel
    attn_tasks(q, k, v, o, batch, heads_q, heads_kv, seqlen, D, Dp, scale);
  } else // a small call: no team (a serialized parallel region cost ~1.4 us)
    attn_tasks(q, k, v, o, batch, heads_q, heads_kv, seqlen, D, Dp, scale);
}
