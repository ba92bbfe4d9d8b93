/* class_spec.c — see class_spec.h. */
#include "search/class_spec.h"
#include "util/util.h"

#include <jansson.h>
#include <limits.h>
#include <string.h>

const char *ks_regime_name(ks_regime r) {
  static const char *const n[] = {"memory", "compute", "latency"};
  return (unsigned)r < KS_REGIME_COUNT ? n[r] : "?";
}

static void defaults(const char *klass, ks_class_spec *s) {
  memset(s, 0, sizeof *s);
  ks_strlcpy(s->klass, klass, sizeof s->klass);
  ks_decision *d = &s->d[s->n_decisions++];
  strcpy(d->name, "algorithm");
  d->is_template = true;
  for (int r = 0; r < KS_REGIME_COUNT; r++)
    d->priority[r] = 0.6;
}

/* decisions[i].start: {"PARAM": value} for params of decision d (after
 * d->params is read); NULL is no start */
static ks_code read_start(const json_t *start, ks_decision *d, const char *path,
                          size_t i, ks_err *err) {
  if (start && !json_is_object(start))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: decisions[%zu].start: must be an object mapping "
                      "parameter names to values, e.g. {\"SCHED\": \"2\"}",
                      path, i);
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)start, key, val) {
    int q = ks_class_spec_param_index(d, key);
    if (q < 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: decisions[%zu].start.%s: not a parameter of "
                        "decision \"%s\"; name one of its params",
                        path, i, key, d->name);
    if (json_is_string(val) && *json_string_value(val))
      ks_strlcpy(d->start[q], json_string_value(val), sizeof d->start[q]);
    else if (json_is_integer(val))
      snprintf(d->start[q], sizeof d->start[q], "%lld",
               (long long)json_integer_value(val));
    else
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: decisions[%zu].start.%s: must be a value of the "
                        "parameter (string or integer)",
                        path, i, key);
  }
  return KS_OK;
}

ks_code ks_class_spec_load(const char *klass, ks_class_spec *s, ks_err *err) {
  defaults(klass, s);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%.3000s/specs/classes/%s.json", ks_data_dir(),
           klass);
  if (!ks_file_exists(path))
    return KS_OK;
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root)
    return ks_err_set(err, KS_ERR_INPUT, "%s: line %d: %s", path, je.line,
                      je.text);
  ks_strlcpy(s->path, path, sizeof s->path);
  s->n_decisions = 0;
  ks_code rc = KS_OK;
  json_t *decs = json_object_get(root, "decisions");
  json_t *prio = json_object_get(root, "priorities");
  size_t i;
  json_t *v;
  if (!json_is_array(decs) || json_array_size(decs) == 0)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: decisions: missing; list the decisions of a plan in "
                    "order, the first with \"kind\": \"template\"",
                    path);
  json_array_foreach(decs, i, v) {
    if (rc || s->n_decisions >= KS_MAX_DECISIONS)
      break;
    ks_decision *d = &s->d[s->n_decisions];
    memset(d, 0, sizeof *d);
    const char *name = json_string_value(json_object_get(v, "decision"));
    if (!name) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "%s: decisions[%zu].decision: missing name", path, i);
      break;
    }
    ks_strlcpy(d->name, name, sizeof d->name);
    const char *kind = json_string_value(json_object_get(v, "kind"));
    d->is_template = kind && !strcmp(kind, "template");
    const char *desc = json_string_value(json_object_get(v, "description"));
    ks_strlcpy(d->description, desc ? desc : "", sizeof d->description);
    size_t k;
    json_t *p;
    json_array_foreach(json_object_get(v, "params"), k, p) {
      if (json_is_string(p) && d->n_params < KS_MAX_DECISION_PARAMS)
        ks_strlcpy(d->params[d->n_params++], json_string_value(p), 64);
    }
    json_array_foreach(json_object_get(v, "concepts"), k, p) {
      if (json_is_string(p) && d->n_concepts < 4)
        ks_strlcpy(d->concepts[d->n_concepts++], json_string_value(p), 48);
    }
    if ((rc = read_start(json_object_get(v, "start"), d, path, i, err)))
      break;
    if (!d->is_template && d->n_params == 0) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "%s: decisions[%zu] (%s): no params; name the template "
                      "parameters this decision sets",
                      path, i, d->name);
      break;
    }
    for (int r = 0; r < KS_REGIME_COUNT; r++) {
      json_t *pr = json_object_get(
          json_object_get(prio, ks_regime_name((ks_regime)r)), d->name);
      d->priority[r] = json_is_number(pr) ? json_number_value(pr) : 0.5;
      if (d->priority[r] < 0 || d->priority[r] > 1)
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "%s: priorities.%s.%s: must be within 0..1", path,
                        ks_regime_name((ks_regime)r), d->name);
    }
    s->n_decisions++;
  }
  json_array_foreach(json_object_get(root, "math_constraints"), i, v) {
    if (json_is_string(v) && s->n_constraints < 8)
      ks_strlcpy(s->constraints[s->n_constraints++], json_string_value(v), 256);
  }
  if (!rc && !s->d[0].is_template)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: decisions[0] must have \"kind\": \"template\" (the "
                    "algorithmic family comes first)",
                    path);
  json_decref(root);
  if (rc)
    defaults(klass, s);
  return rc;
}

int ks_class_spec_param_index(const ks_decision *d, const char *param) {
  for (int k = 0; k < d->n_params; k++)
    if (!strcmp(d->params[k], param))
      return k;
  return -1;
}

int ks_class_spec_decision_of(const ks_class_spec *s, const char *param) {
  for (int i = 0; i < s->n_decisions; i++)
    if (ks_class_spec_param_index(&s->d[i], param) >= 0)
      return i;
  return -1;
}
