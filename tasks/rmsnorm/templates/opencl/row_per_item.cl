// ksearch: backend=opencl entry=rmsnorm
// ksearch: family=row_per_item
// ksearch: concepts=thread_parallel
// ksearch: param LOCAL in 64,16,256
// ksearch: launch global=(rows) local=(LOCAL)
//
// OpenCL template for tasks/rmsnorm, family row_per_item: the reference's
// algorithm, one work-item per row (sum of squares, then scale by w), the
// baseline the GPU-style variants must beat.
//   LOCAL  work-items per work-group (rows per group)
// Kernel arguments follow ksearch's OpenCL convention: inputs, outputs, var
// axes as long, scalars (docs/DESIGN.md: Candidate file).

__kernel void rmsnorm(__global const float *x, __global const float *w,
                      __global float *y, long rows, long cols, float eps) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float ss = 0.0f;
  for (long c = 0; c < cols; c++)
    ss += xr[c] * xr[c];
  float inv = rsqrt(ss / (float)cols + eps);
  for (long c = 0; c < cols; c++)
    yr[c] = xr[c] * inv * w[c];
}
