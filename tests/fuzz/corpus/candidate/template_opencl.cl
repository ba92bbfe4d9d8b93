// ksearch: backend=opencl entry=softmax
// ksearch: family=row_per_item
// ksearch: concepts=thread_parallel
// ksearch: param LOCAL in 64,16,256
// ksearch: launch global=(rows) local=(LOCAL)
//
// OpenCL template for tasks/softmax, family row_per_item: the reference's
// algorithm, one work-item per row (max, sum of exp, scale), the baseline
// every GPU-style variant must beat. Work-items of a work-group take
// neighbouring rows, so their loads are strided by cols: on a GPU nothing
// coalesces; on PoCL each work-item streams its own row.
//   LOCAL  work-items per work-group (rows per group)
// Kernel arguments follow ksearch's OpenCL convention: inputs, outputs, var
// axes as long (docs/DESIGN.md: Candidate file).

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float m = -INFINITY;
  for (long c = 0; c < cols; c++)
    m = fmax(m, xr[c]);
  float s = 0.0f;
  for (long c = 0; c < cols; c++)
    s += exp(xr[c] - m);
  float inv = 1.0f / s;
  for (long c = 0; c < cols; c++)
    yr[c] = exp(xr[c] - m) * inv;
}
