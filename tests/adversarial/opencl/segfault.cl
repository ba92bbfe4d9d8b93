// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=crash reason=sigsegv
// Stores far outside every buffer (1 TiB past y): the runner dies of
// SIGSEGV on PoCL's worker thread and the parent reports the signal.

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  __global volatile float *far = y + (1L << 38);
  if (get_global_id(0) == 0)
    far[0] = 1.0f;
}
