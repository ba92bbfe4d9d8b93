// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=incorrect reason=modified input
// Correct softmax, then halves x in place (casting away const); the device
// input is downloaded and compared with a copy after every call.

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global float *xr = (__global float *)x + r * cols;
  __global float *yr = y + r * cols;
  float m = -INFINITY;
  for (long c = 0; c < cols; c++)
    m = fmax(m, xr[c]);
  float s = 0.0f;
  for (long c = 0; c < cols; c++)
    s += exp(xr[c] - m);
  for (long c = 0; c < cols; c++) {
    yr[c] = exp(xr[c] - m) / s;
    xr[c] *= 0.5f;
  }
}
