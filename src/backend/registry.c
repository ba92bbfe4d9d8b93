/* registry.c — the list of backends (one line per backend) and the small
 * helpers every backend shares. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

extern const ks_backend_i ks_backend_c;
extern const ks_backend_i ks_backend_opencl;
extern const ks_backend_i ks_backend_cuda;
extern const ks_backend_i ks_backend_mlx;

static const ks_backend_i *const k_backends[] = {
    &ks_backend_c,
    &ks_backend_opencl,
    &ks_backend_cuda,
    &ks_backend_mlx,
};

int ks_backend_count(void) {
  return (int)(sizeof k_backends / sizeof *k_backends);
}

const ks_backend_i *ks_backend_at(int i) {
  return i >= 0 && i < ks_backend_count() ? k_backends[i] : NULL;
}

const ks_backend_i *ks_backend_get(const char *name) {
  for (int i = 0; i < ks_backend_count(); i++)
    if (!strcmp(k_backends[i]->name, name))
      return k_backends[i];
  return NULL;
}

void ks_artifact_free(ks_artifact *a) { ks_buf_free(&a->log); }

ks_device_class ks_backend_device_class(const ks_backend_i *be) {
  return be && be->device_class ? be->device_class() : KS_DEV_CPU;
}

bool ks_backend_device_buffers(const ks_backend_i *be) {
  return be && (be->dev_alloc || be->executor_argv);
}

bool ks_backend_device_probe(const ks_backend_i *be) {
  return be->probe_move || (be->executor_probes && be->executor_argv &&
                            ks_backend_device_class(be) == KS_DEV_GPU);
}

ks_code ks_artifact_write_json(const char *path, json_t *j, ks_err *err) {
  char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "%s: cannot format JSON", path);
  ks_code rc = ks_write_file_atomic(path, text, strlen(text), err);
  free(text);
  return rc;
}
