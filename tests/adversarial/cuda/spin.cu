// ksearch: backend=cuda entry=softmax
// ksearch: launch grid=(1) block=(32)
// adversarial: task=softmax expect=timeout reason=time limit
// Never ends: spins on a flag nothing ever sets. The runner's wall-clock
// limit kills the process, and the driver tears the context down with it.
extern "C" __global__ void softmax(const float *x, float *y, long rows,
                                   long cols) {
  volatile float *p = y;
  while (p[0] != 12345.f)
    ;
}
