// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=timeout reason=time limit
// Never returns: an endless loop on a volatile store, on every work-item.

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  __global volatile float *v = y;
  for (;;)
    v[0] = v[0] + 1.0f; // volatile, so the loop cannot be optimised away
}
