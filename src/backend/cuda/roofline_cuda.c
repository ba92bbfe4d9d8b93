/* roofline_cuda.c — the CUDA backend's roofline (DESIGN.md: Spec,
 * "roofline fraction"): DRAM read, write and copy bandwidth over 1 GiB
 * buffers, L2 bandwidth (a 16 MiB buffer read again and again), fp32 FMA
 * peak, bf16 tensor-core peak (mma.sync m16n8k16, ksearch's own kernel) and
 * the SM clock seen (clock64 ticks over %globaltimer), each the best of 5
 * event-timed runs after a warm-up, with the clocks as they are.
 *
 * The kernels are the support cubin's (support.c). The measurement runs in
 * a child (`ksearch-runner --cuda-roofline SUPPORT.cubin`) so that a driver
 * fault costs a child, not ksearch; the parent parses its JSON. Caching per
 * device identity lives in ../roofline.c, as for the other backends.
 */
#include "backend/cuda/cu.h"
#include "backend/roofline.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NREP 5

typedef struct rl {
  ks_cu cu;
  ks_cu_dev d;
  CUmodule mod;
  CUevent e0, e1;
} rl;

/* Best time in seconds of NREP launches after one warm-up; < 0 on error. */
static double best_of(rl *r, const char *name, unsigned grid, unsigned block,
                      void **args) {
  CUfunction f;
  if (r->cu.ModuleGetFunction(&f, r->mod, name))
    return -1;
  double best = 1e30;
  for (int i = 0; i <= NREP; i++) {
    float ms = 0;
    if (r->cu.EventRecord(r->e0, NULL) ||
        r->cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL) ||
        r->cu.EventRecord(r->e1, NULL) || r->cu.CtxSynchronize() ||
        r->cu.EventElapsedTime(&ms, r->e0, r->e1))
      return -1;
    if (i > 0 && ms * 1e-3 < best)
      best = ms * 1e-3;
  }
  return best;
}

int ks_cu_roofline_child(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: ksearch-runner --cuda-roofline SUPPORT.cubin\n");
    return 2;
  }
  rl r;
  memset(&r, 0, sizeof r);
  ks_err err;
  if (ks_cu_load(&r.cu, &err) || ks_cu_pick(&r.cu, &r.d, &err)) {
    printf("%s\n", err.msg);
    return 3;
  }
  char *data = NULL;
  CUcontext ctx;
  if (ks_read_file(argv[2], &data, NULL, &err)) {
    printf("%s\n", err.msg);
    return 3;
  }
  CUresult e = r.cu.PrimaryCtxRetain(&ctx, r.d.dev);
  if (!e)
    e = r.cu.CtxSetCurrent(ctx);
  if (!e)
    e = r.cu.ModuleLoadData(&r.mod, data);
  free(data);
  const size_t bytes = (size_t)1 << 30, l2_bytes = (size_t)16 << 20;
  CUdeviceptr a = 0, b = 0, sink = 0;
  if (!e)
    e = r.cu.MemAlloc(&a, bytes);
  if (!e)
    e = r.cu.MemAlloc(&b, bytes);
  if (!e)
    e = r.cu.MemAlloc(&sink, 4096);
  if (!e)
    e = r.cu.MemsetD8(a, 0x3c, bytes);
  if (!e)
    e = r.cu.MemsetD8(b, 0x3c, bytes);
  if (!e)
    e = r.cu.EventCreate(&r.e0, 0);
  if (!e)
    e = r.cu.EventCreate(&r.e1, 0);
  if (e) {
    char buf[256];
    printf("CUDA roofline setup: %s\n",
           ks_cu_errstr(&r.cu, e, buf, sizeof buf));
    return 3;
  }
  unsigned sm = (unsigned)r.d.sm_count;
  unsigned long long n16 = bytes / 16, l2n = l2_bytes / 16;
  float v = 1.0f, m = 0.999f, add = 0.001f;
  int l2reps = 64, fma_iters = 8192, mma_iters = 4096;
  long long spin = 20000000; /* 20 ms */
  void *ra[] = {&a, &n16, &sink};
  void *wa[] = {&b, &n16, &v};
  void *ca[] = {&a, &b, &n16};
  void *la[] = {&a, &l2n, &l2reps, &sink};
  void *fa[] = {&sink, &fma_iters, &m, &add};
  void *ma[] = {&sink, &mma_iters};
  void *ka[] = {&sink, &spin};
  double t_read = best_of(&r, "ks_rl_read", sm * 4, 512, ra);
  double t_write = best_of(&r, "ks_rl_write", sm * 4, 512, wa);
  double t_copy = best_of(&r, "ks_rl_copy", sm * 4, 512, ca);
  double t_l2 = best_of(&r, "ks_rl_l2", sm * 4, 512, la);
  double t_fma = best_of(&r, "ks_rl_fma", sm * 8, 256, fa);
  double t_mma = best_of(&r, "ks_rl_mma", sm * 4, 256, ma);
  double t_clk = best_of(&r, "ks_rl_clock", sm, 32, ka);
  unsigned long long ticks[2] = {0, 0};
  if (t_clk > 0)
    r.cu.MemcpyDtoH(ticks, sink, sizeof ticks);
  if (t_read <= 0 || t_write <= 0 || t_copy <= 0 || t_l2 <= 0 || t_fma <= 0 ||
      t_mma <= 0) {
    printf("CUDA roofline: a measurement kernel failed to run\n");
    return 3;
  }
  double fma_flops = (double)sm * 8 * 256 * fma_iters * 8 * 2;
  double mma_flops = (double)sm * 4 * (256 / 32) * mma_iters * 4 * 4096.0;
  printf("{\"device\": \"%s\", \"read_gbps\": %.3f, \"write_gbps\": %.3f, "
         "\"copy_gbps\": %.3f, \"l2_gbps\": %.3f, \"peak_gflops\": %.3f, "
         "\"tc_bf16_gflops\": %.3f, \"sm_clock_mhz\": %.1f, "
         "\"clock_rate_mhz\": %.1f}\n",
         r.d.name, bytes / t_read * 1e-9, bytes / t_write * 1e-9,
         2.0 * bytes / t_copy * 1e-9, (double)l2_bytes * l2reps / t_l2 * 1e-9,
         fma_flops / t_fma * 1e-9, mma_flops / t_mma * 1e-9,
         ticks[1] ? (double)ticks[0] / (double)ticks[1] * 1e3 : 0.0,
         r.d.clock_khz / 1e3);
  fflush(stdout);
  _exit(0);
}

bool ks_roofline_cuda_identity(char *device, size_t n, char *identity,
                               size_t m) {
  ks_cu cu;
  ks_err err;
  if (ks_cu_load(&cu, &err))
    return false;
  ks_cu_dev d;
  ks_code rc = ks_cu_pick(&cu, &d, &err);
  ks_cu_unload(&cu);
  if (rc)
    return false;
  ks_strlcpy(device, d.name, n);
  ks_strlcpy(identity, d.identity, m);
  return true;
}

ks_code ks_roofline_measure_cuda(int threads, ks_roofline *out, ks_err *err) {
  ks_roofline r;
  ks_roofline_identify("cuda", threads, &r);
  char arch[16], ident[512], nvv[128], cache[PATH_MAX], cubin[PATH_MAX];
  ks_code rc = ks_cu_target(arch, sizeof arch, ident, sizeof ident, err);
  if (!rc && !strncmp(ident, "arch:", 5))
    rc = ks_err_set(err, KS_ERR_ENV,
                    "no CUDA driver/GPU: the cuda roofline needs a device");
  if (!rc)
    rc = ks_cu_nvcc_version(nvv, sizeof nvv, err);
  if (!rc)
    rc = ks_cache_dir(cache, sizeof cache, err);
  if (!rc)
    rc = ks_cu_support_cubin(cache, arch, nvv, cubin, sizeof cubin, err);
  if (rc)
    return rc;
  char *argv[] = {(char *)ks_runner_path(), "--cuda-roofline", cubin, NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result pr;
  rc = ks_run_capture(argv, NULL, 600, &log, &pr, err);
  const char *text = log.data ? log.data : "";
  if (!rc && !(pr.exited && pr.exit_status == 0))
    rc = ks_err_set(
        err, pr.exited && pr.exit_status == 3 ? KS_ERR_ENV : KS_ERR_INTERNAL,
        "measuring the cuda roofline (%s): %.1500s", argv[0], text);
  json_t *j = NULL;
  if (!rc) {
    const char *brace = strrchr(text, '{');
    j = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    if (!j)
      rc = ks_err_set(err, KS_ERR_INTERNAL,
                      "measuring the cuda roofline: no result in: %.1500s",
                      text);
  }
  if (!rc) {
    r.read_gbps = json_number_value(json_object_get(j, "read_gbps"));
    r.write_gbps = json_number_value(json_object_get(j, "write_gbps"));
    r.copy_gbps = json_number_value(json_object_get(j, "copy_gbps"));
    r.l2_gbps = json_number_value(json_object_get(j, "l2_gbps"));
    r.peak_gflops = json_number_value(json_object_get(j, "peak_gflops"));
    r.tc_gflops = json_number_value(json_object_get(j, "tc_bf16_gflops"));
    r.sm_clock_mhz = json_number_value(json_object_get(j, "sm_clock_mhz"));
    r.triad_gbps = 0;
    r.bandwidth_gbps = fmax(r.read_gbps, r.copy_gbps);
    snprintf(r.isa, sizeof r.isa, "%s", arch);
    r.measured_at = (double)time(NULL);
    snprintf(r.source, sizeof r.source, "measured by ksearch roofline");
    *out = r;
  }
  json_decref(j);
  ks_buf_free(&log);
  return rc;
}
