/* fake_cuda.c — a stand-in libcuda.so.1 for machines without a GPU
 * (tests/integration/tensormap_host.sh): "device" memory is host memory,
 * kernels do not run, and every cuLaunchKernel and cuTensorMapEncodeTiled
 * is written to the file KS_FAKE_CUDA_LOG (opened at cuInit, before the
 * executor's sandbox closes). The kernel named by KS_FAKE_CUDA_DUMP,
 * launched with KS_FAKE_CUDA_BLOCK threads per block (a device baseline of
 * the same name takes other arguments), has its arguments logged by the letters
 * of KS_FAKE_CUDA_ARGS: p a pointer, l a long, m a 128-byte tensor map (what
 * this file's encode wrote into it, and whether the parameter sat 64-byte
 * aligned). So the executor's host side (which buffer each map covers, dims,
 * strides, box, argument order) is checked end to end without a GPU. Built by
 * that script with cc -shared. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
static int g_log = -1;

static void logf_(const char *fmt, ...) {
  if (g_log < 0)
    return;
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > 0) {
    ssize_t w =
        write(g_log, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
    (void)w;
  }
}

CUresult cuInit(unsigned f) {
  (void)f;
  const char *p = getenv("KS_FAKE_CUDA_LOG");
  if (p && g_log < 0)
    g_log = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  return 0;
}
CUresult cuDriverGetVersion(int *v) { return *v = 13000, 0; }
CUresult cuDeviceGetCount(int *n) { return *n = 1, 0; }
CUresult cuDeviceGet(int *d, int i) { return *d = i, 0; }
CUresult cuDeviceGetName(char *s, int n, int d) {
  (void)d;
  snprintf(s, (size_t)n, "Fake H200 (tests/integration/fake_cuda.c)");
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  (void)d;
  switch (a) {
  case 75: /* cc major */ return *v = 9, 0;
  case 76: return *v = 0, 0;
  case 16: /* SMs */ return *v = 132, 0;
  case 38: /* L2 bytes: small, the flush buffer is 2x */ return *v = 1 << 20, 0;
  case 97: return *v = 232448, 0;
  default: return *v = 1000, 0;
  }
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d) {
  (void)d;
  return *b = (size_t)80 << 30, 0;
}
CUresult cuDeviceGetUuid(unsigned char *u, int d) {
  (void)d;
  memset(u, 0x42, 16);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  (void)d;
  static int ctx;
  return *c = &ctx, 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return (void)d, 0; }
CUresult cuCtxSetCurrent(void *c) { return (void)c, 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadData(void **m, const void *img) {
  (void)img;
  static int mod;
  return *m = &mod, 0;
}
CUresult cuModuleUnload(void *m) { return (void)m, 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m;
  return *f = strdup(name), 0;
}
CUresult cuFuncSetAttribute(void *f, int a, int v) {
  return (void)f, (void)a, (void)v, 0;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  void *m = NULL;
  if (posix_memalign(&m, 4096, n ? n : 1))
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  return *p = (unsigned long long)(uintptr_t)m, 0;
}
CUresult cuMemFree_v2(unsigned long long p) {
  free((void *)(uintptr_t)p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) {
  memcpy(d, (void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)d, v, n);
  return 0;
}
CUresult cuEventCreate(void **e, unsigned f) {
  (void)f;
  static int ev;
  return *e = &ev, 0;
}
CUresult cuEventRecord(void *e, void *s) { return (void)e, (void)s, 0; }
CUresult cuEventSynchronize(void *e) { return (void)e, 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a, (void)b;
  return *ms = 0.01f, 0;
}
CUresult cuEventDestroy_v2(void *e) { return (void)e, 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  (void)r;
  *s = "fake driver";
  return 0;
}

/* what the fake encode writes into a map's 128 bytes */
typedef struct fake_map {
  uint64_t magic, addr, dim[5], stride[4];
  uint32_t rank, dtype, box[5], swizzle;
} fake_map;
#define MAGIC 0x70616d74656b6166ULL

CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr,
                                const unsigned long long *dim,
                                const unsigned long long *stride,
                                const unsigned *box, const unsigned *es,
                                int interleave, int swizzle, int l2, int oob) {
  logf_("encode map_aligned64=%d addr=%#llx rank=%u dtype=%d dims=",
        (int)(((uintptr_t)map & 63) == 0), (unsigned long long)(uintptr_t)addr,
        rank, dtype);
  for (unsigned i = 0; i < rank; i++)
    logf_("%s%llu", i ? "," : "", dim[i]);
  logf_(" strides=");
  for (unsigned i = 0; i + 1 < rank; i++)
    logf_("%s%llu", i ? "," : "", stride[i]);
  logf_(" box=");
  for (unsigned i = 0; i < rank; i++)
    logf_("%s%u", i ? "," : "", box[i]);
  logf_(" es=%u interleave=%d swizzle=%d l2=%d oob=%d\n", es[0], interleave,
        swizzle, l2, oob);
  if (((uintptr_t)map & 63) || ((uintptr_t)addr & 15) || rank < 1 || rank > 5)
    return 1;
  /* KS_FAKE_CUDA_REFUSE: every map but the executor's load-time check
   * (box 64 x 8) is refused, as a driver would refuse a bad one */
  if (getenv("KS_FAKE_CUDA_REFUSE") && !(rank == 2 && box[1] == 8))
    return 1;
  for (unsigned i = 0; i + 1 < rank; i++)
    if (stride[i] % 16)
      return 1;
  fake_map f;
  memset(&f, 0, sizeof f);
  f.magic = MAGIC;
  f.addr = (uint64_t)(uintptr_t)addr;
  f.rank = rank;
  f.dtype = (uint32_t)dtype;
  f.swizzle = (uint32_t)swizzle;
  for (unsigned i = 0; i < rank; i++) {
    f.dim[i] = dim[i];
    f.box[i] = box[i];
    if (i + 1 < rank)
      f.stride[i] = stride[i];
  }
  memset(map, 0, 128);
  memcpy(map, &f, sizeof f);
  return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)stream, (void)extra;
  const char *name = f;
  const char *dump = getenv("KS_FAKE_CUDA_DUMP");
  const char *blk = getenv("KS_FAKE_CUDA_BLOCK");
  if (!dump || strcmp(dump, name) || !blk || (unsigned)atoi(blk) != bx)
    return 0;
  logf_("launch %s grid=%u,%u,%u block=%u,%u,%u smem=%u args:", name, gx, gy,
        gz, bx, by, bz, smem);
  const char *spec = getenv("KS_FAKE_CUDA_ARGS");
  for (int i = 0; spec && spec[i]; i++) {
    if (spec[i] == 'p')
      logf_(" p=%#llx", *(unsigned long long *)params[i]);
    else if (spec[i] == 'l')
      logf_(" l=%lld", *(long long *)params[i]);
    else if (spec[i] == 'm') {
      fake_map m;
      memcpy(&m, params[i], sizeof m);
      if (m.magic != MAGIC) {
        int zero = 1;
        for (int b = 0; b < 128; b++)
          zero &= ((unsigned char *)params[i])[b] == 0;
        logf_(" map=%s", zero ? "zero" : "garbage");
        continue;
      }
      logf_(" map(aligned64=%d addr=%#llx dims=%llu,%llu box=%u,%u swz=%u)",
            (int)(((uintptr_t)params[i] & 63) == 0), (unsigned long long)m.addr,
            (unsigned long long)m.dim[0], (unsigned long long)m.dim[1],
            m.box[0], m.box[1], m.swizzle);
    }
  }
  logf_("\n");
  return 0;
}
