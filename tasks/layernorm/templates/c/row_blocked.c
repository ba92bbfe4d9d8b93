// ksearch: backend=c entry=layernorm
// ksearch: family=row_blocked
// ksearch: concepts=row_blocking,simd_vectorization,multi_accumulator,thread_parallel,omp_schedule,streaming_stores
// ksearch: param VEC in 8,16,4
// ksearch: param ROWS in 4,2,8
// ksearch: param SCHED in 0,1,2
// ksearch: param CHUNK in 0,1,16
// ksearch: param STORE in 0,1
//
// Template for tasks/layernorm, family row_blocked: ROWS rows are
// normalised together. Their means, then their sums of (x - mean)^2, advance
// column by column side by side (ROWS independent accumulator chains, good
// for short rows), and the output pass loads each vector of w and b once for
// all ROWS rows. Leftover rows (rows % ROWS) go one at a time (DESIGN.md:
// Candidate file; parameters arrive as -D macros).
//   VEC    floats per SIMD vector (GCC vector extensions)
//   ROWS   rows per block (one OpenMP iteration)
//   SCHED  OpenMP schedule over row blocks: 0 static, 1 dynamic, 2 guided
//   CHUNK  OpenMP chunk size in row blocks; 0 = the schedule's default
//   STORE  output stores: 0 ordinary; 1 non-temporal (streaming) where the
//          output is at least STREAM_MIN bytes, rows at least STREAM_COLS
//          floats and aligned, ordinary elsewhere (x86; ordinary on others)
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
#ifndef STORE
#define STORE 0
#endif
_Static_assert(VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 4, 8 or 16");
_Static_assert(ROWS >= 1 && ROWS <= 8, "ROWS must be 1..8");

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

// ---- streaming stores (STORE=1) ------------------------------------------
// A streamed line skips the read-for-ownership an ordinary store pays, so
// reading N bytes and writing N moves 2N instead of 3N. It pays only when
// the output overflows the caches (nothing reads it back soon) and rows are
// long enough that whole lines come from one row: mixing streamed and
// ordinary stores in one line costs more than either.
#define STREAM_MIN (8 << 20)
#define STREAM_COLS 256
#if STORE == 1 && defined(__x86_64__)
#include <immintrin.h>
#define KS_STREAMS 1
#if VEC == 16 && defined(__AVX512F__)
#define VALIGN 64
static inline void vstream(float *p, vf v) { _mm512_stream_ps(p, (__m512)v); }
#else // VEC in pieces of the widest streaming store the ISA has
#if VEC >= 8 && defined(__AVX__)
#define VALIGN 32
typedef __m256 sv;
#define sv_stream _mm256_stream_ps
#else
#define VALIGN 16
typedef __m128 sv;
#define sv_stream _mm_stream_ps
#endif
static inline void vstream(float *p, vf v) {
  for (int i = 0; i < VEC; i += VALIGN / 4) {
    sv h;
    __builtin_memcpy(&h, (const float *)&v + i, sizeof h);
    sv_stream(p + i, h);
  }
}
#endif
// Streamed lines become visible to other threads only after a fence.
static inline void store_fence(int nt) {
  if (nt)
    _mm_sfence();
}
#else
#define KS_STREAMS 0
static inline void store_fence(int nt) { (void)nt; }
#endif
// Whether this call streams: a large output, long rows, and every row
// starting on the stream alignment (rows that alternate between streamed
// and ordinary share lines; the output itself is 64-byte aligned).
static inline int stream_rows(int64_t rows, int64_t cols) {
#if KS_STREAMS
  return rows * cols * 4 >= STREAM_MIN && cols >= STREAM_COLS &&
         (cols * 4) % VALIGN == 0;
#else
  (void)rows, (void)cols;
  return 0;
#endif
}
// The output store of the vector body: streamed when nt and p is aligned.
static inline void vput(float *p, vf v, int nt) {
#if KS_STREAMS
  if (nt && !((uintptr_t)p & (VALIGN - 1))) {
    vstream(p, v);
    return;
  }
#else
  (void)nt;
#endif
  vstore(p, v);
}
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
// Rows [r0, r0 + R). Always inlined with a constant R, so the per-row
// arrays below live in registers.
static inline __attribute__((always_inline)) void
layernorm_rows(const float *restrict x, const float *restrict w,
               const float *restrict b, float *restrict y, int64_t r0, int R,
               int64_t cols, float eps, int nt) {
  const float *xr[ROWS];
  float *yr[ROWS];
  vd tot[ROWS];
  vf acc[ROWS], vmean[ROWS], vinv[ROWS];
  float mean[ROWS];
  for (int i = 0; i < R; i++) {
    xr[i] = x + (r0 + i) * cols;
    yr[i] = y + (r0 + i) * cols;
    vmean[i] = vsplat(0.0f);
    mean[i] = 0.0f;
  }
  // Two sweeps: sq == 0 sums x, sq == 1 sums (x - mean)^2.
  for (int sq = 0; sq < 2; sq++) {
    for (int i = 0; i < R; i++)
      tot[i] = (vd){0};
    int64_t c = 0;
    while (c + VEC <= cols) {
      int64_t end = c + BLOCK < cols ? c + BLOCK : cols;
      for (int i = 0; i < R; i++)
        acc[i] = vsplat(0.0f);
      for (; c + VEC <= end; c += VEC)
        for (int i = 0; i < R; i++) {
          vf v = vload(xr[i] + c) - vmean[i];
          acc[i] += sq ? v * v : v;
        }
      for (int i = 0; i < R; i++)
        tot[i] += vwiden(acc[i]);
    }
    if (c < cols) // padding lanes equal the mean (0 in the first sweep)
      for (int i = 0; i < R; i++) {
        vf v = vload_rest(xr[i], c, cols, mean[i]) - vmean[i];
        tot[i] += vwiden(sq ? v * v : v);
      }
    for (int i = 0; i < R; i++) {
      double s = hsum_d(&tot[i]) / (double)cols;
      if (!sq) {
        mean[i] = (float)s;
        vmean[i] = vsplat(mean[i]);
      } else {
        vinv[i] = vsplat((float)(1.0 / sqrt(s + (double)eps)));
      }
    }
  }
  int64_t c = 0;
  for (; c + VEC <= cols; c += VEC) {
    vf wv = vload(w + c), bv = vload(b + c);
    for (int i = 0; i < R; i++)
      vput(yr[i] + c, (vload(xr[i] + c) - vmean[i]) * (vinv[i] * wv) + bv, nt);
  }
  if (c < cols && cols >= VEC) { // the last VEC columns again, overlapping
    c = cols - VEC;
    vf wv = vload(w + c), bv = vload(b + c);
    for (int i = 0; i < R; i++)
      vstore(yr[i] + c, (vload(xr[i] + c) - vmean[i]) * (vinv[i] * wv) + bv);
  } else if (c < cols) {
    int64_t n = cols - c;
    vf wv = vload_part(w + c, n, 0.0f), bv = vload_part(b + c, n, 0.0f);
    for (int i = 0; i < R; i++)
      vstore_part(
          yr[i] + c,
          (vload_part(xr[i] + c, n, 0.0f) - vmean[i]) * (vinv[i] * wv) + bv, n);
  }
}

// Iteration it of the row loop: a block of ROWS rows, or one leftover row.
static inline void layernorm_item(const float *restrict x,
                                  const float *restrict w,
                                  const float *restrict b, float *restrict y,
                                  int64_t it, int64_t nb, int64_t cols,
                                  float eps, int nt) {
  if (it < nb)
    layernorm_rows(x, w, b, y, it * ROWS, ROWS, cols, eps, nt);
  else
    layernorm_rows(x, w, b, y, nb * ROWS + (it - nb), 1, cols, eps, nt);
}

void layernorm(const float *restrict x, const float *restrict w,
               const float *restrict b, float *restrict y, int64_t rows,
               int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0)
    return;
  int64_t nb = rows / ROWS, items = nb + rows % ROWS;
  int nt = stream_rows(rows, cols);
  if (items == 1 || rows * cols <= SERIAL_BELOW) {
    for (int64_t it = 0; it < items; it++)
      layernorm_item(x, w, b, y, it, nb, cols, eps, nt);
    store_fence(nt);
    return;
  }
  KS_PRAGMA(omp parallel) {
    KS_PRAGMA(omp for KS_SCHEDULE nowait)
    for (int64_t it = 0; it < items; it++)
      layernorm_item(x, w, b, y, it, nb, cols, eps, nt);
    store_fence(nt); // before the region's closing barrier
  }
}
