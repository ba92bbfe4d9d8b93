// ksearch: backend=opencl entry=layernorm
// ksearch: family=rows_per_group
// ksearch: concepts=row_blocking,fused_reduction,workgroup_tree_reduction,vectorized_loads
// ksearch: param ROWS in 4,8,2,16
// ksearch: param LOCAL in 128,64,256
// ksearch: param VEC in 4,8,2
// ksearch: launch global=(cdiv(rows, ROWS)*LOCAL) local=(LOCAL)
//
// OpenCL template for tasks/layernorm, family rows_per_group: ROWS rows per
// work-group, LOCAL/ROWS work-items per row, and one pass for both
// statistics: sums of (x - K) and (x - K)^2 shifted by K = the row's first
// element, which keeps E[x^2] - E[x]^2 from cancelling when the mean is far
// from zero. The shift is the same for every work-item of a row, so the
// partial sums merge by plain addition in a tree in local memory. A second
// pass writes the output.
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
layernorm(__global const float *x, __global const float *w,
          __global const float *b, __global float *y, long rows, long cols,
          float eps) {
  __local float red1[LOCAL], red2[LOCAL];
  uint lid = get_local_id(0);
  uint seg = lid / SEG, sl = lid % SEG;
  long r = (long)get_group_id(0) * ROWS + seg;
  bool live = r < rows; // the last group may have rows to spare
  __global const float *xr = x + (live ? r : 0) * cols;
  __global float *yr = y + (live ? r : 0) * cols;
  long nv = live ? cols / VEC : 0, tail = (cols / VEC) * VEC;
  long end = live ? cols : 0;
  float k = xr[0];

  float s1 = 0.0f, s2 = 0.0f;
  for (long i = sl; i < nv; i += SEG) {
    VT d = VLOAD(i, xr) - k;
    s1 += hsum(d);
    s2 += hsum(d * d);
  }
  for (long c = tail + sl; c < end; c += SEG) {
    float d = xr[c] - k;
    s1 += d;
    s2 += d * d;
  }
  red1[lid] = s1;
  red2[lid] = s2;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = SEG / 2; h > 0; h >>= 1) {
    if (sl < h) {
      red1[lid] += red1[lid + h];
      red2[lid] += red2[lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float m1 = red1[seg * SEG] / (float)cols; // mean - k
  float var = fmax(red2[seg * SEG] / (float)cols - m1 * m1, 0.0f);
  float mean = k + m1, inv = rsqrt(var + eps);

  for (long i = sl; i < nv; i += SEG)
    VSTORE((VLOAD(i, xr) - mean) * inv * VLOAD(i, w) + VLOAD(i, b), i, yr);
  for (long c = tail + sl; c < end; c += SEG)
    yr[c] = (xr[c] - mean) * inv * w[c] + b[c];
}
