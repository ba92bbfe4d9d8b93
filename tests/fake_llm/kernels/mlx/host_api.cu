// ksearch: backend=mlx entry=rmsnorm kernel=cuda
// ksearch: launch grid=(rows*256) threadgroup=(256)
//
// A wrong MLX answer (fake model): host API in a cuda_kernel body, which MLX
// launches itself; the spec check refuses it before NVRTC.
// ksearch: body
float *tmp;
cudaMalloc(&tmp, cols * sizeof(float));
const int r = blockIdx.x;
for (int c = threadIdx.x; c < cols; c += 256)
  y[(long long)r * cols + c] = x[(long long)r * cols + c] * w[c];
