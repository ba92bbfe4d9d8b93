/* translate.c — ks_translate: picks the backend's translator (see
 * translate.h) and sets up the shared engine. */
#include "spec/translate_internal.h"

#include <string.h>

ks_code ks_translate_opencl(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_metal(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_c(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_mlx(ks_tr *x, ks_translation *out, ks_err *err);

ks_code ks_translate(const ks_cu_model *m, const char *target,
                     ks_translation *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  ks_buf_init(&out->code);
  out->kernels = json_array();
  out->todos = json_array();
  const ks_spec_target *t;
  ks_code rc = ks_spec_target_get(target, &t, err);
  if (rc)
    return rc;
  ks_strlcpy(out->target, t->id, sizeof out->target);
  ks_strlcpy(out->backend, t->backend, sizeof out->backend);
  ks_code (*fn)(ks_tr *, ks_translation *, ks_err *) =
      !strcmp(t->backend, "opencl")  ? ks_translate_opencl
      : !strcmp(t->backend, "metal") ? ks_translate_metal
      : !strcmp(t->backend, "c")     ? ks_translate_c
      : !strcmp(t->backend, "mlx")   ? ks_translate_mlx
                                     : NULL;
  if (!fn)
    return ks_err_set(err, KS_ERR_INPUT,
                      "--to %s: translation goes to opencl, metal, c or mlx "
                      "(target %s is the %s backend)",
                      target, t->id, t->backend);
  ks_tr x;
  rc = ks_tr_init(&x, m, t, out, err);
  if (!rc)
    rc = fn(&x, out, err);
  ks_tr_fini(&x);
  out->n_todos = (int)json_array_size(out->todos);
  return rc;
}

void ks_translation_free(ks_translation *t) {
  ks_buf_free(&t->code);
  json_decref(t->kernels);
  json_decref(t->todos);
  t->kernels = t->todos = NULL;
}
