// ksearch: backend=opencl entry=rmsnorm
// ksearch: family=workgroup_row
// ksearch: concepts=workgroup_tree_reduction,warp_shuffle_reduction,vectorized_loads
// ksearch: param LOCAL in 128,256,64,32
// ksearch: param VEC in 4,8,16,2
// ksearch: param BLOCKED in 0,1
// ksearch: launch global=(rows*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/rmsnorm, family workgroup_row: one work-group
// per row. Work-items stride through the row VEC floats at a time (vloadN;
// coalesced on a GPU, streaming on a CPU), the sum of squares is reduced
// across the work-group with sub-group reductions where the device has
// cl_khr_subgroups, else a tree in local memory; then every work-item scales
// its part of the row by rsqrt(mean + eps) and w.
//   LOCAL  work-items per work-group (a power of two)
//   VEC    floats per vector load (2, 4, 8 or 16)
//   BLOCKED 0: work-items interleave (GPU); 1: contiguous blocks (CPU)

#ifndef LOCAL
#define LOCAL 128
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

// Every work-item gets the sum of v over the work-group; red holds LOCAL
// floats and is free again on return.
inline float wg_sum(float v, __local float *red) {
  uint lid = get_local_id(0);
#ifdef cl_khr_subgroups
  v = sub_group_reduce_add(v);
  if (get_sub_group_local_id() == 0)
    red[get_sub_group_id()] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  float r = red[0];
  for (uint i = 1; i < get_num_sub_groups(); i++)
    r += red[i];
#else
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s)
      red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = red[0];
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1))) void
rmsnorm(__global const float *x, __global const float *w, __global float *y,
        long rows, long cols, float eps) {
  __local float red[LOCAL];
  // no early return: global is exactly rows work-groups (PoCL 3.1
  // miscompiles a return before a barrier)
  long r = get_group_id(0);
  uint lid = get_local_id(0);
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  long nv = cols / VEC, tail = nv * VEC;

  float ss = 0.0f;
  FOR_VECS(i, nv, lid) {
    VT v = VLOAD(i, xr);
    ss += hsum(v * v);
  }
  for (long c = tail + lid; c < cols; c += LOCAL)
    ss += xr[c] * xr[c];
  ss = wg_sum(ss, red);

  float inv = rsqrt(ss / (float)cols + eps);
  FOR_VECS(i, nv, lid)
  VSTORE(VLOAD(i, xr) * inv * VLOAD(i, w), i, yr);
  for (long c = tail + lid; c < cols; c += LOCAL)
    yr[c] = xr[c] * inv * w[c];
}
