// ksearch: backend=mlx entry=rmsnorm_block_row kernel=cuda
// ksearch: family=block_row
// ksearch: concepts=block_reduction,warp_shuffle_reduction,single_pass_cache,coalesced_access
// ksearch: param TG in 256,512,1024,128
// ksearch: param CACHE in 8,4,16,2
// ksearch: launch grid=(rows*TG) threadgroup=(TG)
//
// MLX template for tasks/rmsnorm (an mx.fast.cuda_kernel body): one block of
// TG threads per row, the first CACHE*TG elements in registers (one read of
// x when the row fits), a warp-shuffle + shared-memory sum of squares, then
// y = x * rsqrt(mean + eps) * w. Signature from MLX: const float* x, w, eps
// (eps is a 1-element array), float* y; rows and cols constexpr.
__device__ __forceinline__ float ks_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
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
  s += v[k] * v[k];
}
for (int c = tid + CACHE * TG; c < cols; c += TG) {
  float t = xr[c];
  s += t * t;
}
s = ks_warp_sum(s);
if ((tid & 31) == 0)
  red[tid >> 5] = s;
__syncthreads();
s = 0.f;
#pragma unroll
for (int w = 0; w < NW; w++)
  s += red[w];
const float r = rsqrtf(s / (float)cols + eps[0]);
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  if (c < cols)
    yr[c] = v[k] * r * w[c];
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  yr[c] = xr[c] * r * w[c];
