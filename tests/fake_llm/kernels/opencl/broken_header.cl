// ksearch: backend=opencl entry=rmsnorm
// Broken header (fake model answer): no launch line, so ksearch cannot know
// the grid; rejected before the OpenCL compiler. Otherwise group_row.cl.
__kernel void rmsnorm(__global const float *x, __global const float *w,
                      __global float *y, long rows, long cols, float eps) {
  __local float red[65];
  long r = get_group_id(0);
  uint lid = get_local_id(0);
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float ss = 0.0f;
  for (long c = lid; c < cols; c += 64)
    ss += xr[c] * xr[c];
  red[lid] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  /* two barriers in all (PoCL 3.1 on several threads has miscomputed
   * kernels with many, DESIGN.md: opencl): item 0 adds the 64 partials */
  if (lid == 0) {
    float t = 0.0f;
    for (uint i = 0; i < 64; i++)
      t += red[i];
    red[64] = t;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float rs = rsqrt(red[64] / (float)cols + eps);
  for (long c = lid; c < cols; c += 64)
    yr[c] = xr[c] * rs * w[c];
}
