// ksearch: backend=cuda entry=rmsnorm
// ksearch: launch grid=(rows) block=(64)
// Wrong dialect (fake model answer): OpenCL work-item functions and barrier
// in a CUDA file; rejected before nvcc with the CUDA alternatives.
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y,
                                   long rows, long cols, float eps) {
  __shared__ float red[64];
  long r = get_group_id(0);
  int lid = get_local_id(0);
  float ss = 0.f;
  for (long c = lid; c < cols; c += 64)
    ss += x[r * cols + c] * x[r * cols + c];
  red[lid] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s)
      red[lid] += red[lid + s];
    __syncthreads();
  }
  float rs = rsqrtf(red[0] / (float)cols + eps);
  for (long c = lid; c < cols; c += 64)
    y[r * cols + c] = x[r * cols + c] * rs * w[c];
}
