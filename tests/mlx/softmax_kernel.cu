// ksearch: backend=mlx entry=softmax_row kernel=cuda
// ksearch: param TG in 256
// ksearch: launch grid=(rows*TG) threadgroup=(TG)
// A plain block-per-row softmax body for mx.fast.cuda_kernel (the tests'
// kernel-form candidate: on a machine whose MLX has no GPU, exit 3).
int r = blockIdx.x;
x += (long long)r * cols;
y += (long long)r * cols;
__shared__ float red[TG];
float m = __int_as_float(0xff800000); // -inf (MLX 0.32.4 defines no inf)
for (int c = threadIdx.x; c < cols; c += TG) m = fmaxf(m, x[c]);
red[threadIdx.x] = m;
__syncthreads();
for (int s = TG / 2; s > 0; s >>= 1) {
  if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
  __syncthreads();
}
m = red[0];
__syncthreads();
float sum = 0.f;
for (int c = threadIdx.x; c < cols; c += TG) sum += expf(x[c] - m);
red[threadIdx.x] = sum;
__syncthreads();
for (int s = TG / 2; s > 0; s >>= 1) {
  if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
  __syncthreads();
}
float inv = 1.f / red[0];
for (int c = threadIdx.x; c < cols; c += TG) y[c] = expf(x[c] - m) * inv;
