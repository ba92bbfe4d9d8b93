/* cu.h — what the CUDA backend's files share (DESIGN.md: Backend interface,
 * cuda): the CUDA driver API, loaded with dlopen("libcuda.so.1") at run time
 * so that ksearch builds, links and runs where there is no GPU; the device
 * choice (KSEARCH_CUDA_DEVICE=N, default 0) and its identity; the nvcc
 * command; and the support cubin (L2 flush and roofline kernels).
 *
 * The few driver types and constants used are declared here with the values
 * of the CUDA 13 cuda.h, so no toolkit header is needed to build ksearch.
 */
#ifndef KS_CU_H
#define KS_CU_H

#include "util/util.h"

#include <limits.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
  KS_CU_ATTR_CLOCK_RATE = 13, /* kHz */
  KS_CU_ATTR_SM_COUNT = 16,
  KS_CU_ATTR_MEM_CLOCK_RATE = 36,
  KS_CU_ATTR_BUS_WIDTH = 37,
  KS_CU_ATTR_L2_SIZE = 38,
  KS_CU_ATTR_CC_MAJOR = 75,
  KS_CU_ATTR_CC_MINOR = 76,
  KS_CU_ATTR_SMEM_OPTIN = 97,
  KS_CU_FUNC_MAX_DYN_SMEM = 8,
  KS_CU_ERROR_NOT_READY = 600,
};

/* CUtensorMap (cuda.h: CU_TENSOR_MAP_NUM_QWORDS 16, 64-byte aligned): the
 * opaque TMA descriptor cuTensorMapEncodeTiled fills, passed by value as a
 * kernel parameter (tensormap.h). */
typedef struct ks_cu_tensormap {
  _Alignas(64) unsigned long long opaque[16];
} ks_cu_tensormap;

/* cuLaunchKernelEx's configuration (cuda.h: CUlaunchConfig, CUlaunchAttribute
 * with its 64-byte value union); only programmatic stream serialization
 * (pdl= on a launch line, launch.h) is set. */
enum { KS_CU_LAUNCH_ATTR_PROGRAMMATIC_SERIALIZATION = 6 };
typedef struct ks_cu_launch_attr {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int i;
    unsigned long long u;
  } value;
} ks_cu_launch_attr;
typedef struct ks_cu_launch_config {
  unsigned grid[3], block[3], smem;
  CUstream stream;
  ks_cu_launch_attr *attrs;
  unsigned n_attrs;
} ks_cu_launch_config;

/* The driver entry points ksearch calls (versioned names as in cuda.h). */
typedef struct ks_cu {
  void *lib;
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DeviceTotalMem)(size_t *, CUdevice);
  CUresult (*DeviceGetUuid)(unsigned char *, CUdevice);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*GetErrorString)(CUresult, const char **);
  /* optional (NULL when the driver lacks it; CUDA 12.0+): tensorMap,
   * CUtensorMapDataType, rank, globalAddress, globalDim, globalStrides,
   * boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill */
  CUresult (*TensorMapEncodeTiled)(ks_cu_tensormap *, int, unsigned, void *,
                                   const unsigned long long *,
                                   const unsigned long long *, const unsigned *,
                                   const unsigned *, int, int, int, int);
  /* optional (CUDA 11.8+): launches with attributes (pdl=) */
  CUresult (*LaunchKernelEx)(const ks_cu_launch_config *, CUfunction, void **,
                             void **);
} ks_cu;

typedef struct ks_cu_dev {
  CUdevice dev;
  int index;
  char name[256];
  int cc_major, cc_minor, sm_count, l2_bytes, smem_optin, clock_khz;
  int driver_version;
  size_t total_mem;
  char uuid[40];
  char arch[16];      /* "sm_90a": what candidates are built for */
  char identity[512]; /* name|cc|uuid|driver: keys builds and rooflines */
} ks_cu_dev;

/* Loads libcuda.so.1 and cuInit(0)s it. KS_ERR_ENV "no CUDA driver/GPU"
 * (with the reason) when there is none. */
ks_code ks_cu_load(ks_cu *cu, ks_err *err);
void ks_cu_unload(ks_cu *cu);
/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access...)" */
const char *ks_cu_errstr(const ks_cu *cu, CUresult r, char *buf, size_t n);
/* The device KSEARCH_CUDA_DEVICE names (default 0), described. */
ks_code ks_cu_pick(const ks_cu *cu, ks_cu_dev *out, ks_err *err);
/* The architecture candidates are built for: KSEARCH_CUDA_ARCH when set
 * (e.g. sm_90a; CI builds without a GPU), else the device's own: sm_MN, with
 * the arch-specific "a" suffix from sm_90 on (wgmma, setmaxnreg). Fills a
 * device identity too ("arch:sm_90a (no device)" without a GPU). */
ks_code ks_cu_target(char *arch, size_t an, char *identity, size_t in,
                     ks_err *err);

/* nvcc: KSEARCH_NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH. */
const char *ks_cu_nvcc(void);
/* "release 13.0, V13.0.88": the toolkit's identity for build hashes;
 * KS_ERR_ENV when nvcc does not run. */
ks_code ks_cu_nvcc_version(char *out, size_t n, ks_err *err);
/* Compiles `src` to a cubin for `arch` with extra -D options (argv style,
 * NULL-terminated) under a time limit: KS_OK, KS_ERR_CANDIDATE with the log
 * (compile error or time limit), or KS_ERR_ENV. */
ks_code ks_cu_compile(const char *src, const char *out, const char *arch,
                      char *const *defines, int n_defines, const char *cwd,
                      double timeout_s, ks_buf *log, ks_err *err);

/* The support cubin (support.c): ks_flush (reads a buffer of 2x L2 between
 * timed repetitions) and the roofline kernels. Built once per (arch,
 * toolkit) under <cache>/cuda-support/<hash>/support.cubin. */
extern const char ks_cu_support_source[];
ks_code ks_cu_support_cubin(const char *cache_dir, const char *arch,
                            const char *nvcc_version, char *path, size_t n,
                            ks_err *err);

/* Runner tool mode `--cuda-roofline` (roofline_cuda.c): measures the picked
 * device and prints the numbers as JSON on stdout. Exit 0, 3 environment. */
int ks_cu_roofline_child(int argc, char **argv);

#endif
