// ksearch: backend=opencl entry=rmsnorm
// ksearch: launch global=(rows*32) local=(32)
// Wrong dialect (fake model answer): CUDA's threadIdx, __shfl_xor_sync and
// __syncthreads in an OpenCL kernel; rejected before the OpenCL compiler
// with the OpenCL alternatives.
__kernel void rmsnorm(__global const float *x, __global const float *w,
                      __global float *y, long rows, long cols, float eps) {
  long r = get_group_id(0);
  int lane = threadIdx.x;
  float ss = 0.0f;
  for (long c = lane; c < cols; c += 32)
    ss += x[r * cols + c] * x[r * cols + c];
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffff, ss, o);
  __syncthreads();
  float rs = rsqrt(ss / (float)cols + eps);
  for (long c = lane; c < cols; c += 32)
    y[r * cols + c] = x[r * cols + c] * rs * w[c];
}
