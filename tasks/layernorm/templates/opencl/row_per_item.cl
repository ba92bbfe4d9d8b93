// ksearch: backend=opencl entry=layernorm
// ksearch: family=row_per_item
// ksearch: concepts=thread_parallel
// ksearch: param LOCAL in 64,16,256
// ksearch: launch global=(rows) local=(LOCAL)
//
// OpenCL template for tasks/layernorm, family row_per_item: the reference's
// algorithm, one work-item per row: the mean, then the variance around it
// (two passes, no cancellation), then the scaled and shifted output. The
// baseline the GPU-style variants must beat.
//   LOCAL  work-items per work-group (rows per group)
// Kernel arguments follow ksearch's OpenCL convention: inputs, outputs, var
// axes as long, scalars (docs/DESIGN.md: Candidate file).

__kernel void layernorm(__global const float *x, __global const float *w,
                        __global const float *b, __global float *y, long rows,
                        long cols, float eps) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float sum = 0.0f;
  for (long c = 0; c < cols; c++)
    sum += xr[c];
  float mean = sum / (float)cols;
  float var = 0.0f;
  for (long c = 0; c < cols; c++) {
    float d = xr[c] - mean;
    var += d * d;
  }
  float inv = rsqrt(var / (float)cols + eps);
  for (long c = 0; c < cols; c++)
    yr[c] = (xr[c] - mean) * inv * w[c] + b[c];
}
