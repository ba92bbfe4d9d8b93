// ksearch: backend=c entry=selective_scan
// ksearch: family=dim_blocked
// ksearch: concepts=row_blocking,chunked_scan,fast_exp_poly,state_in_registers,simd_vectorization,thread_parallel,omp_schedule
// ksearch: param DBLOCK in 4,2,8
// ksearch: param VEC in 8,16,4
// ksearch: param TCHUNK in 64,32,128
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,4
// ksearch: param TSPLIT in 0,1
//
// Template for tasks/selective_scan (Mamba-1), family dim_blocked: DBLOCK
// channels d of one batch go through time together. Each step loads B[t]
// and C[t] (16 values each, shared by every channel) once for the whole
// block, and the DBLOCK recurrences are independent chains that hide each
// other's latency. Each channel keeps its 16-wide state in NV = 16/VEC SIMD
// registers. Time goes in chunks of TCHUNK steps so that softplus(delta),
// dt*u and the output gate are computed VEC steps at a time per channel
// (as in the chunked family); exp/log are branch-free Cephes polynomials.
// Leftover channels (dim % DBLOCK) go one at a time. Sequences shorter
// than VEC put VEC channels in the lanes instead (scan_lanes). B and C are
// copied to [t][n] tiles per chunk, on the stack: no heap allocation
// (DESIGN.md: Candidate file; parameters arrive as -D macros).
//   DBLOCK channels per block (one OpenMP iteration)
//   VEC    floats per SIMD vector; the state is 16/VEC vectors
//   TCHUNK time steps per chunk (stack buffers of DBLOCK*TCHUNK floats)
//   SCHED  OpenMP schedule over channel blocks: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in blocks; 0 = the schedule's default
//   TSPLIT 1: with fewer rows than threads, split each row's time across
//          the team (scan_segment); pays off only where waking the team is
//          cheap next to the row
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#define DSTATE 16
#ifndef VEC
#define VEC 8
#endif
#ifndef DBLOCK
#define DBLOCK 4
#endif
#ifndef TCHUNK
#define TCHUNK 64
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef CHUNK
#define CHUNK 0
#endif
#ifndef TSPLIT
#define TSPLIT 0
#endif
_Static_assert(VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 4, 8 or 16");
_Static_assert(DBLOCK >= 1 && DBLOCK <= 16, "DBLOCK must be 1..16");
_Static_assert(TCHUNK >= 16 && TCHUNK <= 1024, "TCHUNK must be 16..1024");
// The 16-wide state is NV vectors of VEC floats.
#define NV (DSTATE / VEC)
// Below this many (b, d, t) elements the whole call runs on the calling
// thread: even waking the OpenMP team costs more than the work.
#define SERIAL_BELOW 16384
// Fewer (b, d) rows than threads and at least this many steps per thread:
// the team splits each row's time instead (scan_segment).
#define SPLIT_STEPS 1024
#define MAX_SPLIT 64

_Static_assert(TCHUNK % VEC == 0, "TCHUNK must be a multiple of VEC");

// ---- OpenMP schedule from SCHED and CHUNK --------------------------------
#define KS_STR_(x) #x
#define KS_PRAGMA(x) _Pragma(KS_STR_(x))
#if SCHED == 0
#define KS_KIND static
#elif SCHED == 1
#define KS_KIND dynamic
#elif SCHED == 2
#define KS_KIND guided
#else
#error "SCHED must be 0 (static), 1 (dynamic) or 2 (guided)"
#endif
#if CHUNK > 0
#define KS_SCHEDULE schedule(KS_KIND, CHUNK)
#else
#define KS_SCHEDULE schedule(KS_KIND)
#endif
#define KS_OMP_FOR KS_PRAGMA(omp for KS_SCHEDULE)

// ---- SIMD helpers: GCC vector extensions, VEC floats wide ---------------
typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));

static inline vf vsplat(float a) { return (vf){0} + a; }
// Unaligned loads and stores; the compiler turns these into vmovups.
static inline vf vload(const float *p) {
  vf v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
static inline void vstore(float *p, vf v) { __builtin_memcpy(p, &v, sizeof v); }
// The first n (< VEC) lanes from p, the others `fill`: row tails without
// reading past the end.
static inline vf vload_part(const float *p, int64_t n, float fill) {
  float t[VEC];
  for (int i = 0; i < VEC; i++)
    t[i] = i < n ? p[i] : fill;
  return vload(t);
}
static inline void vstore_part(float *p, vf v, int64_t n) {
  float t[VEC];
  vstore(t, v);
  for (int64_t i = 0; i < n; i++)
    p[i] = t[i];
}
static inline vf vsel(vi m, vf a, vf b) {
  return (vf)((m & (vi)a) | (~m & (vi)b));
}
static inline vf vmin(vf a, vf b) { return vsel(a < b, a, b); }
// Horizontal sum as a tree (halves added pairwise): shorter dependency
// chain than a left-to-right sum.
static inline float hsum(vf v) {
  float t[VEC];
  vstore(t, v);
  for (int w = VEC / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; i++)
      t[i] += t[i + w];
  return t[0];
}

// exp(x) lane-wise to ~2 ulp (Cephes expf); 0 below the float normal range,
// so exp(-inf) = 0. Branch-free, no -ffast-math needed.
static inline vf vexp(vf x) {
  const vf lo = vsplat(-87.33654f), hi = vsplat(88.0f);
  vi below = x < lo;
  vf xc = vsel(below, lo, x);
  xc = vsel(xc > hi, hi, xc);
  // Round x*log2(e) to the nearest integer with the 1.5*2^23 trick.
  vf kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  vf r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  vf p = vsplat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  vi k = __builtin_convertvector(kf, vi);
  vf scale = (vf)((k + 127) << 23);
  return (vf)((vi)(p * scale) & ~below);
}

// log(x) lane-wise for finite x >= 1 (Cephes logf), ~1 ulp.
static inline vf vlog_ge1(vf x) {
  vi bits = (vi)x;
  vf e = __builtin_convertvector(((bits >> 23) & 0xff) - 126, vf);
  vf m = (vf)((bits & ~0x7f800000) | 0x3f000000); // mantissa in [0.5, 1)
  vi small = m < vsplat(0.707106781186547524f);
  e = vsel(small, e - 1.0f, e);
  m = vsel(small, m + m - 1.0f, m - 1.0f);
  vf z = m * m;
  vf p = vsplat(7.0376836292e-2f);
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  vf yv = p * m * z;
  yv = yv + e * -2.12194440e-4f;
  yv = yv - 0.5f * z;
  return m + yv + e * 0.693359375f;
}

// softplus lane-wise, branch-free: both sides of each select are computed
// (the unused side may be inf or NaN; it is never selected).
static inline vf vsoftplus(vf v) {
  const vf lim = vsplat(20.0f), one = vsplat(1.0f);
  vf e = vexp(vmin(v, lim));
  vf w = one + e;
  vf l = vsel(w == one, e, vlog_ge1(w) * (e / (w - one)));
  return vsel(v > lim, v, l);
}

// ---- B and C layout ------------------------------------------------------
// B and C are [b][n][t]: the 16 values one time step needs are seqlen
// apart. Per time chunk, the block copies them into [t][n] tiles on its
// stack (16 contiguous reads per tile, each TCHUNK long), shared by all its
// channels. A whole-array transposition up front cost more than the scan on
// long sequences with few channels (page faults of a fresh buffer, one TLB
// miss per strided write) and needed a heap allocation per call.
// 8x8 transposes in registers, whatever VEC is: three rounds of two-source
// shuffles, each swapping the off-diagonal halves of 2^s x 2^s blocks.
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

static inline void transpose8(v8f r[8]) {
  const v8i lo1 = {0, 8, 2, 10, 4, 12, 6, 14},
            hi1 = {1, 9, 3, 11, 5, 13, 7, 15};
  const v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13},
            hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
  const v8i lo4 = {0, 1, 2, 3, 8, 9, 10, 11},
            hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
  for (int i = 0; i < 8; i += 2) {
    v8f x = r[i], y = r[i + 1];
    r[i] = __builtin_shuffle(x, y, lo1);
    r[i + 1] = __builtin_shuffle(x, y, hi1);
  }
  for (int i = 0; i < 8; i += 4)
    for (int j = i; j < i + 2; j++) {
      v8f x = r[j], y = r[j + 2];
      r[j] = __builtin_shuffle(x, y, lo2);
      r[j + 2] = __builtin_shuffle(x, y, hi2);
    }
  for (int j = 0; j < 4; j++) {
    v8f x = r[j], y = r[j + 4];
    r[j] = __builtin_shuffle(x, y, lo4);
    r[j + 4] = __builtin_shuffle(x, y, hi4);
  }
}

// Rows n0..n0+7 of src ([n][t], seqlen apart), steps tc..tc+nt-1, into
// dst[t][n]: 8x8 blocks through registers, the last nt % 8 steps one by one.
static inline void tile8(const float *restrict src, int64_t seqlen, int64_t tc,
                         int nt, int n0, float *restrict dst) {
  int i = 0;
  for (; i + 8 <= nt; i += 8) {
    v8f r[8];
    for (int k = 0; k < 8; k++)
      __builtin_memcpy(&r[k], src + (n0 + k) * seqlen + tc + i, sizeof r[k]);
    transpose8(r);
    for (int k = 0; k < 8; k++)
      __builtin_memcpy(dst + (i + k) * DSTATE + n0, &r[k], sizeof r[k]);
  }
  for (; i < nt; i++)
    for (int k = 0; k < 8; k++)
      dst[i * DSTATE + n0 + k] = src[(n0 + k) * seqlen + tc + i];
}

static inline void tile_bc(const float *restrict Bb, const float *restrict Cb,
                           int64_t seqlen, int64_t tc, int nt,
                           float *restrict bt, float *restrict ct) {
  // the next chunk's lines: 32 short streams are more than the hardware
  // prefetchers follow, and a cold call would wait on each of them
  for (int n = 0; n < DSTATE && tc + nt < seqlen; n++)
    for (int i = 0; i < TCHUNK; i += 16) {
      __builtin_prefetch(Bb + n * seqlen + tc + TCHUNK + i);
      __builtin_prefetch(Cb + n * seqlen + tc + TCHUNK + i);
    }
  for (int n0 = 0; n0 < DSTATE; n0 += 8) {
    tile8(Bb, seqlen, tc, nt, n0, bt);
    tile8(Cb, seqlen, tc, nt, n0, ct);
  }
}

// ---- the kernel ----------------------------------------------------------
// Channels [d0, d0 + R) of batch b. Always inlined with a constant R, so
// the per-channel state arrays live in registers.
static inline __attribute__((always_inline)) void
scan_rows(const float *restrict u, const float *restrict delta,
          const float *restrict A, const float *restrict Bb,
          const float *restrict Cb, const float *restrict D,
          const float *restrict z, float *restrict out, int64_t b, int64_t dim,
          int64_t d0, int R, int64_t seqlen, int32_t sp) {
  vf h[DBLOCK][NV], a[DBLOCK][NV];
  int64_t row[DBLOCK];
  for (int j = 0; j < R; j++) {
    row[j] = (b * dim + d0 + j) * seqlen;
    for (int k = 0; k < NV; k++) {
      h[j][k] = vsplat(0.0f);
      a[j][k] = vload(A + (d0 + j) * DSTATE + k * VEC);
    }
  }
  float dt[DBLOCK][TCHUNK], dtu[DBLOCK][TCHUNK], yv[DBLOCK][TCHUNK];
  float bt[TCHUNK * DSTATE], ct[TCHUNK * DSTATE];
  const vf one = vsplat(1.0f);
  for (int64_t tc = 0; tc < seqlen; tc += TCHUNK) {
    int nt = seqlen - tc < TCHUNK ? (int)(seqlen - tc) : TCHUNK;
    tile_bc(Bb, Cb, seqlen, tc, nt, bt, ct);
    if (tc + nt < seqlen) // the next chunk of the channels' own rows
      for (int j = 0; j < R; j++)
        for (int i = 0; i < TCHUNK; i += 16) {
          __builtin_prefetch(delta + row[j] + tc + TCHUNK + i);
          __builtin_prefetch(u + row[j] + tc + TCHUNK + i);
          __builtin_prefetch(z + row[j] + tc + TCHUNK + i);
        }
    // (1) dt and dt*u per channel, VEC steps at a time.
    for (int j = 0; j < R; j++) {
      const float *dl = delta + row[j] + tc, *uu = u + row[j] + tc;
      for (int i = 0; i < nt; i += VEC) {
        int n = nt - i < VEC ? nt - i : VEC;
        vf dv = n == VEC ? vload(dl + i) : vload_part(dl + i, n, 0.0f);
        vf uv = n == VEC ? vload(uu + i) : vload_part(uu + i, n, 0.0f);
        if (sp)
          dv = vsoftplus(dv);
        vstore(dt[j] + i, dv); // buffers hold TCHUNK, a multiple of VEC
        vstore(dtu[j] + i, dv * uv);
      }
    }
    // (2) the recurrences, B[t] and C[t] loaded once for all R channels.
    for (int i = 0; i < nt; i++) {
      vf bv[NV], cv[NV];
      for (int k = 0; k < NV; k++) {
        bv[k] = vload(bt + i * DSTATE + k * VEC);
        cv[k] = vload(ct + i * DSTATE + k * VEC);
      }
      for (int j = 0; j < R; j++) {
        vf vdt = vsplat(dt[j][i]), vdtu = vsplat(dtu[j][i]);
        vf acc = vsplat(0.0f);
        for (int k = 0; k < NV; k++) {
          h[j][k] = vexp(vdt * a[j][k]) * h[j][k] + vdtu * bv[k];
          acc += h[j][k] * cv[k];
        }
        yv[j][i] = hsum(acc);
      }
    }
    // (3) out = (y + D*u) * z * sigmoid(z) per channel, VEC steps at a time.
    for (int j = 0; j < R; j++) {
      const float *zz = z + row[j] + tc, *uu = u + row[j] + tc;
      float *oo = out + row[j] + tc;
      vf vD = vsplat(D[d0 + j]);
      for (int i = 0; i < nt; i += VEC) {
        int n = nt - i < VEC ? nt - i : VEC;
        vf zv = n == VEC ? vload(zz + i) : vload_part(zz + i, n, 0.0f);
        vf uv = n == VEC ? vload(uu + i) : vload_part(uu + i, n, 0.0f);
        vf o = (vload(yv[j] + i) + vD * uv) * (zv / (one + vexp(-zv)));
        if (n == VEC)
          vstore(oo + i, o);
        else
          vstore_part(oo + i, o, n);
      }
    }
  }
}

// Short sequences (seqlen < VEC): vectorizing over time would leave most
// lanes empty, so VEC channels go side by side in the lanes instead (nl <=
// VEC of them live), the state is 16 vectors (one per n), and B[t][n],
// C[t][n] are broadcast. The state starts at zero, so the first step needs
// no exp at all: h = dt*u*B.
static void scan_lanes(const float *restrict u, const float *restrict delta,
                       const float *restrict A, const float *restrict Bb,
                       const float *restrict Cb, const float *restrict D,
                       const float *restrict z, float *restrict out, int64_t b,
                       int64_t dim, int64_t d0, int nl, int64_t seqlen,
                       int32_t sp) {
  float tmp[VEC];
  vf h[DSTATE], an[DSTATE];
  for (int n = 0; n < DSTATE; n++) {
    for (int j = 0; j < VEC; j++)
      tmp[j] = j < nl ? A[(d0 + j) * DSTATE + n] : 0.0f;
    an[n] = vload(tmp);
    h[n] = vsplat(0.0f);
  }
  vf Dv = vload_part(D + d0, nl, 0.0f);
  const vf one = vsplat(1.0f);
  int64_t row0 = (b * dim + d0) * seqlen;
  for (int64_t t = 0; t < seqlen; t++) {
    float td[VEC], tu[VEC], tz[VEC];
    for (int j = 0; j < VEC; j++) {
      int64_t at = row0 + j * seqlen + t;
      td[j] = j < nl ? delta[at] : 0.0f;
      tu[j] = j < nl ? u[at] : 0.0f;
      tz[j] = j < nl ? z[at] : 0.0f;
    }
    vf dv = vload(td), uv = vload(tu), zv = vload(tz);
    if (sp)
      dv = vsoftplus(dv);
    vf dtu = dv * uv, y = vsplat(0.0f);
    for (int n = 0; n < DSTATE; n++) {
      vf bn = vsplat(Bb[n * seqlen + t]), cn = vsplat(Cb[n * seqlen + t]);
      h[n] = t ? vexp(dv * an[n]) * h[n] + dtu * bn : dtu * bn;
      y += h[n] * cn;
    }
    vf o = (y + Dv * uv) * (zv / (one + vexp(-zv)));
    vstore(tmp, o);
    for (int j = 0; j < nl; j++)
      out[row0 + j * seqlen + t] = tmp[j];
  }
}

// Time split of one row across the team, for fewer rows than threads. The
// recurrence is linear, so segment [t0, t1) can start from a zero state if
// it also records the decay P_t = a_t0 * ... * a_t and q_t = P_t * C_t:
// once the true state h0 entering the segment is known, the true output is
// y_t = y'_t + <h0, q_t>. The a_t are computed anyway, so the extra cost is
// one multiply and one store per state vector and step, and a light second
// pass; the exps (the expensive part) are not repeated. Segments other than
// the first leave y'_t (before the D skip and the gate) in out.
static void scan_segment(const float *restrict u, const float *restrict delta,
                         const float *restrict Ad, const float *restrict Bb,
                         const float *restrict Cb, float Dd,
                         const float *restrict z, float *restrict out,
                         int64_t seqlen, int64_t t0, int64_t t1, int32_t sp,
                         float *restrict q, float *restrict hend,
                         float *restrict pend) {
  vf h[NV], a[NV], P[NV];
  for (int k = 0; k < NV; k++) {
    h[k] = vsplat(0.0f);
    P[k] = vsplat(1.0f);
    a[k] = vload(Ad + k * VEC);
  }
  float dt[TCHUNK], dtu[TCHUNK], yv[TCHUNK];
  float bt[TCHUNK * DSTATE], ct[TCHUNK * DSTATE];
  const vf one = vsplat(1.0f), vD = vsplat(Dd);
  for (int64_t tc = t0; tc < t1; tc += TCHUNK) {
    int nt = t1 - tc < TCHUNK ? (int)(t1 - tc) : TCHUNK;
    tile_bc(Bb, Cb, seqlen, tc, nt, bt, ct);
    for (int i = 0; i < TCHUNK && tc + nt < t1; i += 16) {
      __builtin_prefetch(delta + tc + TCHUNK + i);
      __builtin_prefetch(u + tc + TCHUNK + i);
      __builtin_prefetch(z + tc + TCHUNK + i);
    }
    for (int i = 0; i < nt; i += VEC) {
      int n = nt - i < VEC ? nt - i : VEC;
      vf dv = n == VEC ? vload(delta + tc + i)
                       : vload_part(delta + tc + i, n, 0.0f);
      vf uv = n == VEC ? vload(u + tc + i) : vload_part(u + tc + i, n, 0.0f);
      if (sp)
        dv = vsoftplus(dv);
      vstore(dt + i, dv);
      vstore(dtu + i, dv * uv);
    }
    for (int i = 0; i < nt; i++) {
      vf vdt = vsplat(dt[i]), vdtu = vsplat(dtu[i]), acc = vsplat(0.0f);
      for (int k = 0; k < NV; k++) {
        vf ak = vexp(vdt * a[k]), cv = vload(ct + i * DSTATE + k * VEC);
        h[k] = ak * h[k] + vdtu * vload(bt + i * DSTATE + k * VEC);
        acc += h[k] * cv;
        if (q) {
          P[k] *= ak;
          vstore(q + (tc + i - t0) * DSTATE + k * VEC, P[k] * cv);
        }
      }
      yv[i] = hsum(acc);
    }
    for (int i = 0; i < nt; i += VEC) {
      int n = nt - i < VEC ? nt - i : VEC;
      vf o = vload(yv + i);
      if (!q) {
        vf zv = n == VEC ? vload(z + tc + i) : vload_part(z + tc + i, n, 0.0f);
        vf uv = n == VEC ? vload(u + tc + i) : vload_part(u + tc + i, n, 0.0f);
        o = (o + vD * uv) * (zv / (one + vexp(-zv)));
      }
      if (n == VEC)
        vstore(out + tc + i, o);
      else
        vstore_part(out + tc + i, o, n);
    }
  }
  for (int k = 0; k < NV; k++) {
    vstore(hend + k * VEC, h[k]);
    vstore(pend + k * VEC, P[k]);
  }
}

// Second pass of a later segment: add <h0, q_t>, the D skip and the gate.
static void finish_segment(const float *restrict u, const float *restrict z,
                           float Dd, float *restrict out, int64_t t0,
                           int64_t t1, const float *restrict q,
                           const float *restrict h0) {
  vf hv[NV];
  for (int k = 0; k < NV; k++)
    hv[k] = vload(h0 + k * VEC);
  const vf one = vsplat(1.0f), vD = vsplat(Dd);
  for (int64_t t = t0; t < t1; t += VEC) {
    int n = t1 - t < VEC ? (int)(t1 - t) : VEC;
    float corr[VEC] = {0};
    for (int i = 0; i < n; i++) {
      vf acc = vsplat(0.0f);
      for (int k = 0; k < NV; k++)
        acc += hv[k] * vload(q + (t + i - t0) * DSTATE + k * VEC);
      corr[i] = hsum(acc);
    }
    vf zv = n == VEC ? vload(z + t) : vload_part(z + t, n, 0.0f);
    vf uv = n == VEC ? vload(u + t) : vload_part(u + t, n, 0.0f);
    vf yv = n == VEC ? vload(out + t) : vload_part(out + t, n, 0.0f);
    vf o = (yv + vload(corr) + vD * uv) * (zv / (one + vexp(-zv)));
    if (n == VEC)
      vstore(out + t, o);
    else
      vstore_part(out + t, o, n);
  }
}

// q for the time split, kept between calls: a fresh buffer of this size
// costs a page fault per 4 KiB on every call.
static float *g_q;
static size_t g_q_floats;

static float *q_buffer(size_t floats) {
  if (g_q_floats < floats) {
    free(g_q);
    g_q = malloc(floats * sizeof(float));
    g_q_floats = g_q ? floats : 0;
  }
  return g_q;
}

// Run by every thread of the team: each (b, d) row in turn, its time split
// into one segment per thread.
static void scan_split(const float *restrict u, const float *restrict delta,
                       const float *restrict A, const float *restrict B,
                       const float *restrict C, const float *restrict D,
                       const float *restrict z, float *restrict out,
                       int64_t batch, int64_t dim, int64_t seqlen, int32_t sp,
                       float *restrict q, float *restrict ends) {
  int T = omp_get_num_threads(), k = omp_get_thread_num();
  int64_t t0 = seqlen * k / T, t1 = seqlen * (k + 1) / T;
  for (int64_t bd = 0; bd < batch * dim; bd++) {
    int64_t b = bd / dim, d = bd % dim, row = bd * seqlen;
    scan_segment(u + row, delta + row, A + d * DSTATE, B + b * DSTATE * seqlen,
                 C + b * DSTATE * seqlen, D[d], z + row, out + row, seqlen, t0,
                 t1, sp, k ? q + t0 * DSTATE : NULL, ends + k * 2 * DSTATE,
                 ends + k * 2 * DSTATE + DSTATE);
#pragma omp barrier
    if (k) {
      // the state entering segment k: fold segments 0 .. k-1 in order
      float h0[DSTATE];
      for (int n = 0; n < DSTATE; n++)
        h0[n] = ends[n];
      for (int j = 1; j < k; j++)
        for (int n = 0; n < DSTATE; n++)
          h0[n] = ends[j * 2 * DSTATE + DSTATE + n] * h0[n] +
                  ends[j * 2 * DSTATE + n];
      finish_segment(u + row, z + row, D[d], out + row, t0, t1, q + t0 * DSTATE,
                     h0);
    }
#pragma omp barrier
  }
}

// Run by every thread of the team (or by the caller alone): the channel
// blocks shared out by the scheduled `omp for`. Per batch: dim / DBLOCK full
// blocks, then dim % DBLOCK single channels.
static void scan_all(const float *restrict u, const float *restrict delta,
                     const float *restrict A, const float *restrict B,
                     const float *restrict C, const float *restrict D,
                     const float *restrict z, float *restrict out,
                     int64_t batch, int64_t dim, int64_t seqlen, int32_t sp) {
  if (seqlen < VEC) { // short sequences: channels in the lanes
    int64_t nb = (dim + VEC - 1) / VEC;
    KS_OMP_FOR
    for (int64_t it = 0; it < batch * nb; it++) {
      int64_t b = it / nb, d0 = (it % nb) * VEC;
      int nl = dim - d0 < VEC ? (int)(dim - d0) : VEC;
      scan_lanes(u, delta, A, B + b * DSTATE * seqlen, C + b * DSTATE * seqlen,
                 D, z, out, b, dim, d0, nl, seqlen, sp);
    }
    return;
  }
  int64_t nfull = dim / DBLOCK, per_batch = nfull + dim % DBLOCK;
  KS_OMP_FOR
  for (int64_t it = 0; it < batch * per_batch; it++) {
    int64_t b = it / per_batch, j = it % per_batch;
    const float *Bb = B + b * DSTATE * seqlen, *Cb = C + b * DSTATE * seqlen;
    if (j < nfull)
      scan_rows(u, delta, A, Bb, Cb, D, z, out, b, dim, j * DBLOCK, DBLOCK,
                seqlen, sp);
    else
      scan_rows(u, delta, A, Bb, Cb, D, z, out, b, dim,
                nfull * DBLOCK + (j - nfull), 1, seqlen, sp);
  }
}

void selective_scan(const float *restrict u, const float *restrict delta,
                    const float *restrict A, const float *restrict B,
                    const float *restrict C, const float *restrict D,
                    const float *restrict z, float *restrict out, int64_t batch,
                    int64_t dim, int64_t seqlen, int32_t delta_softplus) {
  if (batch <= 0 || dim <= 0 || seqlen <= 0)
    return;
  int T = omp_get_max_threads();
  float *q = NULL;
  if (TSPLIT && batch * dim < T && T <= MAX_SPLIT &&
      seqlen >= (int64_t)SPLIT_STEPS * T)
    q = q_buffer((size_t)seqlen * DSTATE);
  if (q) {
    float ends[MAX_SPLIT * 2 * DSTATE]; // per segment: its end state, decay
#pragma omp parallel
    scan_split(u, delta, A, B, C, D, z, out, batch, dim, seqlen, delta_softplus,
               q, ends);
  } else if (batch * dim * seqlen <= SERIAL_BELOW) {
    // The orphaned `omp for` inside runs on this thread alone.
    scan_all(u, delta, A, B, C, D, z, out, batch, dim, seqlen, delta_softplus);
  } else {
#pragma omp parallel
    scan_all(u, delta, A, B, C, D, z, out, batch, dim, seqlen, delta_softplus);
  }
}
