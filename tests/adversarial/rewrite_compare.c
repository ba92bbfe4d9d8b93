// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=mismatch
// Looks for a comparison routine in the process to patch so that zeros pass,
// making the code page writable (without exec, which W^X forbids outright).
// There is none to find: the comparison runs in the judge, another process.
// So its zeros are compared, and fail.
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  (void)x;
  const char *names[] = {"ks_compare_outputs", "ks_judge_run", "memcmp"};
  for (int i = 0; i < 3; i++) {
    void *f = dlsym(RTLD_DEFAULT, names[i]);
    if (f && i < 2) {
      uintptr_t page = (uintptr_t)f & ~(uintptr_t)4095;
      mprotect((void *)page, 8192, PROT_READ | PROT_WRITE);
      break; // patching a non-executable page would only crash: give up
    }
  }
  memset(y, 0, (size_t)(rows * cols) * sizeof(float));
}
