// ksearch: backend=c entry=softmax
// ksearch: family=online_two_pass
// ksearch: concepts=online_softmax,simd_vectorization,multi_accumulator,loop_unrolling,fast_exp_poly,thread_parallel,omp_schedule
// ksearch: param VEC in 8,16,4
// ksearch: param NACC in 4,2,8
// ksearch: param UNROLL in 2,1,4
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,16
//
// Template for tasks/softmax, family online_two_pass: pass 1 reads the row
// once and keeps, per SIMD lane, a running max m and a running sum s of
// exp(x - m); when a group of NACC vectors raises a lane's max, that lane's
// sum is rescaled by exp(m_old - m_new) first (online softmax). The lanes
// are merged at the end with exp(m_lane - max). Pass 2 writes
// exp(x - max) / sum. Two reads of x instead of three (DESIGN.md: Candidate
// file; parameters arrive as -D macros).
//   VEC    floats per SIMD vector (GCC vector extensions)
//   NACC   vectors per online update (one max test and rescale per group)
//   UNROLL vectors per iteration of the output pass
//   SCHED  OpenMP schedule over rows: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in rows; 0 = the schedule's default
#include <float.h>
#include <math.h>
#include <stdint.h>

#ifndef VEC
#define VEC 8
#endif
#ifndef NACC
#define NACC 4
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef CHUNK
#define CHUNK 0
#endif
_Static_assert(VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 4, 8 or 16");
_Static_assert(NACC >= 1 && NACC <= 8, "NACC must be 1..8");
_Static_assert(UNROLL >= 1 && UNROLL <= 8, "UNROLL must be 1..8");

// Float sums are moved into double every BLOCK columns, so long rows keep
// float-level accuracy; a multiple of every VEC*NACC.
#define BLOCK 1024
// Below this many elements the whole call runs on the calling thread: even
// waking the OpenMP team costs more than the work.
#define SERIAL_BELOW 65536

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
#define KS_OMP_PARALLEL_FOR KS_PRAGMA(omp parallel for KS_SCHEDULE)

// ---- SIMD helpers: GCC vector extensions, VEC floats wide ---------------
typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));
typedef double vd __attribute__((vector_size(VEC * 8)));

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
// Mask of the last n (0 < n < VEC) lanes.
static inline vi tail_mask(int64_t n) {
  vi lane;
  for (int i = 0; i < VEC; i++)
    lane[i] = i;
  return lane >= (vi){0} + (int32_t)(VEC - n);
}
// Elements [c, cols) of a row (0 < cols - c < VEC) for a reduction, the
// other lanes `fill`; which lanes hold them is unspecified. A row of at
// least VEC floats gives one overlapping load of its last VEC floats,
// masked; shorter rows go through the lane-by-lane copy.
static inline vf vload_rest(const float *row, int64_t c, int64_t cols,
                            float fill) {
  if (cols >= VEC)
    return vsel(tail_mask(cols - c), vload(row + cols - VEC), vsplat(fill));
  return vload_part(row + c, cols - c, fill);
}
static inline vf vmax(vf a, vf b) { return vsel(a > b, a, b); }
static inline float hmax(vf v) {
  float m = v[0];
  for (int i = 1; i < VEC; i++)
    m = v[i] > m ? v[i] : m;
  return m;
}
static inline double hsum_d(const vd *v) {
  double s = 0.0;
  for (int i = 0; i < VEC; i++)
    s += (*v)[i];
  return s;
}
static inline vd vwiden(vf v) { return __builtin_convertvector(v, vd); }

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

// ---- the kernel ----------------------------------------------------------
// Running state of pass 1, per lane: max m, float sum s of exp(x - m) since
// the last flush, double sum tot of the flushed part (same scale as s).
typedef struct {
  vf m, s;
  vd tot;
} online_t;

static inline int any_lane(vi mask) {
  int a = 0;
  for (int i = 0; i < VEC; i++)
    a |= mask[i];
  return a != 0;
}

// Folds n vectors xs[0..n) into st.
static inline void online_update(online_t *st, const vf *xs, int n) {
  vf bm = xs[0];
  for (int k = 1; k < n; k++)
    bm = vmax(bm, xs[k]);
  if (any_lane(bm > st->m)) {
    // m starts at -FLT_MAX, not -inf, so m - m_new is never inf - inf.
    vf mn = vmax(st->m, bm);
    vf scale = vexp(st->m - mn);
    st->s *= scale;
    st->tot *= vwiden(scale);
    st->m = mn;
  }
  vf e = vexp(xs[0] - st->m);
  for (int k = 1; k < n; k++)
    e += vexp(xs[k] - st->m);
  st->s += e;
}

static inline void softmax_row(const float *restrict xr, float *restrict yr,
                               int64_t cols) {
  online_t st;
  st.m = vsplat(-FLT_MAX);
  st.s = vsplat(0.0f);
  st.tot = (vd){0};
  int64_t c = 0, flush = BLOCK;
  for (; c + VEC * NACC <= cols; c += VEC * NACC) {
    vf xs[NACC];
    for (int k = 0; k < NACC; k++)
      xs[k] = vload(xr + c + k * VEC);
    online_update(&st, xs, NACC);
    if (c + VEC * NACC >= flush) {
      st.tot += vwiden(st.s);
      st.s = vsplat(0.0f);
      flush += BLOCK;
    }
  }
  for (; c + VEC <= cols; c += VEC) {
    vf x1 = vload(xr + c);
    online_update(&st, &x1, 1);
  }
  if (c < cols) { // padding lanes are -inf: exp gives 0, the max ignores them
    vf x1 = vload_rest(xr, c, cols, -INFINITY);
    online_update(&st, &x1, 1);
  }
  st.tot += vwiden(st.s);
  // Merge the lanes: sum_l tot_l * exp(m_l - max).
  float mx = hmax(st.m);
  double sum = 0.0;
  for (int i = 0; i < VEC; i++)
    sum += st.tot[i] * exp((double)st.m[i] - (double)mx);
  vf vm = vsplat(mx);
  vf vinv = vsplat((float)(1.0 / sum));
  c = 0;
  for (; c + VEC * UNROLL <= cols; c += VEC * UNROLL)
    for (int k = 0; k < UNROLL; k++)
      vstore(yr + c + k * VEC, vexp(vload(xr + c + k * VEC) - vm) * vinv);
  for (; c + VEC <= cols; c += VEC)
    vstore(yr + c, vexp(vload(xr + c) - vm) * vinv);
  if (c < cols && cols >= VEC) { // the last VEC columns again, overlapping
    c = cols - VEC;
    vstore(yr + c, vexp(vload(xr + c) - vm) * vinv);
  } else if (c < cols)
    vstore_part(yr + c, vexp(vload_part(xr + c, cols - c, 0.0f) - vm) * vinv,
                cols - c);
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return;
  if (rows == 1 || rows * cols <= SERIAL_BELOW) {
    for (int64_t r = 0; r < rows; r++)
      softmax_row(x + r * cols, y + r * cols, cols);
    return;
  }
  KS_OMP_PARALLEL_FOR
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
}
