// ksearch: backend=opencl entry=layernorm
// ksearch: family=workgroup_row
// ksearch: concepts=workgroup_tree_reduction,warp_shuffle_reduction,vectorized_loads
// ksearch: param LOCAL in 128,256,64,32
// ksearch: param VEC in 4,8,16,2
// ksearch: param BLOCKED in 0,1
// ksearch: launch global=(rows*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/layernorm, family workgroup_row: one work-group
// per row and two exact passes over it: the sum (reduced across the
// work-group) gives the mean, the sum of squared deviations from it (reduced
// again) the variance; a third pass writes the output. Reductions use
// sub-group reductions where the device has cl_khr_subgroups, else a tree in
// local memory; loads are VEC-wide (vloadN).
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
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)
// Which vectors of the row a work-item takes: BLOCKED=0 every LOCAL-th one
// (coalesced on a GPU), BLOCKED=1 one contiguous run (streams on a CPU).
#if BLOCKED
#define FOR_VECS(i, nv, lid)                                                   \
  for (long i = (lid) * (((nv) + LOCAL - 1) / LOCAL),                          \
            i##_end = min((long)(nv), i + ((nv) + LOCAL - 1) / LOCAL);         \
       i < i##_end; i++)
#else
#define FOR_VECS(i, nv, lid) for (long i = (lid); i < (nv); i += LOCAL)
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
layernorm(__global const float *x, __global const float *w,
          __global const float *b, __global float *y, long rows, long cols,
          float eps) {
  __local float red[LOCAL];
  // no early return: global is exactly rows work-groups (PoCL 3.1
  // miscompiles a return before a barrier)
  long r = get_group_id(0);
  uint lid = get_local_id(0);
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  long nv = cols / VEC, tail = nv * VEC;

  float s = 0.0f;
  FOR_VECS(i, nv, lid) { s += hsum(VLOAD(i, xr)); }
  for (long c = tail + lid; c < cols; c += LOCAL)
    s += xr[c];
  float mean = wg_sum(s, red) / (float)cols;

  float q = 0.0f;
  FOR_VECS(i, nv, lid) {
    VT d = VLOAD(i, xr) - mean;
    q += hsum(d * d);
  }
  for (long c = tail + lid; c < cols; c += LOCAL) {
    float d = xr[c] - mean;
    q += d * d;
  }
  float inv = rsqrt(wg_sum(q, red) / (float)cols + eps);

  FOR_VECS(i, nv, lid) {
    VSTORE((VLOAD(i, xr) - mean) * inv * VLOAD(i, w) + VLOAD(i, b), i, yr);
  }
  for (long c = tail + lid; c < cols; c += LOCAL)
    yr[c] = (xr[c] - mean) * inv * w[c] + b[c];
}
