/* roofline_opencl.c — the OpenCL backend's roofline (DESIGN.md: Spec,
 * "roofline fraction"): STREAM-style read, write, copy and triad bandwidth
 * and peak FP32 FMA FLOP/s of the chosen device, measured with OpenCL
 * kernels and timed with profiling events (best of 5, after a warm-up).
 *
 * The measurement runs in a child (`ksearch-runner --opencl-roofline N`) so
 * that PoCL starts with N worker threads whatever this process did before;
 * the parent only parses the child's JSON. Caching and the machine identity
 * live in ../roofline.c, as for the c backend.
 */
#include "backend/opencl/ocl.h"
#include "backend/roofline.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NREP 5
#define MIB ((size_t)1 << 20)

/* One float4 per work-item: on a GPU the loads coalesce, on PoCL the
 * work-item loop of a work-group streams through contiguous memory. The
 * read kernel stores only when the sum takes a value it cannot take, so the
 * loads stay and nothing is written. */
static const char *const k_src =
    "__kernel void k_read(__global const float4 *a, __global const float4 "
    "*b, __global const float4 *c, __global float *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float4 s = a[i] + b[i] + c[i];\n"
    "  if (s.x + s.y + s.z + s.w == -1.25e30f) out[0] = s.x;\n"
    "}\n"
    "__kernel void k_write(__global float4 *a, __global float4 *b, __global "
    "float4 *c, float v) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = (float4)(v); b[i] = (float4)(v); c[i] = (float4)(v);\n"
    "}\n"
    "__kernel void k_copy(__global const float4 *a, __global float4 *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i];\n"
    "}\n"
    "__kernel void k_triad(__global float4 *a, __global const float4 *b, "
    "__global const float4 *c, float s) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = b[i] + s * c[i];\n"
    "}\n"
    /* 8 independent float16 FMA chains per work-item: enough to cover FMA
     * latency x ports on CPUs; acc = acc*m + add converges, stays finite */
    "__kernel void k_fma(__global float *out, int iters, float m, float add) "
    "{\n"
    "  float f = 1.0f + 0.001f * (float)(get_global_id(0) & 7);\n"
    "  float16 a0 = (float16)(f), a1 = a0 + 0.01f, a2 = a0 + 0.02f,\n"
    "          a3 = a0 + 0.03f, a4 = a0 + 0.04f, a5 = a0 + 0.05f,\n"
    "          a6 = a0 + 0.06f, a7 = a0 + 0.07f;\n"
    "  for (int i = 0; i < iters; i++) {\n"
    "    a0 = fma(a0, m, add); a1 = fma(a1, m, add); a2 = fma(a2, m, add);\n"
    "    a3 = fma(a3, m, add); a4 = fma(a4, m, add); a5 = fma(a5, m, add);\n"
    "    a6 = fma(a6, m, add); a7 = fma(a7, m, add);\n"
    "  }\n"
    "  float16 s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));\n"
    "  float8 h = s.lo + s.hi; float4 q = h.lo + h.hi;\n"
    "  float r = q.x + q.y + q.z + q.w;\n"
    "  if (r == -1.25e30f) out[get_global_id(0)] = r;\n"
    "}\n";

#define FMA_LANES (16 * 8)

typedef struct rt {
  cl_context ctx;
  cl_command_queue q;
  cl_program prog;
} rt;

/* Runs one kernel over n work-items and returns its device time (s), or a
 * negative number on failure. */
static double timed(rt *r, cl_kernel k, size_t n, size_t local) {
  cl_event ev;
  if (clEnqueueNDRangeKernel(r->q, k, 1, NULL, &n, &local, 0, NULL, &ev) !=
      CL_SUCCESS)
    return -1;
  clFinish(r->q);
  cl_ulong t0 = 0, t1 = 0;
  clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  clReleaseEvent(ev);
  return t1 > t0 ? (double)(t1 - t0) * 1e-9 : -1;
}

static double best_of(rt *r, cl_kernel k, size_t n, size_t local) {
  double best = 1e30;
  timed(r, k, n, local); /* warm-up: compiles the work-group function */
  for (int i = 0; i < NREP; i++) {
    double t = timed(r, k, n, local);
    if (t > 0 && t < best)
      best = t;
  }
  return best < 1e29 ? best : -1;
}

static size_t array_bytes(const ks_ocl_dev *d, ks_err *err) {
  const char *env = getenv("KSEARCH_ROOFLINE_MIB");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 1 || v > 4096) {
      ks_err_set(err, KS_ERR_INPUT,
                 "KSEARCH_ROOFLINE_MIB=\"%s\": expected 1 to 4096 MiB", env);
      return 0;
    }
    return (size_t)v * MIB;
  }
  size_t b = d->global_mem_cache ? 4 * (size_t)d->global_mem_cache : 0;
  if (b < 64 * MIB)
    b = 64 * MIB;
  if (b > 256 * MIB)
    b = 256 * MIB;
  return b;
}

static int child_fail(const ks_err *err) {
  printf("%s\n", err->msg);
  return err->code == KS_ERR_ENV ? 3 : 2;
}

int ks_ocl_roofline_child(void) {
  ks_err err = {0};
  ks_ocl_dev d;
  char tmpl[] = "/tmp/ksearch-roofline-XXXXXX";
  char *pdir = mkdtemp(tmpl);
  if (pdir)
    setenv("POCL_CACHE_DIR", pdir, 1);
  if (ks_ocl_pick(&d, &err))
    return child_fail(&err);
  size_t bytes = array_bytes(&d, &err);
  if (!bytes)
    return child_fail(&err);
  size_t local = d.max_wg >= 256 ? 256 : (d.max_wg ? d.max_wg : 1);
  size_t n4 = bytes / 16 / local * local; /* whole work-groups of float4 */
  bytes = n4 * 16;
  rt r = {0};
  cl_int e;
  r.ctx = clCreateContext(NULL, 1, &d.device, NULL, NULL, &e);
  if (r.ctx)
    r.q = clCreateCommandQueue(r.ctx, d.device, CL_QUEUE_PROFILING_ENABLE, &e);
  if (r.q)
    r.prog =
        clCreateProgramWithSource(r.ctx, 1, (const char **)&k_src, NULL, &e);
  if (r.prog)
    e = clBuildProgram(r.prog, 1, &d.device, "", NULL, NULL);
  if (!r.prog || e != CL_SUCCESS) {
    ks_err_set(&err, KS_ERR_ENV, "OpenCL roofline kernels on %s: %s", d.name,
               ks_ocl_errstr(e));
    return child_fail(&err);
  }
  cl_mem a = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  cl_mem b = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  cl_mem c = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  cl_mem o = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, 4096 * 1024, NULL, &e);
  if (!a || !b || !c || !o) {
    ks_err_set(&err, KS_ERR_NOMEM,
               "OpenCL roofline: cannot allocate 3 arrays of %zu MiB; set "
               "KSEARCH_ROOFLINE_MIB smaller",
               bytes / MIB);
    return child_fail(&err);
  }
  cl_kernel kr = clCreateKernel(r.prog, "k_read", &e);
  cl_kernel kw = clCreateKernel(r.prog, "k_write", &e);
  cl_kernel kc = clCreateKernel(r.prog, "k_copy", &e);
  cl_kernel kt = clCreateKernel(r.prog, "k_triad", &e);
  cl_kernel kf = clCreateKernel(r.prog, "k_fma", &e);
  float v = 1.0f, s = 0.5f;
  clSetKernelArg(kr, 0, sizeof a, &a);
  clSetKernelArg(kr, 1, sizeof b, &b);
  clSetKernelArg(kr, 2, sizeof c, &c);
  clSetKernelArg(kr, 3, sizeof o, &o);
  clSetKernelArg(kw, 0, sizeof a, &a);
  clSetKernelArg(kw, 1, sizeof b, &b);
  clSetKernelArg(kw, 2, sizeof c, &c);
  clSetKernelArg(kw, 3, sizeof v, &v);
  clSetKernelArg(kc, 0, sizeof a, &a);
  clSetKernelArg(kc, 1, sizeof c, &c);
  clSetKernelArg(kt, 0, sizeof a, &a);
  clSetKernelArg(kt, 1, sizeof b, &b);
  clSetKernelArg(kt, 2, sizeof c, &c);
  clSetKernelArg(kt, 3, sizeof s, &s);
  timed(&r, kw, n4, local); /* first touch */
  double tr = best_of(&r, kr, n4, local), tw = best_of(&r, kw, n4, local),
         tc = best_of(&r, kc, n4, local), tt = best_of(&r, kt, n4, local);
  /* FLOP/s: grow the trip count until one run lasts 50 ms */
  size_t fl = local > 64 ? 64 : local;
  size_t fn = (size_t)(d.compute_units ? d.compute_units : 1) * 8 * fl;
  cl_int iters = 1 << 10;
  float m = 0.9999f, add = 0.0001f;
  clSetKernelArg(kf, 0, sizeof o, &o);
  clSetKernelArg(kf, 2, sizeof m, &m);
  clSetKernelArg(kf, 3, sizeof add, &add);
  double tf = -1;
  for (;;) {
    clSetKernelArg(kf, 1, sizeof iters, &iters);
    tf = timed(&r, kf, fn, fl);
    if (tf < 0 || tf >= 0.05 || iters >= (1 << 28))
      break;
    iters *= 2;
  }
  if (tf > 0)
    tf = best_of(&r, kf, fn, fl);
  if (tr <= 0 || tw <= 0 || tc <= 0 || tt <= 0 || tf <= 0) {
    ks_err_set(&err, KS_ERR_ENV,
               "OpenCL roofline: a measurement kernel failed on %s", d.name);
    return child_fail(&err);
  }
  double B = (double)bytes;
  double rd = 3 * B / tr / 1e9, wr = 3 * B / tw / 1e9, cp = 2 * B / tc / 1e9,
         tri = 3 * B / tt / 1e9;
  double peak = 2.0 * FMA_LANES * (double)iters * (double)fn / tf / 1e9;
  printf("{\"read_gbps\": %.6g, \"write_gbps\": %.6g, \"copy_gbps\": %.6g, "
         "\"triad_gbps\": %.6g, \"peak_gflops\": %.6g, \"array_mib\": %zu}\n",
         rd, wr, cp, tri, peak, bytes / MIB);
  fflush(stdout);
  cl_kernel ks[] = {kr, kw, kc, kt, kf};
  for (int i = 0; i < 5; i++)
    clReleaseKernel(ks[i]);
  cl_mem ms[] = {a, b, c, o};
  for (int i = 0; i < 4; i++)
    clReleaseMemObject(ms[i]);
  clReleaseProgram(r.prog);
  clReleaseCommandQueue(r.q);
  clReleaseContext(r.ctx);
  if (pdir)
    ks_rm_rf(pdir);
  return 0;
}

bool ks_roofline_opencl_identity(char *device, size_t n, char *identity,
                                 size_t m) {
  ks_ocl_dev d;
  ks_err err;
  if (ks_ocl_pick_info(&d, &err))
    return false;
  snprintf(device, n, "%s", d.name);
  snprintf(identity, m, "%s", d.identity);
  return true;
}

ks_code ks_roofline_measure_opencl(int threads, ks_roofline *out, ks_err *err) {
  ks_roofline r;
  ks_roofline_identify("opencl", threads, &r);
  char tbuf[16];
  snprintf(tbuf, sizeof tbuf, "%d", r.threads);
  char *argv[] = {(char *)ks_runner_path(), "--opencl-roofline", tbuf, NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result pr;
  ks_code rc = ks_run_capture(argv, NULL, 600, &log, &pr, err);
  const char *text = log.data ? log.data : "";
  if (!rc && !(pr.exited && pr.exit_status == 0))
    rc = ks_err_set(
        err, pr.exited && pr.exit_status == 3 ? KS_ERR_ENV : KS_ERR_INTERNAL,
        "measuring the opencl roofline (%s): %.1500s", argv[0], text);
  json_t *j = NULL;
  if (!rc) { /* the last line that is a JSON object (PoCL may warn above) */
    const char *brace = strrchr(text, '{');
    j = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    if (!j)
      rc = ks_err_set(err, KS_ERR_INTERNAL,
                      "measuring the opencl roofline: no result in: %.1500s",
                      text);
  }
  if (!rc) {
    r.read_gbps = json_number_value(json_object_get(j, "read_gbps"));
    r.write_gbps = json_number_value(json_object_get(j, "write_gbps"));
    r.copy_gbps = json_number_value(json_object_get(j, "copy_gbps"));
    r.triad_gbps = json_number_value(json_object_get(j, "triad_gbps"));
    r.peak_gflops = json_number_value(json_object_get(j, "peak_gflops"));
    r.bandwidth_gbps = fmax(r.read_gbps, fmax(r.copy_gbps, r.triad_gbps));
    snprintf(r.isa, sizeof r.isa, "opencl");
    r.measured_at = (double)time(NULL);
    snprintf(r.source, sizeof r.source, "measured by ksearch roofline");
    *out = r;
  }
  json_decref(j);
  ks_buf_free(&log);
  return rc;
}
