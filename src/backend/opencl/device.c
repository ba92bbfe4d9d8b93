/* device.c — OpenCL platforms and devices: listing, choosing one
 * (KSEARCH_OPENCL_DEVICE), its identity, and error names (see ocl.h). */
#include "backend/opencl/ocl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ks_ocl_errstr(cl_int e) {
  switch (e) {
#define E(x)                                                                   \
  case x: return #x;
    E(CL_SUCCESS)
    E(CL_DEVICE_NOT_FOUND)
    E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES)
    E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE)
    E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE)
    E(CL_INVALID_PLATFORM)
    E(CL_INVALID_CONTEXT)
    E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE)
    E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION)
    E(CL_INVALID_KERNEL)
    E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT)
    E(CL_INVALID_OPERATION)
    E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_GLOBAL_WORK_SIZE)
#undef E
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "unknown OpenCL error";
  }
}

ks_code ks_ocl_no_platform(ks_err *err, cl_int e) {
  return ks_err_set(err, KS_ERR_ENV,
                    "no OpenCL platform found (%s); install an OpenCL driver: "
                    "apt-get install pocl-opencl-icd (any CPU) or your GPU "
                    "vendor's ICD, plus ocl-icd-opencl-dev and "
                    "opencl-headers to build ksearch (scripts/setup.sh); "
                    "`clinfo` should then list a device",
                    ks_ocl_errstr(e));
}

static void info_str(cl_device_id d, cl_device_info what, char *out, size_t n) {
  out[0] = 0;
  if (clGetDeviceInfo(d, what, n, out, NULL) != CL_SUCCESS)
    out[0] = 0;
  out[n - 1] = 0;
}

ks_code ks_ocl_devices(ks_ocl_dev *out, int max, int *n, ks_err *err) {
  *n = 0;
  cl_platform_id plats[16];
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(16, plats, &np);
  if (e != CL_SUCCESS || np == 0)
    return ks_ocl_no_platform(err, e == CL_SUCCESS ? -1001 : e);
  for (cl_uint p = 0; p < np && p < 16; p++) {
    char pname[128] = "", pver[128] = "";
    clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
    pname[sizeof pname - 1] = pver[sizeof pver - 1] = 0;
    cl_device_id devs[KS_OCL_MAX_DEVICES];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, KS_OCL_MAX_DEVICES, devs,
                       &nd) != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < nd && d < KS_OCL_MAX_DEVICES && *n < max; d++) {
      ks_ocl_dev *o = &out[*n];
      memset(o, 0, sizeof *o);
      o->platform = plats[p];
      o->device = devs[d];
      o->index = *n;
      ks_strlcpy(o->platform_name, pname, sizeof o->platform_name);
      char dver[128], drv[128];
      info_str(devs[d], CL_DEVICE_NAME, o->name, sizeof o->name);
      info_str(devs[d], CL_DEVICE_VERSION, dver, sizeof dver);
      info_str(devs[d], CL_DRIVER_VERSION, drv, sizeof drv);
      snprintf(o->identity, sizeof o->identity, "%s|%s|%s|%s|%s", pname, pver,
               o->name, dver, drv);
      o->is_pocl = strstr(pname, "Portable Computing Language") != NULL ||
                   strstr(pver, "PoCL") != NULL || strstr(pver, "pocl") != NULL;
      clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof o->local_mem,
                      &o->local_mem, NULL);
      clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                      sizeof o->global_mem_cache, &o->global_mem_cache, NULL);
      clGetDeviceInfo(devs[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof o->max_wg,
                      &o->max_wg, NULL);
      cl_device_type type = 0;
      clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      o->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS,
                      sizeof o->compute_units, &o->compute_units, NULL);
      (*n)++;
    }
  }
  if (*n == 0)
    return ks_ocl_no_platform(err, CL_DEVICE_NOT_FOUND);
  return KS_OK;
}

ks_code ks_ocl_pick(ks_ocl_dev *out, ks_err *err) {
  ks_ocl_dev all[KS_OCL_MAX_DEVICES];
  int n = 0;
  ks_code rc = ks_ocl_devices(all, KS_OCL_MAX_DEVICES, &n, err);
  return rc ? rc : ks_ocl_choose(all, n, out, err);
}

ks_code ks_ocl_choose(const ks_ocl_dev *all, int n, ks_ocl_dev *out,
                      ks_err *err) {
  int want = 0;
  const char *env = getenv("KSEARCH_OPENCL_DEVICE");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 0 || v >= n) {
      /* which devices this process saw: a child can see fewer than the
       * parent's listing (the H200 run: NVIDIA listed, then missing) */
      char seen[512] = "";
      for (int i = 0; i < n; i++)
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%d: %s",
                 i ? "; " : "", i, all[i].name);
      const char *vend = getenv("OCL_ICD_VENDORS");
      return ks_err_set(err, KS_ERR_INPUT,
                        "OpenCL device \"%s\" (--device or "
                        "KSEARCH_OPENCL_DEVICE) does not exist: process %d "
                        "sees devices 0..%d (%s; OCL_ICD_VENDORS=%s); list "
                        "them with `ksearch roofline --backend opencl --list`",
                        env, (int)getpid(), n - 1, seen, vend ? vend : "unset");
    }
    want = (int)v;
  }
  *out = all[want];
  return KS_OK;
}
