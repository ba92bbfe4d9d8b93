// ksearch: backend=cuda entry=rmsnorm
// ksearch: launch grid=(rows/8) block=(256)
// A hand-written rmsnorm (fake model answer): one warp per row, 8 rows per
// block, 128-bit loads when the row length is a multiple of 4, the sum of
// squares in a shuffle butterfly (no shared memory, no barrier); the row is
// read again for the output (from L2 on short rows).
extern "C" __global__ void rmsnorm(const float *__restrict__ x,
                                   const float *__restrict__ w,
                                   float *__restrict__ y, long rows, long cols,
                                   float eps) {
  const long r = (long)blockIdx.x * 8 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (r >= rows)
    return; /* the whole warp leaves together */
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  float ss = 0.f;
  const bool vec = (cols & 3) == 0;
  if (vec) {
    const float4 *x4 = (const float4 *)xr;
    for (long j = lane; j < cols / 4; j += 32) {
      float4 v = __ldg(x4 + j);
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
    for (long c = lane; c < cols; c += 32) {
      float v = xr[c];
      ss += v * v;
    }
  }
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  const float rs = rsqrtf(ss / (float)cols + eps);
  if (vec) {
    const float4 *x4 = (const float4 *)xr, *w4 = (const float4 *)w;
    float4 *y4 = (float4 *)yr;
    for (long j = lane; j < cols / 4; j += 32) {
      float4 v = __ldg(x4 + j), g = __ldg(w4 + j);
      y4[j] = make_float4(v.x * rs * g.x, v.y * rs * g.y, v.z * rs * g.z,
                          v.w * rs * g.w);
    }
  } else {
    for (long c = lane; c < cols; c += 32)
      yr[c] = xr[c] * rs * w[c];
  }
}
