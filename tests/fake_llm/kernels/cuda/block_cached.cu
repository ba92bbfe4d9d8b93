// ksearch: backend=cuda entry=rmsnorm
// ksearch: launch grid=(rows) block=(THREADS)
// A hand-written rmsnorm (fake model answer): one block per row, 128-bit
// loads; rows of at most THREADS*4*CACHE floats stay in registers between
// the sum of squares and the output (x read once from memory), longer rows
// are read twice. The block sum goes through warp shuffles and shared memory.
#define THREADS 256
#define CACHE 8
extern "C" __global__ void __launch_bounds__(THREADS)
    rmsnorm(const float *__restrict__ x, const float *__restrict__ w,
            float *__restrict__ y, long rows, long cols, float eps) {
  __shared__ float sh[32];
  const long r = blockIdx.x;
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  const bool vec = (cols & 3) == 0;
  const long n4 = cols / 4;
  const bool cached = vec && n4 <= (long)THREADS * CACHE;
  float4 keep[CACHE];
  float ss = 0.f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      long j = threadIdx.x + (long)k * THREADS;
      if (j < n4) {
        keep[k] = __ldg((const float4 *)xr + j);
        ss += keep[k].x * keep[k].x + keep[k].y * keep[k].y +
              keep[k].z * keep[k].z + keep[k].w * keep[k].w;
      }
    }
  } else if (vec) {
    for (long j = threadIdx.x; j < n4; j += THREADS) {
      float4 v = __ldg((const float4 *)xr + j);
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
    for (long c = threadIdx.x; c < cols; c += THREADS) {
      float v = xr[c];
      ss += v * v;
    }
  }
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < THREADS / 32 ? sh[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0)
      sh[0] = v;
  }
  __syncthreads();
  const float rs = rsqrtf(sh[0] / (float)cols + eps);
  if (cached) {
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      long j = threadIdx.x + (long)k * THREADS;
      if (j < n4) {
        float4 g = __ldg((const float4 *)w + j);
        ((float4 *)yr)[j] =
            make_float4(keep[k].x * rs * g.x, keep[k].y * rs * g.y,
                        keep[k].z * rs * g.z, keep[k].w * rs * g.w);
      }
    }
  } else if (vec) {
    for (long j = threadIdx.x; j < n4; j += THREADS) {
      float4 v = __ldg((const float4 *)xr + j), g = __ldg((const float4 *)w + j);
      ((float4 *)yr)[j] = make_float4(v.x * rs * g.x, v.y * rs * g.y,
                                      v.z * rs * g.z, v.w * rs * g.w);
    }
  } else {
    for (long c = threadIdx.x; c < cols; c += THREADS)
      yr[c] = xr[c] * rs * w[c];
  }
}
