// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=incorrect reason=nan
// Returns without writing y; the device output was uploaded NaN-filled.

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {}
