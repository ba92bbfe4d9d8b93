/* seed.c — see seed.h. */
#include "spec/seed.h"
#include "spec/cuda_analyze.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static void add_boost(ks_spec_seed *s, const char *id) {
  for (int i = 0; i < s->n_boost; i++)
    if (!strcmp(s->boost[i], id))
      return;
  if (s->n_boost < KS_SEED_MAX)
    ks_strlcpy(s->boost[s->n_boost++], id, sizeof s->boost[0]);
}

ks_code ks_spec_seed_load(const char *path, const char *backend,
                          ks_spec_seed **out, ks_err *err) {
  *out = NULL;
  const ks_concept_set *cs;
  ks_code rc = ks_concepts_get(&cs, err);
  if (rc)
    return rc;
  ks_spec_seed *s = ks_xcalloc(1, sizeof *s);
  ks_strlcpy(s->path, path, sizeof s->path);
  size_t len = 0;
  rc = ks_read_file(path, &s->source, &len, err);
  if (rc) {
    free(s);
    return ks_err_prefix(err, "--seed-cuda: ");
  }
  ks_cu_model m;
  rc = ks_cu_parse(s->source, len, path, &m, err);
  if (rc) {
    ks_spec_seed_free(s);
    return ks_err_prefix(err, "--seed-cuda: ");
  }
  ks_cuda_report rep;
  rc = ks_cuda_analyze_model(&m, cs, &rep, err);
  ks_cu_model_free(&m);
  if (rc) {
    ks_spec_seed_free(s);
    return rc;
  }
  const char *form_key = !strcmp(backend, "mlx") ? "metal" : backend;
  const ks_concept *found[KS_SEED_MAX];
  s->n = ks_cuda_report_concepts(&rep, found, KS_SEED_MAX);
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b,
                "CUDA seed %s: %d concepts (ksearch translate lists them "
                "with their lines)\n",
                path, s->n);
  for (int i = 0; i < s->n; i++) {
    ks_strlcpy(s->concept[i], found[i] -> id, sizeof s->concept[i]);
    s->line[i] = ks_cuda_report_line(&rep, found[i]->id);
    const char *form = ks_concept_form(found[i], form_key);
    ks_buf_printf(&b, "- %s (CUDA line %d) -> on %s: %s\n", found[i]->id,
                  s->line[i], backend, form ? form : "no form recorded");
    const json_t *seed = json_object_get(found[i]->json, "seed");
    if (json_is_true(json_object_get(seed, "generic")))
      continue;
    add_boost(s, found[i]->id);
    size_t k;
    json_t *r;
    json_array_foreach(json_object_get(seed, "related"), k, r) {
      if (json_is_string(r))
        add_boost(s, json_string_value(r));
    }
  }
  ks_buf_puts(&b, "concepts that raise plans:");
  for (int i = 0; i < s->n_boost; i++)
    ks_buf_printf(&b, " %s", s->boost[i]);
  ks_buf_puts(&b, s->n_boost ? "\n" : " none (only generic ones)\n");
  ks_cuda_report_free(&rep);
  s->notes = b.data ? b.data : ks_strdup("");
  *out = s;
  return KS_OK;
}

void ks_spec_seed_free(ks_spec_seed *s) {
  if (!s)
    return;
  free(s->source);
  free(s->notes);
  free(s);
}

bool ks_spec_seed_has(const ks_spec_seed *s, const char *concept_id) {
  for (int i = 0; s && i < s->n_boost; i++)
    if (!strcmp(s->boost[i], concept_id))
      return true;
  return false;
}

double ks_spec_seed_bonus(const ks_spec_seed *s, const char *const *concepts,
                          int n) {
  double b = 0;
  for (int i = 0; s && i < n; i++)
    if (concepts[i] && ks_spec_seed_has(s, concepts[i]))
      b += 0.15;
  return b > 0.3 ? 0.3 : b;
}
