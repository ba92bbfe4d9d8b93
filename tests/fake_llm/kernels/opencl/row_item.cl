// ksearch: backend=opencl entry=rmsnorm
// ksearch: launch global=(rows) local=(4)
// A hand-written rmsnorm (fake model answer): one work-item per row, float4
// loads when the row length allows; no barrier, so the items past the last
// row simply return.
__kernel void rmsnorm(__global const float *x, __global const float *w,
                      __global float *y, long rows, long cols, float eps) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  long n4 = (cols & 3) == 0 ? cols / 4 : 0;
  float4 acc = (float4)(0.0f);
  for (long j = 0; j < n4; j++) {
    float4 v = vload4(j, xr);
    acc += v * v;
  }
  float ss = acc.x + acc.y + acc.z + acc.w;
  for (long c = n4 * 4; c < cols; c++)
    ss += xr[c] * xr[c];
  float rs = rsqrt(ss / (float)cols + eps);
  for (long j = 0; j < n4; j++)
    vstore4(vload4(j, xr) * rs * vload4(j, w), j, yr);
  for (long c = n4 * 4; c < cols; c++)
    yr[c] = xr[c] * rs * w[c];
}
