// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=incorrect reason=past the end
// Correct softmax, plus one float written just past the end of y on the
// device, as a sloppy vectorized tail would.

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
  for (long c = 0; c < cols; c++)
    yr[c] = exp(xr[c] - m) / s;
  if (r == rows - 1)
    y[rows * cols] = 0.0f;
}
