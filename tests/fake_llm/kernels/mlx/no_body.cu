// ksearch: backend=mlx entry=rmsnorm kernel=cuda
// ksearch: launch grid=(rows*256) threadgroup=(256)
//
// A wrong MLX answer (fake model): a whole __global__ kernel where MLX wants
// only a body after a `// ksearch: body` line.
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y,
                                   long rows, long cols, float eps) {
  const int r = blockIdx.x;
  for (int c = threadIdx.x; c < cols; c += 256)
    y[(long long)r * cols + c] = x[(long long)r * cols + c] * w[c];
}
