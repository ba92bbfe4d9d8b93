/* malloc_guard.c — tells the parent when an allocation fails.
 *
 * The runner runs under RLIMIT_AS, so a candidate that asks for 64 GiB gets
 * NULL from malloc, and then usually crashes or computes garbage. Recording
 * the failed request lets the parent classify that outcome as "oom" with the
 * size asked for, instead of a bare crash. The runner exports these symbols
 * (-rdynamic), so they interpose on the candidate's calls; the memory itself
 * still comes from glibc's allocator (__libc_*), which the documented malloc
 * replacement rules allow. Not built under AddressSanitizer, which owns
 * malloc itself. */
#ifndef __SANITIZE_ADDRESS__
#include "eval/exec_proto.h"
#include "util/util.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static void report(size_t bytes) {
  int e = errno;
  ks_write_event_u64(KS_EXEC_EV_FD,
                     "{\"ev\":\"alloc_failed\",\"bytes\":", bytes);
  errno = e;
}

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  if (!p && n)
    report(n);
  return p;
}

void *calloc(size_t a, size_t b) {
  void *p = __libc_calloc(a, b);
  if (!p && a && b)
    report(a * b);
  return p;
}

void *realloc(void *old, size_t n) {
  void *p = __libc_realloc(old, n);
  if (!p && n)
    report(n);
  return p;
}

void *aligned_alloc(size_t align, size_t n) {
  void *p = __libc_memalign(align, n);
  if (!p && n)
    report(n);
  return p;
}

int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1)))
    return EINVAL;
  void *p = __libc_memalign(align, n);
  if (!p && n) {
    report(n);
    return ENOMEM;
  }
  *out = p;
  return 0;
}
#endif
