/* runner.c — ksearch-runner's entry: the executor (executor.c), or one of
 * the OpenCL backend's helper children (opencl/tool.c).
 *
 *   ksearch-runner                 the executor: job and commands on fd 4,
 *                                  events on fd 3 (src/eval/exec_proto.h)
 *   ksearch-runner --opencl-build REQUEST.json | --opencl-roofline THREADS
 *   ksearch-runner --cuda-roofline SUPPORT.cubin   (cuda/roofline_cuda.c)
 *
 * The runner hosts untrusted code and holds nothing worth stealing: no
 * reference output, no verdict, no clock that counts (DESIGN.md:
 * Evaluation). */
#include "backend/cuda/cu.h"
#include "backend/opencl/ocl.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

int ks_executor_main(void);

int main(int argc, char **argv) {
  if (argc >= 2 && !strncmp(argv[1], "--opencl-", 9))
    return ks_opencl_tool_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "--cuda-roofline"))
    return ks_cu_roofline_child(argc, argv);
  if (argc != 1) {
    fprintf(stderr, "usage: ksearch-runner (started by ksearch, which talks "
                    "to it on fds 3 and 4)\n");
    return 2;
  }
  /* glibc gives every thread that allocates its own arena, reserving
   * 64 MiB of address space each: a 16-core PoCL pool took the executor
   * past its RLIMIT_AS (H200 host, 2026-12-04: a 32 MiB allocation failed
   * under 3.1 GiB). A few shared arenas keep the limit about memory. */
  mallopt(M_ARENA_MAX, 2);
  return ks_executor_main();
}
