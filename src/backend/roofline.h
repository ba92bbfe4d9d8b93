/* roofline.h — the measured ceilings of a target: streaming memory bandwidth
 * and peak FP32 FLOP/s, shared by every backend (DESIGN.md: Vocabulary,
 * "roofline fraction"; Spec). Each backend measures its own device once;
 * the result is cached per machine so that `ksearch run` and `ksearch eval`
 * can report a roofline fraction for every timed call without re-measuring.
 */
#ifndef KS_ROOFLINE_H
#define KS_ROOFLINE_H

#include "ksearch.h"

#include <jansson.h>

typedef struct ks_roofline {
  char backend[16];      /* "c" */
  char device[128];      /* CPU model name from /proc/cpuinfo; for opencl
                            the OpenCL device name */
  char machine_key[128]; /* hostname + cpu model hash (opencl: device
                            identity hash) + thread count; names the cache
                            file */
  int threads;
  double read_gbps, write_gbps, copy_gbps, triad_gbps;
  /* The roofline's memory ceiling: max(read, copy, triad). STREAM
   * convention: copy and triad count the bytes read plus the bytes written
   * (no write-allocate traffic). */
  double bandwidth_gbps;
  double peak_gflops; /* vector FMA FP32, 2 flops per lane per FMA */
  /* GPUs (cuda): L2 bandwidth, bf16 tensor-core peak and the SM clock seen
   * while measuring; 0 where not measured */
  double l2_gbps, tc_gflops, sm_clock_mhz;
  char isa[32];       /* "avx512" | "avx2" | "sse" | "neon" | "generic" */
  int vector_floats;  /* floats per SIMD register of that ISA, as measured
                         with (the planner's first vector width); 0 unknown */
  double measured_at; /* unix time */
  char source[64];    /* "measured by ksearch roofline" */
} ks_roofline;

/* Cached per machine in <cache>/roofline-<backend>-<machine_key>.json;
 * measured (and the cache written) when absent, unreadable, or when
 * remeasure is true. threads <= 0 means the number of online CPUs. A backend
 * without a measurement yet gives KS_ERR_ENV. */
ks_code ks_roofline_get(const char *backend, int threads, bool remeasure,
                        ks_roofline *out, ks_err *err);

/* Measures this CPU with `threads` OpenMP threads (<= 0: online CPUs).
 * Takes a few seconds. The environment variable KSEARCH_ROOFLINE_MIB
 * overrides the per-array size in MiB (tests use a small one; a size that
 * fits in cache overstates the bandwidth). Implemented in
 * c/roofline_native.c, which is compiled with -march=native -fopenmp. */
ks_code ks_roofline_measure_c(int threads, ks_roofline *out, ks_err *err);
/* About `flops` FP32 FMA flops on `threads` threads with the roofline's
 * peak kernel; the wall seconds, and in *done (may be NULL) the flops done.
 * The host compute probe (runner) and the cached peak share it. */
double ks_fma_run(double flops, int threads, double *done);

/* The OpenCL device's roofline (opencl/roofline_opencl.c): measured in a
 * child `ksearch-runner --opencl-roofline THREADS` with copy/triad/read/write
 * kernels for the bandwidth and an FMA kernel for the FLOP/s, timed with
 * profiling events. */
ks_code ks_roofline_measure_opencl(int threads, ks_roofline *out, ks_err *err);
/* Name and identity (platform, versions, driver) of the OpenCL device
 * KSEARCH_OPENCL_DEVICE picks; false when there is none. */
bool ks_roofline_opencl_identity(char *device, size_t n, char *identity,
                                 size_t m);

/* The CUDA device's roofline (cuda/roofline_cuda.c): measured in a child
 * `ksearch-runner --cuda-roofline SUPPORT.cubin` with ksearch's own kernels
 * timed with CUDA events; bandwidth_gbps = max(read, copy). */
ks_code ks_roofline_measure_cuda(int threads, ks_roofline *out, ks_err *err);
/* Name and identity of the CUDA device KSEARCH_CUDA_DEVICE picks. */
bool ks_roofline_cuda_identity(char *device, size_t n, char *identity,
                               size_t m);

/* Fills backend, device, machine_key and threads (threads <= 0: online
 * CPUs) and zeroes the rest; the first step of every measurement. */
void ks_roofline_identify(const char *backend, int threads, ks_roofline *out);

/* The cache file of (backend, this machine, threads); creates the cache
 * folder ($KSEARCH_CACHE_DIR, else $XDG_CACHE_HOME/ksearch, else
 * ~/.cache/ksearch). */
ks_code ks_roofline_cache_path(const char *backend, int threads, char *out,
                               size_t n, ks_err *err);

json_t *ks_roofline_to_json(const ks_roofline *r);
ks_code ks_roofline_from_json(const json_t *j, ks_roofline *out, ks_err *err);

/* Attainable-performance roofline fraction of one timed call:
 * floor = max(bytes / bandwidth, flops / peak); fraction = floor / time.
 * 0 when the time is not positive or the call has no cost. */
double ks_roofline_fraction(const ks_roofline *r, double bytes, double flops,
                            double time_s);

#endif
