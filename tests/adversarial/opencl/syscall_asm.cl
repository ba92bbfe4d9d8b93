// ksearch: backend=opencl entry=softmax
// ksearch: launch global=(rows) local=(64)
// adversarial: task=softmax expect=rejected reason=forbidden system call
// Raw x86-64 `syscall` from inline assembly: socket(AF_INET, SOCK_STREAM).
// PoCL compiles OpenCL C to native code and accepts inline assembly, and the
// kernel runs on PoCL's worker threads, which exist before the sandbox
// closes: the seccomp filter must cover them too (TSYNC). The keyword is
// pasted together by the preprocessor, as an adversary would do to get past
// the spec validator (which rejects a plain __asm__ by its token), so this
// tests the sandbox itself. Elsewhere it does not compile; the test runs it
// on PoCL/x86-64 only.

#define PASTE(a, b) a##b
#define ASM PASTE(__as, m__)

__kernel void softmax(__global const float *x, __global float *y, long rows,
                      long cols) {
  long r = get_global_id(0);
  if (r >= rows)
    return;
  __global const float *xr = x + r * cols;
  __global float *yr = y + r * cols;
  float m = -INFINITY;
  for (long c = 0; c < cols; c++)
    m = fmax(m, xr[c]);
  float s = 0.0f;
  for (long c = 0; c < cols; c++)
    s += exp(xr[c] - m);
  for (long c = 0; c < cols; c++)
    yr[c] = exp(xr[c] - m) / s;
  if (r == 0) {
    long fd;
    ASM volatile("syscall"
                     : "=a"(fd)
                     : "a"(41L), "D"(2L), "S"(1L), "d"(0L)
                     : "rcx", "r11", "memory");
    if (fd >= 0)
      y[0] = 0.0f; // would make the answer wrong if the call got through
  }
}
