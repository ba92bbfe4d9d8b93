/* driver.c — the CUDA driver API through dlopen, the device choice and
 * identity, and nvcc (see cu.h). */
#include "backend/cuda/cu.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYM(field, name)                                                       \
  do {                                                                         \
    *(void **)&cu->field = dlsym(cu->lib, name);                               \
    if (!cu->field) {                                                          \
      missing = name;                                                          \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

ks_code ks_cu_load(ks_cu *cu, ks_err *err) {
  memset(cu, 0, sizeof *cu);
  cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu->lib)
    return ks_err_set(err, KS_ERR_ENV,
                      "no CUDA driver/GPU: libcuda.so.1 cannot be loaded "
                      "(%.300s); the cuda backend needs an NVIDIA GPU with "
                      "its driver (nvidia-smi should list it)",
                      dlerror());
  const char *missing = NULL;
  SYM(Init, "cuInit");
  SYM(DriverGetVersion, "cuDriverGetVersion");
  SYM(DeviceGetCount, "cuDeviceGetCount");
  SYM(DeviceGet, "cuDeviceGet");
  SYM(DeviceGetName, "cuDeviceGetName");
  SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
  SYM(DeviceTotalMem, "cuDeviceTotalMem_v2");
  SYM(DeviceGetUuid, "cuDeviceGetUuid");
  SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  SYM(CtxSetCurrent, "cuCtxSetCurrent");
  SYM(CtxSynchronize, "cuCtxSynchronize");
  SYM(ModuleLoadData, "cuModuleLoadData");
  SYM(ModuleUnload, "cuModuleUnload");
  SYM(ModuleGetFunction, "cuModuleGetFunction");
  SYM(FuncSetAttribute, "cuFuncSetAttribute");
  SYM(LaunchKernel, "cuLaunchKernel");
  SYM(MemAlloc, "cuMemAlloc_v2");
  SYM(MemFree, "cuMemFree_v2");
  SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
  SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
  SYM(MemsetD8, "cuMemsetD8_v2");
  SYM(EventCreate, "cuEventCreate");
  SYM(EventRecord, "cuEventRecord");
  SYM(EventSynchronize, "cuEventSynchronize");
  SYM(EventElapsedTime, "cuEventElapsedTime");
  SYM(EventDestroy, "cuEventDestroy_v2");
  SYM(GetErrorName, "cuGetErrorName");
  SYM(GetErrorString, "cuGetErrorString");
  /* optional: only candidates with tensormap lines need it */
  *(void **)&cu->TensorMapEncodeTiled =
      dlsym(cu->lib, "cuTensorMapEncodeTiled");
  /* optional: only launch lines with pdl= need it */
  *(void **)&cu->LaunchKernelEx = dlsym(cu->lib, "cuLaunchKernelEx");
  CUresult r = cu->Init(0);
  if (r != 0) {
    char b[256];
    ks_cu_errstr(cu, r, b, sizeof b);
    ks_cu_unload(cu);
    return ks_err_set(err, KS_ERR_ENV, "no CUDA driver/GPU: cuInit: %s", b);
  }
  return KS_OK;
fail:
  ks_cu_unload(cu);
  return ks_err_set(err, KS_ERR_ENV,
                    "no usable CUDA driver: libcuda.so.1 lacks %s (a driver "
                    "for CUDA 12 or newer is needed)",
                    missing);
}

void ks_cu_unload(ks_cu *cu) {
  if (cu->lib)
    dlclose(cu->lib);
  memset(cu, 0, sizeof *cu);
}

const char *ks_cu_errstr(const ks_cu *cu, CUresult r, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  if (cu->GetErrorName)
    cu->GetErrorName(r, &name);
  if (cu->GetErrorString)
    cu->GetErrorString(r, &text);
  snprintf(buf, n, "%s (%s)", name ? name : "CUDA error",
           text ? text : "no description");
  return buf;
}

static void arch_of(int major, int minor, char *arch, size_t n) {
  /* the arch-specific target from Hopper on: wgmma and setmaxnreg need it,
   * and the cubin runs only on this very architecture anyway */
  snprintf(arch, n, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
}

ks_code ks_cu_pick(const ks_cu *cu, ks_cu_dev *d, ks_err *err) {
  memset(d, 0, sizeof *d);
  int count = 0;
  char b[256];
  CUresult r = cu->DeviceGetCount(&count);
  if (r != 0 || count == 0)
    return ks_err_set(err, KS_ERR_ENV, "no CUDA driver/GPU: %s",
                      r ? ks_cu_errstr(cu, r, b, sizeof b)
                        : "the driver lists no device");
  const char *e = getenv("KSEARCH_CUDA_DEVICE");
  d->index = e && *e ? atoi(e) : 0;
  if (d->index < 0 || d->index >= count)
    return ks_err_set(err, KS_ERR_INPUT,
                      "KSEARCH_CUDA_DEVICE=%d: there %s %d CUDA device%s "
                      "(0..%d)",
                      d->index, count == 1 ? "is" : "are", count,
                      count == 1 ? "" : "s", count - 1);
  if ((r = cu->DeviceGet(&d->dev, d->index)) != 0)
    return ks_err_set(err, KS_ERR_ENV, "cuDeviceGet(%d): %s", d->index,
                      ks_cu_errstr(cu, r, b, sizeof b));
  cu->DeviceGetName(d->name, sizeof d->name, d->dev);
  cu->DeviceGetAttribute(&d->cc_major, KS_CU_ATTR_CC_MAJOR, d->dev);
  cu->DeviceGetAttribute(&d->cc_minor, KS_CU_ATTR_CC_MINOR, d->dev);
  cu->DeviceGetAttribute(&d->sm_count, KS_CU_ATTR_SM_COUNT, d->dev);
  cu->DeviceGetAttribute(&d->l2_bytes, KS_CU_ATTR_L2_SIZE, d->dev);
  cu->DeviceGetAttribute(&d->smem_optin, KS_CU_ATTR_SMEM_OPTIN, d->dev);
  cu->DeviceGetAttribute(&d->clock_khz, KS_CU_ATTR_CLOCK_RATE, d->dev);
  cu->DriverGetVersion(&d->driver_version);
  cu->DeviceTotalMem(&d->total_mem, d->dev);
  unsigned char u[16] = {0};
  cu->DeviceGetUuid(u, d->dev);
  for (int i = 0; i < 16; i++)
    snprintf(d->uuid + 2 * i, 3, "%02x", u[i]);
  const char *want = getenv("KSEARCH_CUDA_ARCH");
  if (want && *want)
    ks_strlcpy(d->arch, want, sizeof d->arch);
  else
    arch_of(d->cc_major, d->cc_minor, d->arch, sizeof d->arch);
  snprintf(d->identity, sizeof d->identity, "%s|cc%d.%d|%s|%s|driver%d",
           d->name, d->cc_major, d->cc_minor, d->uuid, d->arch,
           d->driver_version);
  return KS_OK;
}

ks_code ks_cu_target(char *arch, size_t an, char *identity, size_t in,
                     ks_err *err) {
  const char *want = getenv("KSEARCH_CUDA_ARCH");
  ks_cu cu;
  ks_err e2;
  if (ks_cu_load(&cu, &e2) == KS_OK) {
    ks_cu_dev d;
    ks_code rc = ks_cu_pick(&cu, &d, err);
    ks_cu_unload(&cu);
    if (rc == KS_OK) {
      ks_strlcpy(arch, d.arch, an);
      ks_strlcpy(identity, d.identity, in);
      return KS_OK;
    }
    if (!want || !*want)
      return rc;
  } else if (!want || !*want) {
    *err = e2;
    return e2.code;
  }
  /* no GPU here: build for the named architecture (CI's compile checks) */
  if (strncmp(want, "sm_", 3) || strlen(want) > 10)
    return ks_err_set(err, KS_ERR_INPUT,
                      "KSEARCH_CUDA_ARCH=%s: expected an nvcc machine "
                      "architecture such as sm_90a",
                      want);
  ks_strlcpy(arch, want, an);
  snprintf(identity, in, "arch:%s (no device)", want);
  return KS_OK;
}

const char *ks_cu_nvcc(void) {
  const char *e = getenv("KSEARCH_NVCC");
  if (e && *e)
    return e;
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
    return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

ks_code ks_cu_nvcc_version(char *out, size_t n, ks_err *err) {
  char *argv[] = {(char *)ks_cu_nvcc(), "--version", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result r;
  ks_code rc = ks_run_capture(argv, NULL, 30, &log, &r, err);
  if (!rc && !(r.exited && r.exit_status == 0))
    rc = ks_err_set(err, KS_ERR_ENV, "%s --version failed: %.300s", argv[0],
                    log.data ? log.data : "");
  if (rc) {
    ks_buf_free(&log);
    return ks_err_set(err, KS_ERR_ENV,
                      "nvcc (the CUDA toolkit's compiler) does not run: "
                      "%.300s; install the CUDA toolkit or set KSEARCH_NVCC",
                      err->msg);
  }
  const char *rel = log.data ? strstr(log.data, "release") : NULL;
  const char *nl = rel ? strchr(rel, '\n') : NULL;
  size_t len = rel ? (nl ? (size_t)(nl - rel) : strlen(rel)) : 0;
  snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), rel ? rel : "");
  ks_buf_free(&log);
  return KS_OK;
}

ks_code ks_cu_compile(const char *src, const char *out, const char *arch,
                      char *const *defines, int n_defines, const char *cwd,
                      double timeout_s, ks_buf *log, ks_err *err) {
  /* -gencode compute_X,code=sm_X: a cubin for exactly this machine
   * architecture (the sm_90a shorthand also ran a plain sm_90 pass in
   * some nvcc versions, HOPPER.md); -cubin compiles device code only, so
   * no host code of the candidate is ever built into anything that runs */
  char gencode[96];
  const char *num = arch + 3; /* "90a" */
  snprintf(gencode, sizeof gencode, "-gencode=arch=compute_%s,code=%s", num,
           arch);
  char *argv[80];
  int a = 0;
  argv[a++] = (char *)ks_cu_nvcc();
  argv[a++] = "-cubin";
  argv[a++] = gencode;
  argv[a++] = "-O3";
  argv[a++] = "-std=c++17";
  argv[a++] = "--resource-usage";
  argv[a++] = "-lineinfo";
  for (int i = 0; i < n_defines && a < 60; i++)
    argv[a++] = defines[i];
  argv[a++] = "-o";
  argv[a++] = (char *)out;
  argv[a++] = (char *)src;
  argv[a] = NULL;
  ks_proc_result r;
  ks_buf mine;
  ks_buf_init(&mine);
  ks_code rc = ks_run_capture(argv, cwd, timeout_s, &mine, &r, err);
  const char *text = mine.data ? mine.data : "";
  if (rc)
    rc = ks_err_set(err, KS_ERR_ENV,
                    "%s does not run (%.200s); install the CUDA toolkit or "
                    "set KSEARCH_NVCC",
                    argv[0], err->msg);
  else if (r.timed_out)
    rc = ks_err_set(err, KS_ERR_CANDIDATE, "nvcc time limit of %.0f s exceeded",
                    timeout_s);
  else if (r.exited && r.exit_status == 127)
    rc = ks_err_set(err, KS_ERR_ENV,
                    "%s not found; install the CUDA toolkit or set "
                    "KSEARCH_NVCC",
                    argv[0]);
  else if (!(r.exited && r.exit_status == 0))
    rc = ks_err_set(err, KS_ERR_CANDIDATE, "nvcc failed:\n%.1900s", text);
  if (log)
    ks_buf_puts(log, text);
  ks_buf_free(&mine);
  return rc;
}
