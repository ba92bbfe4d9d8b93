// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=forbidden system call: mprotect
// Finds the executor's clock (its symbols are exported) and rewrites it in
// memory to return a constant, so every call would look like 0 ns. Code
// pages can never be made writable and executable again (W^X in the seccomp
// filter); and the time that counts is the judge's anyway.
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  void *clk = dlsym(RTLD_DEFAULT, "ks_now_ns");
  if (!clk)
    clk = dlsym(RTLD_DEFAULT, "clock_gettime");
  if (clk) {
    uintptr_t page = (uintptr_t)clk & ~(uintptr_t)4095;
    if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
      // x86-64: xor eax, eax; ret
      static const unsigned char zero[] = {0x31, 0xc0, 0xc3};
      memcpy(clk, zero, sizeof zero);
    }
  }
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += exp((double)(xr[c] - m));
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)(xr[c] - m)) / s);
  }
}
