// ksearch: backend=opencl entry=softmax
// ksearch: family=workgroup_row
// ksearch: concepts=workgroup_tree_reduction,warp_shuffle_reduction,vectorized_loads
// ksearch: param LOCAL in 128,256,64,32
// ksearch: param EXP in 0,1
// ksearch: param VEC in 4,8,16,2
// ksearch: param BLOCKED in 0,1
// ksearch: launch global=(rows*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/softmax, family workgroup_row: one work-group
// per row. Work-items stride through the row VEC floats at a time (vloadN:
// neighbouring work-items read neighbouring vectors, so loads coalesce on a
// GPU and stream on a CPU); the row max and the sum of exp are reduced
// across the work-group with sub-group reductions where the device has
// cl_khr_subgroups, else a tree in local memory. Three reads of the row,
// which stays in cache between them for all but the longest rows.
//   LOCAL  work-items per work-group (a power of two)
//   EXP    0: built-in exp; 1: polynomial exp (vectorizes everywhere)
//   VEC    floats per vector load (2, 4, 8 or 16)
//   BLOCKED 0: work-items interleave (GPU); 1: contiguous blocks (CPU)

#ifndef LOCAL
#define LOCAL 128
#endif
#ifndef EXP
#define EXP 0
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef BLOCKED
#define BLOCKED 0
#endif
// Which vectors of the row a work-item takes: BLOCKED=0 every LOCAL-th one
// (neighbouring work-items read neighbouring vectors: coalesced on a GPU),
// BLOCKED=1 one contiguous run (each work-item streams its own block: what a
// CPU's prefetchers and PoCL's loop vectorizer like).
#if BLOCKED
#define FOR_VECS(i, nv, lid)                                                   \
  for (long i = (lid) * (((nv) + LOCAL - 1) / LOCAL),                          \
            i##_end = min((long)(nv), i + ((nv) + LOCAL - 1) / LOCAL);         \
       i < i##_end; i++)
#else
#define FOR_VECS(i, nv, lid) for (long i = (lid); i < (nv); i += LOCAL)
#endif
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

#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif

inline float hsum(VT v) {
#if VEC == 16
  float8 a = v.lo + v.hi;
#elif VEC == 8
  float8 a = v;
#endif
#if VEC >= 8
  float4 b = a.lo + a.hi;
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

inline float hmax(VT v) {
#if VEC == 16
  float8 a = fmax(v.lo, v.hi);
#elif VEC == 8
  float8 a = v;
#endif
#if VEC >= 8
  float4 b = fmax(a.lo, a.hi);
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

// Every work-item gets the reduction of v over the work-group (op: 0 sum,
// 1 max). red holds LOCAL floats and is free again on return.
inline float wg_reduce(float v, int op, __local float *red) {
  uint lid = get_local_id(0);
#ifdef cl_khr_subgroups
  v = op ? sub_group_reduce_max(v) : sub_group_reduce_add(v);
  if (get_sub_group_local_id() == 0)
    red[get_sub_group_id()] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  float r = red[0];
  for (uint i = 1; i < get_num_sub_groups(); i++)
    r = op ? fmax(r, red[i]) : r + red[i];
#else
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s)
      red[lid] = op ? fmax(red[lid], red[lid + s]) : red[lid] + red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = red[0];
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1))) void
softmax(__global const float *x, __global float *y, long rows, long cols) {
  __local float red[LOCAL];
  // no early return: global is exactly rows work-groups, and PoCL 3.1
  // miscompiles a return before a barrier even when the whole group takes it
  long r = get_group_id(0);
  uint lid = get_local_id(0);
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  long nv = cols / VEC, tail = nv * VEC;

  float m = -INFINITY;
  FOR_VECS(i, nv, lid)
    m = fmax(m, hmax(VLOAD(i, xr)));
  for (long c = tail + lid; c < cols; c += LOCAL)
    m = fmax(m, xr[c]);
  m = wg_reduce(m, 1, red);

  float s = 0.0f;
  FOR_VECS(i, nv, lid)
    s += hsum(vexp(VLOAD(i, xr) - m));
  for (long c = tail + lid; c < cols; c += LOCAL)
    s += sexp(xr[c] - m);
  s = wg_reduce(s, 0, red);

  float inv = 1.0f / s;
  FOR_VECS(i, nv, lid)
    VSTORE(vexp(VLOAD(i, xr) - m) * inv, i, yr);
  for (long c = tail + lid; c < cols; c += LOCAL)
    yr[c] = sexp(xr[c] - m) * inv;
}
