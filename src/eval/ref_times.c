/* ref_times.c — see ref_times.h. One JSON object per file: each workload's
 * axes hash (as the output files name it) to [median_ns, min_ns]. A file
 * that does not parse, or misses a workload, is as good as none: the
 * evaluator times the reference again and rewrites it. */
#include "eval/ref_times.h"
#include "backend/roofline.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void wl_key(const ks_task *task, const ks_workload *w, char *hex) {
  ks_hash_hex(ks_hash64(w->axis, sizeof(int64_t) * (size_t)task->n_axes, 5),
              hex);
}

void ks_ref_times_path(const char *ref_dir, int threads, char *path, size_t n) {
  ks_roofline id;
  ks_roofline_identify("c", threads, &id);
  snprintf(path, n, "%.3800s/times-%s.json", ref_dir, id.machine_key);
}

bool ks_ref_times_load(const char *path, const ks_task *task, const bool *skip,
                       double *median_ns, double *min_ns) {
  json_t *j = json_load_file(path, 0, NULL);
  if (!json_is_object(j)) {
    json_decref(j);
    return false;
  }
  double med[KS_MAX_WORKLOADS] = {0}, mn[KS_MAX_WORKLOADS] = {0};
  bool ok = true;
  for (int i = 0; ok && i < task->n_workloads; i++) {
    if (skip[i])
      continue;
    char hex[17];
    wl_key(task, &task->workloads[i], hex);
    json_t *p = json_object_get(j, hex);
    med[i] = json_number_value(json_array_get(p, 0));
    mn[i] = json_number_value(json_array_get(p, 1));
    ok = json_array_size(p) == 2 && med[i] > 0 && mn[i] > 0 && mn[i] <= med[i];
  }
  json_decref(j);
  if (!ok)
    return false;
  memcpy(median_ns, med, sizeof(double) * (size_t)task->n_workloads);
  memcpy(min_ns, mn, sizeof(double) * (size_t)task->n_workloads);
  return true;
}

ks_code ks_ref_times_save(const char *path, const ks_task *task,
                          const bool *skip, const double *median_ns,
                          const double *min_ns, ks_err *err) {
  json_t *j = json_object();
  for (int i = 0; i < task->n_workloads; i++) {
    if (skip[i] || median_ns[i] <= 0 || min_ns[i] <= 0)
      continue;
    char hex[17];
    wl_key(task, &task->workloads[i], hex);
    json_object_set_new(j, hex, json_pack("[f,f]", median_ns[i], min_ns[i]));
  }
  char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(j);
  if (!text)
    return ks_err_set(err, KS_ERR_INTERNAL, "cannot encode %s", path);
  ks_code rc = ks_write_file_atomic(path, text, strlen(text), err);
  free(text);
  return rc;
}
