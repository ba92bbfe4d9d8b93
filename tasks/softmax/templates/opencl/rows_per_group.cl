// ksearch: backend=opencl entry=softmax
// ksearch: family=rows_per_group
// ksearch: concepts=online_softmax,row_blocking,workgroup_tree_reduction,vectorized_loads
// ksearch: param ROWS in 4,8,2,16
// ksearch: param LOCAL in 128,64,256
// ksearch: param EXP in 0,1
// ksearch: param VEC in 4,8,2
// ksearch: launch global=(cdiv(rows, ROWS)*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/softmax, family rows_per_group: ROWS rows per
// work-group, LOCAL/ROWS work-items per row, so short rows keep every
// work-item busy. Pass 1 is online softmax: each work-item keeps a running
// max m and a running sum s of exp(x - m), rescaling s by exp(m_old - m_new)
// when the max grows; the (m, s) pairs of a row merge in a tree in local
// memory. Pass 2 writes exp(x - m) / s. Two reads of the row instead of
// three.
//   ROWS   rows per work-group (a power of two below LOCAL)
//   LOCAL  work-items per work-group (a power of two)
//   EXP    0: built-in exp; 1: polynomial exp (vectorizes everywhere)
//   VEC    floats per vector load (2, 4 or 8)

#ifndef ROWS
#define ROWS 4
#endif
#ifndef LOCAL
#define LOCAL 128
#endif
#ifndef EXP
#define EXP 0
#endif
#ifndef VEC
#define VEC 4
#endif
#define SEG (LOCAL / ROWS) // work-items per row
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

// EXP=1: a Cephes-style polynomial exp (range reduction by ln 2, degree-6
// polynomial, ~2 ulp) that vectorizes on any device; 0 for x below -87.3,
// NaN stays NaN. EXP=0: the built-in exp.
#if EXP
#define POLY_EXP(T, CVT_INT, AS_FLOAT, x)                                      \
  do {                                                                         \
    T xc = clamp(x, -87.33654f, 88.0f);                                        \
    T kf = rint(xc * 1.44269504088896341f);                                    \
    T r = xc - kf * 0.693359375f;                                              \
    r = r - kf * -2.12194440e-4f;                                              \
    T p = 1.9875691500e-4f;                                                    \
    p = p * r + 1.3981999507e-3f;                                              \
    p = p * r + 8.3334519073e-3f;                                              \
    p = p * r + 4.1665795894e-2f;                                              \
    p = p * r + 1.6666665459e-1f;                                              \
    p = p * r + 5.0000001201e-1f;                                              \
    p = p * r * r + r + 1.0f;                                                  \
    T res = p * AS_FLOAT((CVT_INT(kf) + 127) << 23);                           \
    res = x < -87.33654f ? (T)0.0f : res;                                      \
    return isnan(x) ? x : res;                                                 \
  } while (0)
inline float sexp(float x) { POLY_EXP(float, convert_int, as_float, x); }
inline VT vexp(VT x) {
  POLY_EXP(VT, CAT(convert_int, VEC), CAT(as_float, VEC), x);
}
#else
#define sexp exp
#define vexp exp
#endif

inline float hmax(VT v) {
#if VEC == 8
  float4 b = fmax(v.lo, v.hi);
#elif VEC == 4
  float4 b = v;
#endif
#if VEC >= 4
  float2 c = fmax(b.lo, b.hi);
#else
  float2 c = v;
#endif
  return fmax(c.x, c.y);
}

inline float hsum(VT v) {
#if VEC == 8
  float4 b = v.lo + v.hi;
#elif VEC == 4
  float4 b = v;
#endif
#if VEC >= 4
  float2 c = b.lo + b.hi;
#else
  float2 c = v;
#endif
  return c.x + c.y;
}

// One online-softmax step: fold a block with max bm and values e (not yet
// exponentiated) into (m, s). -FLT_MAX, not -inf, starts m so that
// m_old - m_new is never inf - inf.
#define ONLINE_STEP(bm, sum_of_exp)                                            \
  do {                                                                         \
    float nm = fmax(m, (bm));                                                  \
    s = s * sexp(m - nm) + (sum_of_exp);                                        \
    m = nm;                                                                    \
  } while (0)

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1))) void
softmax(__global const float *x, __global float *y, long rows, long cols) {
  __local float red_m[LOCAL], red_s[LOCAL];
  uint lid = get_local_id(0);
  uint seg = lid / SEG, sl = lid % SEG;
  long r = (long)get_group_id(0) * ROWS + seg;
  bool live = r < rows; // the last group may have rows to spare
  __global const float *xr = x + (live ? r : 0) * cols;
  __global float *yr = y + (live ? r : 0) * cols;
  long nv = live ? cols / VEC : 0, tail = (cols / VEC) * VEC;
  long end = live ? cols : 0;

  float m = -FLT_MAX, s = 0.0f;
  for (long i = sl; i < nv; i += SEG) {
    VT v = VLOAD(i, xr);
    float bm = fmax(m, hmax(v));
    s = s * sexp(m - bm) + hsum(vexp(v - bm));
    m = bm;
  }
  for (long c = tail + sl; c < end; c += SEG)
    ONLINE_STEP(xr[c], sexp(xr[c] - fmax(m, xr[c])));

  // merge the (m, s) pairs of each row: a tree inside each segment
  red_m[lid] = m;
  red_s[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = SEG / 2; h > 0; h >>= 1) {
    if (sl < h) {
      float m1 = red_m[lid], m2 = red_m[lid + h];
      float nm = fmax(m1, m2);
      red_s[lid] = red_s[lid] * sexp(m1 - nm) + red_s[lid + h] * sexp(m2 - nm);
      red_m[lid] = nm;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red_m[seg * SEG];
  float inv = 1.0f / red_s[seg * SEG];

  for (long i = sl; i < nv; i += SEG)
    VSTORE(vexp(VLOAD(i, xr) - m) * inv, i, yr);
  for (long c = tail + sl; c < end; c += SEG)
    yr[c] = sexp(xr[c] - m) * inv;
}
