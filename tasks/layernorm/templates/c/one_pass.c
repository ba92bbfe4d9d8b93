// ksearch: backend=c entry=layernorm
// ksearch: family=one_pass
// ksearch: concepts=fused_reduction,simd_vectorization,multi_accumulator,loop_unrolling,thread_parallel,omp_schedule
// ksearch: param VEC in 8,16,4
// ksearch: param NACC in 2,1,4
// ksearch: param UNROLL in 2,1,4
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,16
//
// Template for tasks/layernorm, family one_pass: one read of the row gives
// both statistics. It sums d = x - K and d^2 together, with the shift K the
// mean of the row's first few elements, so var = E[d^2] - E[d]^2 cancels
// only as much as K is off the true mean (shifted sums); block sums go to
// double every BLOCK columns. A second pass writes the output (DESIGN.md:
// Candidate file; parameters arrive as -D macros).
//   VEC    floats per SIMD vector (GCC vector extensions)
//   NACC   independent vector accumulators in the reductions
//   UNROLL vectors per iteration of the output pass
//   SCHED  OpenMP schedule over rows: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in rows; 0 = the schedule's default
#include <math.h>
#include <stdint.h>

#ifndef VEC
#define VEC 8
#endif
#ifndef NACC
#define NACC 2
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
// Sums of d = x - k and of d^2 over the row.
static inline void row_sums(const float *restrict xr, int64_t cols, float k,
                            double *s1, double *s2) {
  const vf vk = vsplat(k);
  vd t1 = {0}, t2 = {0};
  int64_t c = 0;
  while (c + VEC * NACC <= cols) {
    int64_t end = c + BLOCK < cols ? c + BLOCK : cols;
    vf a1[NACC], a2[NACC];
    for (int j = 0; j < NACC; j++)
      a1[j] = a2[j] = vsplat(0.0f);
    for (; c + VEC * NACC <= end; c += VEC * NACC)
      for (int j = 0; j < NACC; j++) {
        vf d = vload(xr + c + j * VEC) - vk;
        a1[j] += d;
        a2[j] += d * d;
      }
    for (int j = 0; j < NACC; j++) {
      t1 += vwiden(a1[j]);
      t2 += vwiden(a2[j]);
    }
  }
  vf a1 = vsplat(0.0f), a2 = vsplat(0.0f);
  for (; c + VEC <= cols; c += VEC) {
    vf d = vload(xr + c) - vk;
    a1 += d;
    a2 += d * d;
  }
  if (c < cols) { // padding lanes equal k, so they add 0
    vf d = vload_rest(xr, c, cols, k) - vk;
    a1 += d;
    a2 += d * d;
  }
  t1 += vwiden(a1);
  t2 += vwiden(a2);
  *s1 = hsum_d(&t1);
  *s2 = hsum_d(&t2);
}

// y = (x - mean) * (inv * w) + b over one row, UNROLL vectors at a time.
static inline void row_output(const float *restrict xr, const float *restrict w,
                              const float *restrict b, float *restrict yr,
                              int64_t cols, float mean, float inv) {
  vf vm = vsplat(mean), vi_ = vsplat(inv);
  int64_t c = 0;
  for (; c + VEC * UNROLL <= cols; c += VEC * UNROLL)
    for (int k = 0; k < UNROLL; k++) {
      int64_t o = c + k * VEC;
      vstore(yr + o,
             (vload(xr + o) - vm) * (vi_ * vload(w + o)) + vload(b + o));
    }
  for (; c + VEC <= cols; c += VEC)
    vstore(yr + c, (vload(xr + c) - vm) * (vi_ * vload(w + c)) + vload(b + c));
  if (c < cols && cols >= VEC) { // the last VEC columns again, overlapping
    c = cols - VEC;
    vstore(yr + c, (vload(xr + c) - vm) * (vi_ * vload(w + c)) + vload(b + c));
  } else if (c < cols) {
    int64_t n = cols - c;
    vstore_part(yr + c,
                (vload_part(xr + c, n, 0.0f) - vm) *
                        (vi_ * vload_part(w + c, n, 0.0f)) +
                    vload_part(b + c, n, 0.0f),
                n);
  }
}

static inline void layernorm_row(const float *restrict xr,
                                 const float *restrict w,
                                 const float *restrict b, float *restrict yr,
                                 int64_t cols, float eps) {
  // The shift: a cheap estimate of the mean from the first elements.
  int64_t nk = cols < 32 ? cols : 32;
  float k = 0.0f;
  for (int64_t c = 0; c < nk; c++)
    k += xr[c];
  k /= (float)nk;
  double s1, s2;
  row_sums(xr, cols, k, &s1, &s2);
  double md = s1 / (double)cols;
  double var = s2 / (double)cols - md * md;
  if (var < 0.0)
    var = 0.0;
  float mean = (float)((double)k + md);
  float inv = (float)(1.0 / sqrt(var + (double)eps));
  row_output(xr, w, b, yr, cols, mean, inv);
}

void layernorm(const float *restrict x, const float *restrict w,
               const float *restrict b, float *restrict y, int64_t rows,
               int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0)
    return;
  if (rows == 1 || rows * cols <= SERIAL_BELOW) {
    for (int64_t r = 0; r < rows; r++)
      layernorm_row(x + r * cols, w, b, y + r * cols, cols, eps);
    return;
  }
  KS_OMP_PARALLEL_FOR
  for (int64_t r = 0; r < rows; r++)
    layernorm_row(x + r * cols, w, b, y + r * cols, cols, eps);
}
