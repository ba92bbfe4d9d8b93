// ksearch: backend=mlx entry=layernorm_block_row kernel=cuda
// ksearch: family=block_row
// ksearch: concepts=block_reduction,warp_shuffle_reduction,single_pass_cache,coalesced_access
// ksearch: param TG in 256,512,1024,128
// ksearch: param CACHE in 8,4,16,2
// ksearch: launch grid=(rows*TG) threadgroup=(TG)
//
// MLX template for tasks/layernorm (an mx.fast.cuda_kernel body): one block
// of TG threads per row, the first CACHE*TG elements in registers; the mean,
// then the variance as the mean of (x - mu)^2 (two reductions over the
// cached values, not E[x^2] - mu^2, which cancels), then y = (x - mu) *
// rsqrt(var + eps) * w + b. Signature from MLX: const float* x, w, b, eps,
// float* y; rows and cols constexpr.
__device__ __forceinline__ float ks_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// Block sum: every thread gets it. red has TG/32 floats.
__device__ __forceinline__ float ks_block_sum(float v, float *red, int nw) {
  v = ks_warp_sum(v);
  if ((threadIdx.x & 31) == 0)
    red[threadIdx.x >> 5] = v;
  __syncthreads();
  float s = 0.f;
  for (int w = 0; w < nw; w++)
    s += red[w];
  __syncthreads();
  return s;
}
// ksearch: body
constexpr int NW = TG / 32;
__shared__ float red[NW];
const int tid = threadIdx.x;
const float *xr = x + (long long)blockIdx.x * cols;
float *yr = y + (long long)blockIdx.x * cols;
float v[CACHE];
float s = 0.f;
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  v[k] = c < cols ? xr[c] : 0.f;
  s += v[k];
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  s += xr[c];
const float mu = ks_block_sum(s, red, NW) / (float)cols;
float q = 0.f;
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  float d = c < cols ? v[k] - mu : 0.f;
  q += d * d;
}
for (int c = tid + CACHE * TG; c < cols; c += TG) {
  float d = xr[c] - mu;
  q += d * d;
}
const float r = rsqrtf(ks_block_sum(q, red, NW) / (float)cols + eps[0]);
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  if (c < cols)
    yr[c] = (v[k] - mu) * r * w[c] + b[c];
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  yr[c] = (xr[c] - mu) * r * w[c] + b[c];
