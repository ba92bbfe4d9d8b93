// ksearch: backend=c entry=softmax
// ksearch: family=row_blocked
// ksearch: concepts=row_blocking,single_pass_cache,simd_vectorization,fast_exp_poly,thread_parallel,omp_schedule
// ksearch: param VEC in 8,16,4
// ksearch: param ROWS in 4,2,8
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,16
// ksearch: param EXP in 0,1
//
// Template for tasks/softmax, family row_blocked: ROWS rows go through the
// single_pass_cached steps side by side (max; exp stored in the output row
// and summed; scale by 1/sum). The rows' reductions are independent chains
// advanced column by column, which pays off for many short rows where one
// row's horizontal reductions and loop overheads dominate. Leftover rows
// (rows % ROWS) go one at a time (DESIGN.md: Candidate file; parameters
// arrive as -D macros).
//   VEC    floats per SIMD vector (GCC vector extensions)
//   ROWS   rows per block (one OpenMP iteration)
//   SCHED  OpenMP schedule over row blocks: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in row blocks; 0 = the schedule's default
//   EXP    exp: 0 the portable polynomial; 1 AVX-512's vscalefps and
//          vrndscaleps where VEC is 16 (or 8 with AVX-512VL): the same
//          polynomial with about half the instructions around it
#include <math.h>
#include <stdint.h>

#ifndef VEC
#define VEC 8
#endif
#ifndef ROWS
#define ROWS 4
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef CHUNK
#define CHUNK 0
#endif
#ifndef EXP
#define EXP 0
#endif
_Static_assert(VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 4, 8 or 16");
_Static_assert(ROWS >= 1 && ROWS <= 8, "ROWS must be 1..8");

// Float sums are moved into double every BLOCK columns, so long rows keep
// float-level accuracy; a multiple of every VEC.
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

#if EXP == 1 && defined(__AVX512F__) &&                                        \
    (VEC == 16 || (VEC == 8 && defined(__AVX512VL__)))
// exp(x) lane-wise, EXP=1: n = round(x log2 e) by vrndscaleps, the same
// two-constant reduction and polynomial as below, and 2^n applied by
// vscalefps, which also gives 0 (through denormals) for large negative n:
// no clamps, no exponent-bit arithmetic. x is raised to -104 first so that
// exp(-inf) is 0 (not inf - inf); max keeps a NaN x as NaN.
#include <immintrin.h>
#if VEC == 16
typedef __m512 ev;
#define ev_set1 _mm512_set1_ps
#define ev_max _mm512_max_ps
#define ev_mul _mm512_mul_ps
#define ev_fmadd _mm512_fmadd_ps
#define ev_fnmadd _mm512_fnmadd_ps
#define ev_round(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT)
#define ev_scalef _mm512_scalef_ps
#else
typedef __m256 ev;
#define ev_set1 _mm256_set1_ps
#define ev_max _mm256_max_ps
#define ev_mul _mm256_mul_ps
#define ev_fmadd _mm256_fmadd_ps
#define ev_fnmadd _mm256_fnmadd_ps
#define ev_round(v) _mm256_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT)
#define ev_scalef _mm256_scalef_ps
#endif
static inline vf vexp(vf xv) {
  ev x = ev_max(ev_set1(-104.0f), (ev)xv);
  ev n = ev_round(ev_mul(x, ev_set1(1.44269504088896341f)));
  ev r = ev_fnmadd(n, ev_set1(0.693359375f), x);
  r = ev_fnmadd(n, ev_set1(-2.12194440e-4f), r);
  ev p = ev_set1(1.9875691500e-4f);
  p = ev_fmadd(p, r, ev_set1(1.3981999507e-3f));
  p = ev_fmadd(p, r, ev_set1(8.3334519073e-3f));
  p = ev_fmadd(p, r, ev_set1(4.1665795894e-2f));
  p = ev_fmadd(p, r, ev_set1(1.6666665459e-1f));
  p = ev_fmadd(p, r, ev_set1(5.0000001201e-1f));
  p = ev_fmadd(ev_mul(p, r), r, r); // p r^2 + r
  return (vf)ev_scalef((ev)((vf)p + 1.0f), n);
}
#else
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
#endif

// ---- the kernel ----------------------------------------------------------
// Rows [r0, r0 + R). Always inlined with a constant R, so the per-row
// arrays below live in registers.
static inline __attribute__((always_inline)) void
softmax_rows(const float *restrict x, float *restrict y, int64_t r0, int R,
             int64_t cols) {
  const float *xr[ROWS];
  float *yr[ROWS];
  vf m[ROWS], acc[ROWS], vinv[ROWS];
  vd tot[ROWS];
  for (int i = 0; i < R; i++) {
    xr[i] = x + (r0 + i) * cols;
    yr[i] = y + (r0 + i) * cols;
    m[i] = vsplat(-INFINITY);
    tot[i] = (vd){0};
  }
  // (1) row maxima; padding is -inf, the neutral element of max.
  int64_t c = 0;
  for (; c + VEC <= cols; c += VEC)
    for (int i = 0; i < R; i++)
      m[i] = vmax(m[i], vload(xr[i] + c));
  if (c < cols)
    for (int i = 0; i < R; i++)
      m[i] = vmax(m[i], vload_rest(xr[i], c, cols, -INFINITY));
  for (int i = 0; i < R; i++)
    m[i] = vsplat(hmax(m[i]));
  // (2) e = exp(x - max) into the output rows, summed.
  c = 0;
  while (c + VEC <= cols) {
    int64_t end = c + BLOCK < cols ? c + BLOCK : cols;
    for (int i = 0; i < R; i++)
      acc[i] = vsplat(0.0f);
    for (; c + VEC <= end; c += VEC)
      for (int i = 0; i < R; i++) {
        vf e = vexp(vload(xr[i] + c) - m[i]);
        vstore(yr[i] + c, e);
        acc[i] += e;
      }
    for (int i = 0; i < R; i++)
      tot[i] += vwiden(acc[i]);
  }
  if (c < cols && cols >= VEC) {
    // The last VEC columns again, overlapping: the stores rewrite the same
    // values, the sums take only the new lanes.
    vi tail = tail_mask(cols - c);
    c = cols - VEC;
    for (int i = 0; i < R; i++) {
      vf e = vexp(vload(xr[i] + c) - m[i]);
      vstore(yr[i] + c, e);
      tot[i] += vwiden(vsel(tail, e, vsplat(0.0f)));
    }
  } else if (c < cols)
    for (int i = 0; i < R; i++) {
      vf e = vexp(vload_part(xr[i] + c, cols - c, -INFINITY) - m[i]);
      vstore_part(yr[i] + c, e, cols - c);
      tot[i] += vwiden(e);
    }
  for (int i = 0; i < R; i++)
    vinv[i] = vsplat((float)(1.0 / hsum_d(&tot[i])));
  // (3) scale the cached rows.
  c = 0;
  for (; c + VEC <= cols; c += VEC)
    for (int i = 0; i < R; i++)
      vstore(yr[i] + c, vload(yr[i] + c) * vinv[i]);
  for (; c < cols; c++) // in place: an overlapping vector would scale twice
    for (int i = 0; i < R; i++)
      yr[i][c] *= vinv[i][0];
}

// Iteration it of the row loop: a block of ROWS rows, or one leftover row.
static inline void softmax_item(const float *restrict x, float *restrict y,
                                int64_t it, int64_t nb, int64_t cols) {
  if (it < nb)
    softmax_rows(x, y, it * ROWS, ROWS, cols);
  else
    softmax_rows(x, y, nb * ROWS + (it - nb), 1, cols);
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return;
  int64_t nb = rows / ROWS, items = nb + rows % ROWS;
  if (items == 1 || rows * cols <= SERIAL_BELOW) {
    for (int64_t it = 0; it < items; it++)
      softmax_item(x, y, it, nb, cols);
    return;
  }
  KS_OMP_PARALLEL_FOR
  for (int64_t it = 0; it < items; it++)
    softmax_item(x, y, it, nb, cols);
}
