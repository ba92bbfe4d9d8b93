// ksearch: backend=cuda entry=rmsnorm
// ksearch: launch grid=(rows) block=(256)
// A hand-written rmsnorm the fake model answers with (tests/fake_llm,
// bench/gpu/llm_session.sh): one block of 256 threads per row, scalar
// loads, warp shuffles then shared memory for the sum of squares, the row
// read again for the output.
extern "C" __global__ void rmsnorm(const float *__restrict__ x,
                                   const float *__restrict__ w,
                                   float *__restrict__ y, long rows, long cols,
                                   float eps) {
  __shared__ float sh[32];
  const long r = blockIdx.x;
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  float ss = 0.f;
  for (long c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = xr[c];
    ss += v * v;
  }
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? sh[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0)
      sh[0] = v;
  }
  __syncthreads();
  const float rs = rsqrtf(sh[0] / (float)cols + eps);
  for (long c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = xr[c] * rs * w[c];
}
