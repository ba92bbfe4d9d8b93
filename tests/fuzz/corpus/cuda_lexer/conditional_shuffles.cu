__device__ float red(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
__global__ void k(float *x, int n) {
  int lane = threadIdx.x % 32;
  float a = x[0];
  a = __shfl_xor_sync(0xffffffff, a, 1);
  if (lane < 4) { a += 1; a = __shfl_xor_sync(0xffffffff, a, 2); }
  { float b = 2; b = red(b); x[1] = b; }
  for (int i = 0; i < n; i++) { a = red(a); }
  if (lane) { x[2] = 1; } else { x[3] = 2; a = __shfl_down_sync(0xffffffff, a, 1); }
  a = lane ? red(a) : a;
  while (lane < 8) { { int q = 1; a += q; } a = __shfl_xor_sync(0xffffffff, a, 4); break; }
  if (n) a = red(a);
  x[4] = a;
}
