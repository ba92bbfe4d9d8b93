// ksearch: backend=c entry=selective_scan
// ksearch: family=chunked
// ksearch: concepts=chunked_scan,fast_exp_poly,state_in_registers,simd_vectorization,thread_parallel,omp_schedule
// ksearch: param TCHUNK in 64,16,32,128,256
// ksearch: param VEC in 8,16,4
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,4
//
// Template for tasks/selective_scan (Mamba-1), family chunked: one (b, d)
// row per OpenMP iteration, time cut into chunks of TCHUNK steps. Per chunk,
// (1) softplus(delta) and dt*u are computed VEC time steps at a time,
// (2) the recurrence runs step by step with the 16-wide state in registers
// (carried from chunk to chunk) and stores <h, C[t]>, (3) the D skip term
// and the silu gate are applied VEC time steps at a time. Everything but the
// recurrence is vectorized over time; exp/log are branch-free Cephes
// polynomials. B and C are transposed once to [t][n] (DESIGN.md: Candidate
// file; parameters arrive as -D macros).
//   TCHUNK time steps per chunk (stack buffers of TCHUNK floats)
//   VEC    floats per SIMD vector; the state is 16/VEC vectors
//   SCHED  OpenMP schedule over (b, d) rows: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in rows; 0 = the schedule's default
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define DSTATE 16
#ifndef VEC
#define VEC 8
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
_Static_assert(VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 4, 8 or 16");
_Static_assert(TCHUNK >= 16 && TCHUNK <= 4096, "TCHUNK must be 16..4096");
// The 16-wide state is NV vectors of VEC floats.
#define NV (DSTATE / VEC)
// Below this many (b, d, t) elements the whole call runs on the calling
// thread: even waking the OpenMP team costs more than the work.
#define SERIAL_BELOW 16384

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
// apart. They are transposed once per call to [b][t][n] (shared by every
// channel d), in tiles of TTILE steps, by all threads. If that buffer cannot
// be allocated the scan reads them strided (slower, still right).
#define TTILE 64
static inline void transpose_bc(const float *restrict B,
                                const float *restrict C, float *restrict bt,
                                float *restrict ct, int64_t batch,
                                int64_t seqlen) {
  int64_t ntile = (seqlen + TTILE - 1) / TTILE;
#pragma omp for schedule(static)
  for (int64_t it = 0; it < batch * ntile; it++) {
    int64_t b = it / ntile, t0 = (it % ntile) * TTILE;
    int64_t t1 = t0 + TTILE < seqlen ? t0 + TTILE : seqlen;
    const float *Bn = B + b * DSTATE * seqlen, *Cn = C + b * DSTATE * seqlen;
    float *bo = bt + b * seqlen * DSTATE, *co = ct + b * seqlen * DSTATE;
    for (int n = 0; n < DSTATE; n++)
      for (int64_t t = t0; t < t1; t++) {
        bo[t * DSTATE + n] = Bn[n * seqlen + t];
        co[t * DSTATE + n] = Cn[n * seqlen + t];
      }
  }
}

// Where B or C of one batch lives: value (t, n) is at p[t * ts + n * sn].
typedef struct {
  const float *p;
  int64_t ts, sn;
} bc_view;

static inline bc_view bc_of(const float *restrict tr,
                            const float *restrict orig, int64_t b,
                            int64_t seqlen) {
  bc_view v;
  if (tr) {
    v.p = tr + b * seqlen * DSTATE;
    v.ts = DSTATE;
    v.sn = 1;
  } else {
    v.p = orig + b * DSTATE * seqlen;
    v.ts = 1;
    v.sn = seqlen;
  }
  return v;
}

// State vector k (n = k*VEC .. k*VEC+VEC-1) of B or C at step t.
static inline vf bc_load(bc_view v, int64_t t, int k) {
  const float *p = v.p + t * v.ts + k * VEC * v.sn;
  if (v.sn == 1)
    return vload(p);
  float tmp[VEC];
  for (int i = 0; i < VEC; i++)
    tmp[i] = p[i * v.sn];
  return vload(tmp);
}

// ---- the kernel ----------------------------------------------------------
// One (b, d) row: all seqlen steps, TCHUNK at a time.
static void scan_row(const float *restrict u, const float *restrict delta,
                     const float *restrict Ad, bc_view Bv, bc_view Cv, float Dd,
                     const float *restrict z, float *restrict out,
                     int64_t seqlen, int32_t sp) {
  vf h[NV], a[NV];
  for (int k = 0; k < NV; k++) {
    h[k] = vsplat(0.0f);
    a[k] = vload(Ad + k * VEC);
  }
  float dt[TCHUNK], dtu[TCHUNK], yv[TCHUNK];
  const vf vD = vsplat(Dd), one = vsplat(1.0f);
  for (int64_t tc = 0; tc < seqlen; tc += TCHUNK) {
    int nt = seqlen - tc < TCHUNK ? (int)(seqlen - tc) : TCHUNK;
    // (1) dt and dt*u, VEC steps at a time; the last vector may be partial.
    for (int i = 0; i < nt; i += VEC) {
      int n = nt - i < VEC ? nt - i : VEC;
      vf dv = n == VEC ? vload(delta + tc + i)
                       : vload_part(delta + tc + i, n, 0.0f);
      vf uv = n == VEC ? vload(u + tc + i) : vload_part(u + tc + i, n, 0.0f);
      if (sp)
        dv = vsoftplus(dv);
      vstore(dt + i, dv); // buffers hold TCHUNK, a multiple of VEC
      vstore(dtu + i, dv * uv);
    }
    // (2) the recurrence.
    for (int i = 0; i < nt; i++) {
      int64_t t = tc + i;
      vf vdt = vsplat(dt[i]), vdtu = vsplat(dtu[i]), acc = vsplat(0.0f);
      for (int k = 0; k < NV; k++) {
        h[k] = vexp(vdt * a[k]) * h[k] + vdtu * bc_load(Bv, t, k);
        acc += h[k] * bc_load(Cv, t, k);
      }
      yv[i] = hsum(acc);
    }
    // (3) out = (y + D*u) * z * sigmoid(z), VEC steps at a time.
    for (int i = 0; i < nt; i += VEC) {
      int n = nt - i < VEC ? nt - i : VEC;
      vf zv = n == VEC ? vload(z + tc + i) : vload_part(z + tc + i, n, 0.0f);
      vf uv = n == VEC ? vload(u + tc + i) : vload_part(u + tc + i, n, 0.0f);
      vf o = (vload(yv + i) + vD * uv) * (zv / (one + vexp(-zv)));
      if (n == VEC)
        vstore(out + tc + i, o);
      else
        vstore_part(out + tc + i, o, n);
    }
  }
}

// Run by every thread of the team (or by the caller alone): the
// transposition, then the (b, d) rows shared out by the scheduled `omp for`.
static void scan_all(const float *restrict u, const float *restrict delta,
                     const float *restrict A, const float *restrict B,
                     const float *restrict C, const float *restrict D,
                     const float *restrict z, float *restrict out,
                     int64_t batch, int64_t dim, int64_t seqlen, int32_t sp,
                     float *restrict bt, float *restrict ct) {
  if (bt)
    transpose_bc(B, C, bt, ct, batch, seqlen); // ends with a barrier
  KS_OMP_FOR
  for (int64_t bd = 0; bd < batch * dim; bd++) {
    int64_t b = bd / dim, d = bd % dim, row = bd * seqlen;
    scan_row(u + row, delta + row, A + d * DSTATE, bc_of(bt, B, b, seqlen),
             bc_of(ct, C, b, seqlen), D[d], z + row, out + row, seqlen, sp);
  }
}

void selective_scan(const float *restrict u, const float *restrict delta,
                    const float *restrict A, const float *restrict B,
                    const float *restrict C, const float *restrict D,
                    const float *restrict z, float *restrict out, int64_t batch,
                    int64_t dim, int64_t seqlen, int32_t delta_softplus) {
  if (batch <= 0 || dim <= 0 || seqlen <= 0)
    return;
  size_t nbc = (size_t)(batch * seqlen) * DSTATE;
  float *bt = malloc(2 * nbc * sizeof(float)); // NULL: read B, C strided
  float *ct = bt ? bt + nbc : NULL;
  if (batch * dim * seqlen <= SERIAL_BELOW) {
    // The orphaned `omp for` loops inside run on this thread alone.
    scan_all(u, delta, A, B, C, D, z, out, batch, dim, seqlen, delta_softplus,
             bt, ct);
  } else {
#pragma omp parallel
    scan_all(u, delta, A, B, C, D, z, out, batch, dim, seqlen, delta_softplus,
             bt, ct);
  }
  free(bt);
}
