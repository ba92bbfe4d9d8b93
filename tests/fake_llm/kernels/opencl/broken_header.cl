// ksearch: backend=opencl entry=rmsnorm
// Broken header (fake model answer): no launch line, so ksearch cannot know
// the grid; rejected before the OpenCL compiler. Otherwise group_row.cl:
__kernel void rmsnorm(__global const float *x, __global const float *w,
                      __global float *y, long rows, long cols, float eps) {
  __local float red[64];
  long r = get_group_id(0);
  uint lid = get_local_id(0);
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float ss = 0.0f;
  for (long c = lid; c < cols; c += 64)
    ss += xr[c] * xr[c];
  red[lid] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 32; s > 0; s >>= 1) {
    if (lid < s)
      red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float rs = rsqrt(red[0] / (float)cols + eps);
  for (long c = lid; c < cols; c += 64)
    yr[c] = xr[c] * rs * w[c];
}
