// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=crash reason=sigsegv
// PoCL runs kernels on host threads in the executor's address space, so a
// kernel can read and write far outside its buffers: this one goes looking
// 1 GiB past its output for anything to copy or corrupt. Nothing of the
// judge's is there (references, verdict and clock live in another process),
// and what is not mapped faults.
__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *far_in = x + (1L << 28);
  __global float *far_out = y + (1L << 28);
  float found = far_in[r];
  far_out[r] = found;
  y[r * cols] = found;
}
