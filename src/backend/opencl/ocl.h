/* ocl.h — what the OpenCL backend's files share: device choice, identity,
 * error names, and the runner's tool modes (DESIGN.md: Backend interface).
 *
 * Devices are numbered across all platforms in the order the ICD loader
 * reports them (platform by platform); KSEARCH_OPENCL_DEVICE=N (set by
 * `--device N`) picks one, default 0. The identity string (platform,
 * versions, device, driver) keys build hashes and the roofline cache, so a
 * driver update never reuses old binaries.
 */
#ifndef KS_OCL_H
#define KS_OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "backend/backend.h"
#include "util/util.h"

#define KS_OCL_MAX_DEVICES 32
/* artifact.json "format"; bump when the artifact changes */
#define KS_OCL_FORMAT "ksearch-opencl-1"

typedef struct ks_ocl_dev {
  cl_platform_id platform;
  cl_device_id device;
  int index;      /* across all platforms */
  char name[256]; /* device name */
  char platform_name[128];
  char identity[768]; /* platform|version|device|version|driver */
  bool is_pocl;       /* PoCL: its lazy work-group compiler needs care */
  bool is_gpu;        /* CL_DEVICE_TYPE_GPU */
  cl_ulong local_mem, global_mem_cache;
  size_t max_wg;
  cl_uint compute_units;
} ks_ocl_dev;

/* "CL_INVALID_WORK_GROUP_SIZE" */
const char *ks_ocl_errstr(cl_int e);
/* The message for "no OpenCL here", with what to install. */
ks_code ks_ocl_no_platform(ks_err *err, cl_int e);
/* All devices (at most max); KS_ERR_ENV when there is none. */
ks_code ks_ocl_devices(ks_ocl_dev *out, int max, int *n, ks_err *err);
/* The device KSEARCH_OPENCL_DEVICE names (default 0). Loads the drivers
 * into this process: only in the processes that run OpenCL (the runner's
 * children and executors). */
ks_code ks_ocl_pick(ks_ocl_dev *out, ks_err *err);
/* The device KSEARCH_OPENCL_DEVICE names among all (the error names the
 * devices seen). */
ks_code ks_ocl_choose(const ks_ocl_dev *all, int n, ks_ocl_dev *out,
                      ks_err *err);
/* The same lists as ksearch (the judge) may read them (device_info.c): from
 * `ksearch-runner --opencl-list`, no driver loaded here, no cl_* handles
 * (platform and device are NULL). A process that has loaded NVIDIA's
 * OpenCL driver starts children that no longer see the GPU (H200,
 * 2026-12-04). */
ks_code ks_ocl_devices_info(ks_ocl_dev *out, int max, int *n, ks_err *err);
ks_code ks_ocl_pick_info(ks_ocl_dev *out, ks_err *err);
/* Runner tool mode `--opencl-list`: the devices as one JSON line. */
int ks_ocl_list_main(void);

/* Runner tool modes, dispatched by runner/runner.c when argv[1] starts with
 * "--opencl-": `--opencl-build REQUEST.json` (compile in a child with a time
 * limit) and `--opencl-roofline THREADS` (measure, JSON on stdout). Returns
 * the process exit status. */
int ks_opencl_tool_main(int argc, char **argv);
/* The runner binary (KSEARCH_RUNNER, else beside this executable). */

/* Child side of the roofline (roofline_opencl.c): measures the picked
 * device with its current thread setting and prints the numbers as JSON. */
int ks_ocl_roofline_child(void);

/* The backend's build (build.c): a reference (backend=c) goes to the c
 * backend; an OpenCL candidate is compiled in a child into a cached program
 * binary holding every work-group specialization its workloads use. */
ks_code ks_ocl_build(const ks_task *task, const ks_candidate *cand,
                     const char *cache_dir, double timeout_s, ks_artifact *out,
                     ks_err *err);

#endif
