// ksearch: backend=cuda entry=softmax
// ksearch: launch kernel=softmax grid=(rows) block=(32)
// ksearch: launch kernel=stop_clock grid=(1) block=(32) pdl=(1)
// adversarial: task=softmax expect=ok reason=
// Tries to stop the clock early: the real work (a correct softmax after a
// 2 ms spin) lets an empty second kernel launch programmatically (pdl=) at
// once, hoping the end event is recorded when that one ends.
// tests/integration/cuda.sh checks the time still counts the spin: the end
// event follows every kernel of the stream, and the first launch never
// overlaps the judge's work.
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < 2000000ull);
  const long r = blockIdx.x;
  const float *xr = x + r * cols;
  float m = -INFINITY, s = 0.f;
  for (long c = threadIdx.x; c < cols; c += 32)
    m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  for (long c = threadIdx.x; c < cols; c += 32)
    s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  for (long c = threadIdx.x; c < cols; c += 32)
    y[r * cols + c] = expf(xr[c] - m) / s;
}

extern "C" __global__ void stop_clock(const float *x, float *y, long rows,
                                      long cols) {}
