// ksearch: backend=mlx entry=softmax_block_row kernel=cuda
// ksearch: family=block_row
// ksearch: concepts=block_reduction,warp_shuffle_reduction,single_pass_cache,coalesced_access
// ksearch: param TG in 256,512,1024,128
// ksearch: param CACHE in 8,4,16,2
// ksearch: launch grid=(rows*TG) threadgroup=(TG)
//
// MLX template for tasks/softmax (an mx.fast.cuda_kernel body): one block of
// TG threads per row; the first CACHE*TG elements of the row stay in
// registers (one read, one write when the row fits; MLX's own softmax reads
// twice), warp shuffles then one shared-memory pass per reduction. x and y
// come from MLX's signature (const float* x, float* y); rows and cols are
// constexpr (template arguments); TG and CACHE are macros.
__device__ __forceinline__ float ks_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
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
float m = __int_as_float(0xff800000); // -inf (MLX 0.32.4 defines no inf)
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  v[k] = c < cols ? xr[c] : __int_as_float(0xff800000); // -inf (MLX 0.32.4 defines no inf)
  m = fmaxf(m, v[k]);
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  m = fmaxf(m, xr[c]);
m = ks_warp_max(m);
if ((tid & 31) == 0)
  red[tid >> 5] = m;
__syncthreads();
m = red[0];
#pragma unroll
for (int w = 1; w < NW; w++)
  m = fmaxf(m, red[w]);
__syncthreads();
float s = 0.f;
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  v[k] = c < cols ? __expf(v[k] - m) : 0.f;
  s += v[k];
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  s += __expf(xr[c] - m);
s = ks_warp_sum(s);
if ((tid & 31) == 0)
  red[tid >> 5] = s;
__syncthreads();
s = 0.f;
#pragma unroll
for (int w = 0; w < NW; w++)
  s += red[w];
const float inv = 1.f / s;
#pragma unroll
for (int k = 0; k < CACHE; k++) {
  int c = tid + k * TG;
  if (c < cols)
    yr[c] = v[k] * inv;
}
for (int c = tid + CACHE * TG; c < cols; c += TG)
  yr[c] = __expf(xr[c] - m) * inv;
