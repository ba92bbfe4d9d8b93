/* device_info.c — the OpenCL devices as ksearch (the judge's process) sees
 * them, without ever loading a driver into that process (see ocl.h).
 *
 * Why: on the H200 (2026-12-04), once ksearch itself had enumerated the
 * devices through NVIDIA's OpenCL driver, every ksearch-runner it started
 * afterwards (the compiler child, the roofline child, the executor) saw only
 * PoCL, while the same runner started on its own saw the GPU. So the parent
 * asks a child, `ksearch-runner --opencl-list`, which prints the list as
 * JSON and exits; the parent keeps names, identity and limits (no cl_*
 * handles) and the drivers load only in the children that use them. The
 * list is read once per process and per OCL_ICD_VENDORS value (a registry
 * of this machine's devices, like ks_runner_path's cache). */
#include "backend/opencl/ocl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* runner side: the list on stdout, one JSON line; exit 0, or 3 with
 * {"error": why} when there is no device */
int ks_ocl_list_main(void) {
  ks_ocl_dev d[KS_OCL_MAX_DEVICES];
  int n = 0;
  ks_err err = {0};
  json_t *o;
  if (ks_ocl_devices(d, KS_OCL_MAX_DEVICES, &n, &err)) {
    o = json_pack("{s:s}", "error", err.msg);
  } else {
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
      json_array_append_new(
          arr, json_pack("{s:i, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:i, s:b}",
                         "index", d[i].index, "name", d[i].name, "platform",
                         d[i].platform_name, "identity", d[i].identity, "pocl",
                         d[i].is_pocl, "local_mem", (json_int_t)d[i].local_mem,
                         "global_mem_cache", (json_int_t)d[i].global_mem_cache,
                         "max_wg", (json_int_t)d[i].max_wg, "compute_units",
                         (int)d[i].compute_units, "gpu", d[i].is_gpu));
    o = json_pack("{s:o}", "devices", arr);
  }
  char *text = json_dumps(o, JSON_COMPACT);
  printf("\n%s\n", text ? text : "{}");
  fflush(stdout);
  free(text);
  json_decref(o);
  return n > 0 ? 0 : 3;
}

static struct {
  char vendors[PATH_MAX]; /* OCL_ICD_VENDORS when read ("" when unset) */
  bool have;
  int n;
  ks_ocl_dev dev[KS_OCL_MAX_DEVICES];
} g_list;

static ks_code parse_list(const char *text, ks_err *err) {
  /* the last line that opens a JSON object: a driver may print first */
  const char *at = NULL;
  for (const char *p = text; (p = strstr(p, "\n{")); p++)
    at = p + 1;
  json_error_t je;
  json_t *o = at ? json_loads(at, JSON_DISABLE_EOF_CHECK, &je) : NULL;
  if (!o)
    return ks_err_set(err, KS_ERR_ENV,
                      "listing the OpenCL devices (%s --opencl-list) gave no "
                      "list: %.600s",
                      ks_runner_path(), text);
  const char *why = json_string_value(json_object_get(o, "error"));
  json_t *arr = json_object_get(o, "devices");
  ks_code rc = KS_OK;
  if (why) {
    rc = ks_err_set(err, KS_ERR_ENV, "%s", why);
  } else if (!json_is_array(arr) || json_array_size(arr) == 0) {
    rc = ks_ocl_no_platform(err, CL_DEVICE_NOT_FOUND);
  } else {
    g_list.n = 0;
    for (size_t i = 0; i < json_array_size(arr) && i < KS_OCL_MAX_DEVICES;
         i++) {
      json_t *e = json_array_get(arr, i);
      ks_ocl_dev *d = &g_list.dev[g_list.n++];
      memset(d, 0, sizeof *d);
      d->index = (int)json_integer_value(json_object_get(e, "index"));
      ks_strlcpy(d->name, json_string_value(json_object_get(e, "name")) ?: "",
                 sizeof d->name);
      ks_strlcpy(d->platform_name,
                 json_string_value(json_object_get(e, "platform")) ?: "",
                 sizeof d->platform_name);
      ks_strlcpy(d->identity,
                 json_string_value(json_object_get(e, "identity")) ?: "",
                 sizeof d->identity);
      d->is_pocl = json_is_true(json_object_get(e, "pocl"));
      d->is_gpu = json_is_true(json_object_get(e, "gpu"));
      d->local_mem =
          (cl_ulong)json_integer_value(json_object_get(e, "local_mem"));
      d->global_mem_cache =
          (cl_ulong)json_integer_value(json_object_get(e, "global_mem_cache"));
      d->max_wg = (size_t)json_integer_value(json_object_get(e, "max_wg"));
      d->compute_units =
          (cl_uint)json_integer_value(json_object_get(e, "compute_units"));
    }
    g_list.have = true;
  }
  json_decref(o);
  return rc;
}

ks_code ks_ocl_devices_info(ks_ocl_dev *out, int max, int *n, ks_err *err) {
  *n = 0;
  const char *v = getenv("OCL_ICD_VENDORS");
  if (!g_list.have || strcmp(g_list.vendors, v ? v : "")) {
    g_list.have = false;
    ks_strlcpy(g_list.vendors, v ? v : "", sizeof g_list.vendors);
    char *argv[] = {(char *)ks_runner_path(), "--opencl-list", NULL};
    ks_buf log;
    ks_buf_init(&log);
    ks_proc_result r;
    ks_code rc = ks_run_capture(argv, NULL, 120, &log, &r, err);
    if (!rc && r.timed_out)
      rc = ks_err_set(err, KS_ERR_ENV,
                      "listing the OpenCL devices took over 120 s");
    if (!rc)
      rc = parse_list(log.data ? log.data : "", err);
    ks_buf_free(&log);
    if (rc)
      return rc;
  }
  for (int i = 0; i < g_list.n && i < max; i++)
    out[(*n)++] = g_list.dev[i];
  return KS_OK;
}

ks_code ks_ocl_pick_info(ks_ocl_dev *out, ks_err *err) {
  ks_ocl_dev all[KS_OCL_MAX_DEVICES];
  int n = 0;
  ks_code rc = ks_ocl_devices_info(all, KS_OCL_MAX_DEVICES, &n, err);
  return rc ? rc : ks_ocl_choose(all, n, out, err);
}
