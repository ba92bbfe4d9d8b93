// ksearch: backend=opencl entry=rmsnorm
// ksearch: family=rows_per_group
// ksearch: concepts=row_blocking,workgroup_tree_reduction,vectorized_loads
// ksearch: param ROWS in 4,8,2,16
// ksearch: param LOCAL in 128,64,256
// ksearch: param VEC in 4,8,2
// ksearch: launch global=(cdiv(rows, ROWS)*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/rmsnorm, family rows_per_group: ROWS rows per
// work-group, LOCAL/ROWS work-items per row, so short rows keep every
// work-item busy and one work-group amortizes its barriers over several
// rows; each row's sum of squares is reduced in a tree inside its segment of
// local memory.
//   ROWS   rows per work-group (a power of two below LOCAL)
//   LOCAL  work-items per work-group (a power of two)
//   VEC    floats per vector load (2, 4 or 8)

#ifndef ROWS
#define ROWS 4
#endif
#ifndef LOCAL
#define LOCAL 128
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

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1))) void
rmsnorm(__global const float *x, __global const float *w, __global float *y,
        long rows, long cols, float eps) {
  __local float red[LOCAL];
  uint lid = get_local_id(0);
  uint seg = lid / SEG, sl = lid % SEG;
  long r = (long)get_group_id(0) * ROWS + seg;
  bool live = r < rows; // the last group may have rows to spare
  __global const float *xr = x + (live ? r : 0) * cols;
  __global float *yr = y + (live ? r : 0) * cols;
  long nv = live ? cols / VEC : 0, tail = (cols / VEC) * VEC;
  long end = live ? cols : 0;

  float ss = 0.0f;
  for (long i = sl; i < nv; i += SEG) {
    VT v = VLOAD(i, xr);
    ss += hsum(v * v);
  }
  for (long c = tail + sl; c < end; c += SEG)
    ss += xr[c] * xr[c];

  red[lid] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = SEG / 2; h > 0; h >>= 1) {
    if (sl < h)
      red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float inv = rsqrt(red[seg * SEG] / (float)cols + eps);

  for (long i = sl; i < nv; i += SEG)
    VSTORE(VLOAD(i, xr) * inv * VLOAD(i, w), i, yr);
  for (long c = tail + sl; c < end; c += SEG)
    yr[c] = xr[c] * inv * w[c];
}
