/* tool.c — the OpenCL backend's child processes, run as modes of
 * ksearch-runner (see ocl.h): the compiler of a candidate and the roofline
 * measurement. Each runs in a fresh process so that PoCL reads its settings
 * (cache folder, thread count, work-group specializations) from an
 * environment set before its first call, and so that a compiler that hangs
 * or crashes on a hostile source costs a child, not ksearch.
 *
 * --opencl-build REQUEST.json: compiles the source with the options, checks
 * each launched kernel against the calling convention and the device limits
 * (argument count, work-group size, local memory), and writes the program
 * binary with the requested PoCL work-group specializations. Exit 0 built,
 * 1 the candidate's fault (message on stdout), 3 the environment, 2 usage.
 * PoCL (3.1) keeps one compiled work-group function per (kernel, local
 * size) in memory while it builds a binary, so the "-smallgrid" and the
 * large-grid variant of one local size cannot come from one process: each
 * pass (one variant each) runs in its own forked child, side by side, and
 * the runner unpacks both binaries into the same PoCL cache folder (same
 * source and options: same program hash), where the variants sit together.
 */
#include "backend/opencl/ocl.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  return code;
}

/* One pass: compile, check, write the binary with the specializations of
 * `spec`. Runs in its own process (see above); returns the exit status. */
static int build_pass(const char *req_path, json_t *req, const char *spec,
                      const char *out, const char *pcache) {
  const char *src_path = json_string_value(json_object_get(req, "source"));
  const char *options = json_string_value(json_object_get(req, "options"));
  const char *ident = json_string_value(json_object_get(req, "identity"));
  json_t *kernels = json_object_get(req, "kernels");
  if (!src_path || !options || !ident || !json_is_array(kernels))
    return fail(2, "%s: incomplete build request", req_path);
  /* PoCL's own cache: a fresh folder, so an earlier build of the same source
   * cannot make this one look instantaneous (the parent removes it). */
  setenv("POCL_CACHE_DIR", pcache, 1);
  setenv("POCL_BINARY_SPECIALIZE_WG", spec, 1);

  char *source = NULL;
  ks_err err;
  if (ks_read_file(src_path, &source, NULL, &err))
    return fail(2, "%s", err.msg);
  ks_ocl_dev dev;
  if (ks_ocl_pick(&dev, &err))
    return fail(3, "%s", err.msg);
  if (strcmp(dev.identity, ident))
    return fail(3, "the OpenCL device changed during the build: %s vs %s",
                dev.identity, ident);
  cl_int e;
  cl_context ctx = clCreateContext(NULL, 1, &dev.device, NULL, NULL, &e);
  if (!ctx)
    return fail(3, "clCreateContext: %s", ks_ocl_errstr(e));
  const char *srcs[1] = {source};
  cl_program prog = clCreateProgramWithSource(ctx, 1, srcs, NULL, &e);
  if (!prog)
    return fail(3, "clCreateProgramWithSource: %s", ks_ocl_errstr(e));
  cl_int be = clBuildProgram(prog, 1, &dev.device, options, NULL, NULL);
  size_t log_n = 0;
  clGetProgramBuildInfo(prog, dev.device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                        &log_n);
  char *log = calloc(1, log_n + 1);
  if (log && log_n)
    clGetProgramBuildInfo(prog, dev.device, CL_PROGRAM_BUILD_LOG, log_n, log,
                          NULL);
  if (be != CL_SUCCESS)
    return fail(1, "OpenCL build failed (%s):\n%s", ks_ocl_errstr(be),
                log && *log ? log : "(no build log)");
  if (log && *log)
    printf("%s\n", log);

  size_t max_items[3] = {0, 0, 0};
  clGetDeviceInfo(dev.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_items,
                  max_items, NULL);
  char names[4096] = "";
  clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL);
  names[sizeof names - 1] = 0;
  for (size_t i = 0; i < json_array_size(kernels); i++) {
    json_t *kj = json_array_get(kernels, i);
    const char *name = json_string_value(json_object_get(kj, "name"));
    const char *sig = json_string_value(json_object_get(kj, "signature"));
    int nargs = (int)json_integer_value(json_object_get(kj, "nargs"));
    json_t *locals = json_object_get(kj, "locals");
    if (!name || !sig || !json_is_array(locals))
      return fail(2, "%s: bad kernel entry", req_path);
    cl_kernel k = clCreateKernel(prog, name, &e);
    if (!k) {
      printf("kernel %s (named by a launch line) is not in the program: %s; "
             "the program defines: %s\n",
             name, ks_ocl_errstr(e), names[0] ? names : "(nothing)");
      return 1;
    }
    cl_uint have = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof have, &have, NULL);
    if ((int)have != nargs) {
      printf("kernel %s takes %u arguments; this task's OpenCL calling "
             "convention has %d:\n  %s\n(inputs, outputs, var axes as long, "
             "scalars, then scratch when a launch line asks for it)\n",
             name, have, nargs, sig);
      return 1;
    }
    size_t reqd[3] = {0, 0, 0};
    clGetKernelWorkGroupInfo(k, dev.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                             sizeof reqd, reqd, NULL);
    size_t kmax = 0;
    cl_ulong klocal = 0;
    clGetKernelWorkGroupInfo(k, dev.device, CL_KERNEL_WORK_GROUP_SIZE,
                             sizeof kmax, &kmax, NULL);
    clGetKernelWorkGroupInfo(k, dev.device, CL_KERNEL_LOCAL_MEM_SIZE,
                             sizeof klocal, &klocal, NULL);
    if (dev.local_mem && klocal > dev.local_mem) {
      printf("kernel %s uses %llu bytes of local memory; the device has "
             "%llu\n",
             name, (unsigned long long)klocal,
             (unsigned long long)dev.local_mem);
      return 1;
    }
    for (size_t j = 0; j < json_array_size(locals); j++) {
      json_t *l = json_array_get(locals, j);
      size_t ls[3], prod = 1;
      for (int d = 0; d < 3; d++) {
        ls[d] = (size_t)json_integer_value(json_array_get(l, (size_t)d));
        prod *= ls[d];
        if (max_items[d] && ls[d] > max_items[d]) {
          printf("kernel %s: local size %zu in dimension %d exceeds the "
                 "device's limit of %zu\n",
                 name, ls[d], d, max_items[d]);
          return 1;
        }
      }
      if (reqd[0] &&
          (ls[0] != reqd[0] || ls[1] != reqd[1] || ls[2] != reqd[2])) {
        printf("kernel %s: launched with local=(%zu,%zu,%zu) but declares "
               "reqd_work_group_size(%zu,%zu,%zu); make them agree\n",
               name, ls[0], ls[1], ls[2], reqd[0], reqd[1], reqd[2]);
        return 1;
      }
      if (kmax && prod > kmax) {
        printf("kernel %s: a work-group of %zu x %zu x %zu = %zu work-items "
               "exceeds this kernel's limit of %zu on %s; lower the local "
               "size\n",
               name, ls[0], ls[1], ls[2], prod, kmax, dev.name);
        return 1;
      }
    }
    clReleaseKernel(k);
  }
  /* The binary: on PoCL this compiles the generic and every requested
   * specialized work-group function now, outside any sandbox, with nothing
   * of the candidate executed. */
  size_t size = 0;
  e = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
  if (e != CL_SUCCESS || size == 0)
    return fail(3, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES): %s",
                ks_ocl_errstr(e));
  unsigned char *bin = malloc(size);
  unsigned char *bins[1] = {bin};
  e = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL);
  if (!bin || e != CL_SUCCESS)
    return fail(3, "clGetProgramInfo(CL_PROGRAM_BINARIES): %s",
                ks_ocl_errstr(e));
  if (ks_write_file_atomic(out, bin, size, &err))
    return fail(3, "%s", err.msg);
  free(bin);
  free(log);
  free(source);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}

/* The passes of one build ("specialize" and "out" are arrays), each in a
 * child forked before any OpenCL call, run side by side. Only the first
 * pass prints (a compile error would otherwise be reported twice). */
static int build_main(const char *req_path) {
  json_error_t je;
  json_t *req = json_load_file(req_path, 0, &je);
  if (!req)
    return fail(2, "%s: %s", req_path, je.text);
  json_t *specs = json_object_get(req, "specialize");
  json_t *outs = json_object_get(req, "out");
  const char *pcache = json_string_value(json_object_get(req, "pocl_cache"));
  size_t n = json_array_size(specs);
  if (!pcache || n < 1 || n > 4 || json_array_size(outs) != n)
    return fail(2, "%s: incomplete build request", req_path);
  fflush(stdout);
  pid_t pids[4];
  for (size_t i = 0; i < n; i++) {
    pids[i] = fork();
    if (pids[i] < 0)
      return fail(3, "fork: %s", strerror(errno));
    if (pids[i] == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (i > 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) {
          dup2(dn, 1);
          dup2(dn, 2);
        }
      }
      char dir[PATH_MAX];
      snprintf(dir, sizeof dir, "%.4000s.%zu", pcache, i);
      int rc =
          build_pass(req_path, req, json_string_value(json_array_get(specs, i)),
                     json_string_value(json_array_get(outs, i)), dir);
      fflush(stdout);
      _exit(rc);
    }
  }
  int result = 0;
  for (size_t i = 0; i < n; i++) {
    int st = 0;
    while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {
    }
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 4;
    if (rc && !result) {
      result = rc == 4 ? 1 : rc;
      if (i > 0 || rc == 4)
        printf("OpenCL build pass %zu failed (%s %d)\n", i + 1,
               WIFEXITED(st) ? "exit status" : "signal",
               WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
  }
  json_decref(req);
  return result;
}

int ks_opencl_tool_main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--opencl-list"))
    return ks_ocl_list_main();
  if (argc == 3 && !strcmp(argv[1], "--opencl-build"))
    return build_main(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "--opencl-roofline")) {
    char *end;
    long t = strtol(argv[2], &end, 10);
    if (*end || t < 1 || t > 4096)
      return fail(2, "--opencl-roofline %s: expected a thread count", argv[2]);
    setenv("POCL_MAX_PTHREAD_COUNT", argv[2], 1);
    return ks_ocl_roofline_child();
  }
  return fail(2, "usage: ksearch-runner --opencl-build REQUEST.json | "
                 "--opencl-roofline THREADS | --opencl-list");
}
