/* translate_host.c — a small OpenCL host program for tests/integration/
 * translate.sh: builds an OpenCL C file written by `ksearch translate` and,
 * for the softmax task, runs it on every workload of tasks/softmax/task.json
 * and checks the output the way ksearch's correctness check does (per
 * element |a - b| <= atol + rtol |b| and ||a - b|| <= rtol ||b||) against a
 * double-precision reference.
 *
 *   translate_host build FILE.cl            build only (any translation)
 *   translate_host softmax FILE.cl TASK.json  build, run, check
 *
 * The kernel is the file's `entry=`; its launch line must read
 * `global=((rows)*(N)) local=(N)` (one work-group of N per row), and its
 * arguments are (x, y, rows, cols) with 64-bit rows and cols, the task's
 * order. Exit 0 on success, 1 on a wrong result, 2 on a build failure, 3 when
 * no OpenCL device is there. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s)
    s[n] = 0;
  fclose(f);
  return s;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return ((rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) {
  return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "build") && strcmp(argv[1], "softmax")) ||
      (!strcmp(argv[1], "softmax") && argc < 4)) {
    fprintf(stderr, "usage: translate_host build FILE.cl | softmax FILE.cl "
                    "TASK.json\n");
    return 2;
  }
  char *src = slurp(argv[2]);
  if (!src) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_uint np = 0;
  if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || !np ||
      clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
    fprintf(stderr, "no OpenCL device (install pocl-opencl-icd)\n");
    return 3;
  }
  cl_int e;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  const char *srcs[] = {src};
  cl_program prog = clCreateProgramWithSource(ctx, 1, srcs, NULL, &e);
  e = clBuildProgram(prog, 1, &dev,
                     getenv("TRANSLATE_HOST_CL_OPTIONS")
                         ? getenv("TRANSLATE_HOST_CL_OPTIONS")
                         : "",
                     NULL, NULL);
  if (e != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log,
                          NULL);
    fprintf(stderr, "%s: build failed (%d):\n%s\n", argv[2], e, log);
    return 2;
  }
  if (!strcmp(argv[1], "build")) {
    printf("%s: builds\n", argv[2]);
    return 0;
  }
  char entry[64] = "";
  int local = 0;
  const char *p = strstr(src, "entry=");
  if (p)
    sscanf(p, "entry=%63[A-Za-z0-9_]", entry);
  p = strstr(src, "// ksearch: launch global=((rows)*(");
  if (p)
    sscanf(p, "// ksearch: launch global=((rows)*(%d))", &local);
  if (!entry[0] || local <= 0) {
    fprintf(stderr,
            "%s: expected entry= and `launch global=((rows)*(N)) "
            "local=(N)`\n",
            argv[2]);
    return 2;
  }
  cl_kernel k = clCreateKernel(prog, entry, &e);
  if (e != CL_SUCCESS) {
    fprintf(stderr, "%s: no kernel %s\n", argv[2], entry);
    return 2;
  }
  json_t *task = json_load_file(argv[3], 0, NULL);
  json_t *tol = json_object_get(json_object_get(task, "tolerance"), "float32");
  double atol = json_number_value(json_object_get(tol, "atol"));
  double rtol = json_number_value(json_object_get(tol, "rtol"));
  size_t wi;
  json_t *w;
  int bad = 0;
  json_array_foreach(json_object_get(task, "workloads"), wi, w) {
    cl_long rows = json_integer_value(json_object_get(w, "rows"));
    cl_long cols = json_integer_value(json_object_get(w, "cols"));
    size_t n = (size_t)(rows * cols);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *ref = malloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
      x[i] = (float)normal();
      y[i] = NAN;
    }
    for (cl_long r = 0; r < rows; r++) {
      double m = -INFINITY, s = 0;
      for (cl_long c = 0; c < cols; c++)
        m = fmax(m, x[r * cols + c]);
      for (cl_long c = 0; c < cols; c++)
        s += exp(x[r * cols + c] - m);
      for (cl_long c = 0; c < cols; c++)
        ref[r * cols + c] = exp(x[r * cols + c] - m) / s;
    }
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               n * sizeof *x, x, &e);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               n * sizeof *y, y, &e);
    clSetKernelArg(k, 0, sizeof bx, &bx);
    clSetKernelArg(k, 1, sizeof by, &by);
    clSetKernelArg(k, 2, sizeof rows, &rows);
    clSetKernelArg(k, 3, sizeof cols, &cols);
    size_t global = (size_t)rows * (size_t)local, lsz = (size_t)local;
    e = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &lsz, 0, NULL, NULL);
    if (e == CL_SUCCESS)
      e = clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL,
                              NULL);
    double d2 = 0, b2 = 0, worst = 0;
    size_t fails = 0;
    for (size_t i = 0; i < n && e == CL_SUCCESS; i++) {
      double d = fabs(y[i] - ref[i]);
      if (!(d <= atol + rtol * fabs(ref[i])))
        fails++;
      d2 += d * d;
      b2 += ref[i] * ref[i];
      if (d > worst || d != d)
        worst = d;
    }
    bool ok = e == CL_SUCCESS && !fails && sqrt(d2) <= rtol * sqrt(b2);
    printf("rows=%lld cols=%lld: %s (max abs err %.3g, %zu elements out of "
           "tolerance)%s\n",
           (long long)rows, (long long)cols, ok ? "ok" : "WRONG", worst, fails,
           e == CL_SUCCESS ? "" : " (enqueue failed)");
    bad += !ok;
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    free(x);
    free(y);
    free(ref);
  }
  json_decref(task);
  free(src);
  return bad ? 1 : 0;
}
