/* world_model_fields.c — the rules every world-model node obeys, in one
 * place (DESIGN.md "World model"): the parser of node fields, shared by edit
 * scripts (ks_wm_apply_json, ks_wm_update) and world_model.json
 * (ks_wm_from_json), and the range checks that C callers (ks_wm_node_spec)
 * go through as well. Messages name the JSON path ("nodes[3].action.priority")
 * and the fix. */
#include "search/world_model_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- parsing */

static const struct {
  const char *name;
  unsigned bit;
} fields[] = {
    {"id", WM_F_ID},
    {"parent", WM_F_PARENT},
    {"decision", WM_F_DECISION},
    {"choice", WM_F_CHOICE},
    {"status", WM_F_STATUS},
    {"split", WM_F_SPLIT},
    {"action", WM_F_ACTION},
    {"concepts", WM_F_CONCEPTS},
    {"params", WM_F_PARAMS},
    {"solution", WM_F_SOLUTION},
    {"attempts", WM_F_ATTEMPTS},
    {"evidence", WM_F_EVIDENCE},
    {"notes", WM_F_NOTES},
};
#define NFIELDS (int)(sizeof fields / sizeof fields[0])

const char *ks_wmi_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "?";
}

ks_code ks_wmi_type_err(ks_err *err, const char *path, const char *want,
                        const json_t *v) {
  return ks_err_set(err, KS_ERR_INPUT, "%s: expected %s, got %s", path, want,
                    ks_wmi_type_name(v));
}

static ks_code get_str(const json_t *v, const char *path, char **dst,
                       ks_err *err) {
  if (!json_is_string(v))
    return ks_wmi_type_err(err, path, "a string", v);
  ks_wmi_set_str(dst, json_string_value(v));
  return KS_OK;
}

/* Integers may arrive as 3.0 from an LLM; any integral value is accepted. */
ks_code ks_wmi_get_int(const json_t *v, const char *path, long long lo,
                       long long hi, const char *range_hint, long long *out,
                       ks_err *err) {
  double d = json_is_real(v) ? json_real_value(v) : 0.5;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
  } else if (json_is_real(v) && d == floor(d) && fabs(d) < 9e15) {
    *out = (long long)d;
  } else {
    return ks_wmi_type_err(err, path, "an integer", v);
  }
  if (*out < lo || *out > hi)
    return ks_err_set(err, KS_ERR_INPUT, "%s: %lld is outside %s", path, *out,
                      range_hint);
  return KS_OK;
}

static ks_code get_num(const json_t *v, const char *path, double *out,
                       ks_err *err) {
  if (!json_is_number(v))
    return ks_wmi_type_err(err, path, "a number", v);
  *out = json_number_value(v);
  return KS_OK;
}

static ks_code parse_action(const json_t *obj, ks_wm_node *n, const char *path,
                            ks_err *err) {
  if (!json_is_object(obj))
    return ks_wmi_type_err(err, path, "an object", obj);
  const char *key;
  json_t *v;
  char p[512];
  ks_code rc = KS_OK;
  json_object_foreach((json_t *)obj, key, v) {
    snprintf(p, sizeof p, "%.400s.%.100s", path, key);
    long long i;
    if (strcmp(key, "title") == 0)
      rc = get_str(v, p, &n->action.title, err);
    else if (strcmp(key, "description") == 0)
      rc = get_str(v, p, &n->action.description, err);
    else if (strcmp(key, "rationale") == 0)
      rc = get_str(v, p, &n->action.rationale, err);
    else if (strcmp(key, "priority") == 0)
      rc = get_num(v, p, &n->action.priority, err);
    else if (strcmp(key, "expected_speedup") == 0)
      rc = get_num(v, p, &n->action.expected_speedup, err);
    else if (strcmp(key, "difficulty") == 0) {
      rc =
          ks_wmi_get_int(v, p, 1, 5, "1..5; use 1 (easy) to 5 (hard)", &i, err);
      if (!rc)
        n->action.difficulty = (int)i;
    } else
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: unknown field; an action has title, description, "
                        "difficulty, priority, expected_speedup, rationale",
                        p);
    if (rc)
      return rc;
  }
  return KS_OK;
}

static ks_code parse_concepts(const json_t *v, ks_wm_node *n, const char *path,
                              ks_err *err) {
  if (!json_is_array(v))
    return ks_wmi_type_err(err, path, "an array of concept ids", v);
  size_t k = json_array_size(v);
  for (size_t i = 0; i < k; i++)
    if (!json_is_string(json_array_get(v, i))) {
      char p[512];
      snprintf(p, sizeof p, "%.400s[%zu]", path, i);
      return ks_wmi_type_err(err, p, "a concept id string",
                             json_array_get(v, i));
    }
  for (int i = 0; i < n->n_concepts; i++)
    free(n->concepts[i]);
  n->concepts = ks_wmi_xrealloc(n->concepts, sizeof(char *) * k);
  for (size_t i = 0; i < k; i++)
    n->concepts[i] = ks_wmi_xstrdup(json_string_value(json_array_get(v, i)));
  n->n_concepts = (int)k;
  return KS_OK;
}

static ks_code parse_evidence(const json_t *v, ks_wm_node *n, const char *path,
                              ks_err *err) {
  if (!json_is_array(v))
    return ks_wmi_type_err(err, path, "an array of candidate ids", v);
  size_t k = json_array_size(v);
  int64_t *ev = ks_wmi_xmalloc(sizeof(int64_t) * k);
  for (size_t i = 0; i < k; i++) {
    char p[512];
    long long id;
    snprintf(p, sizeof p, "%.400s[%zu]", path, i);
    ks_code rc = ks_wmi_get_int(json_array_get(v, i), p, 1, LLONG_MAX,
                                "1.. (a candidate id)", &id, err);
    if (rc) {
      free(ev);
      return rc;
    }
    ev[i] = id;
  }
  free(n->evidence);
  n->evidence = ev;
  n->n_evidence = (int)k;
  return KS_OK;
}

static ks_code parse_params(const json_t *v, ks_wm_node *n, bool merge,
                            const char *path, ks_err *err) {
  if (!json_is_object(v))
    return ks_wmi_type_err(err, path, "an object of name: value", v);
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)v, key, val) {
    if (!(json_is_string(val) || json_is_number(val) ||
          (merge && json_is_null(val))))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s.%s: expected a string or number, got %s%s", path,
                        key, ks_wmi_type_name(val),
                        merge ? " (null removes a parameter)" : "");
  }
  if (!merge) {
    json_decref(n->params);
    n->params = json_deep_copy(v);
    if (!n->params)
      abort();
    return KS_OK;
  }
  json_object_foreach((json_t *)v, key, val) {
    if (json_is_null(val))
      json_object_del(n->params, key);
    else if (json_object_set_new(n->params, key, json_deep_copy(val)))
      abort();
  }
  return KS_OK;
}

static ks_code parse_solution(const json_t *v, ks_wm_node *n, const char *path,
                              ks_err *err) {
  if (json_is_null(v)) {
    n->solution.candidate_id = 0;
    n->solution.score = 0;
    return KS_OK;
  }
  if (!json_is_object(v))
    return ks_wmi_type_err(err, path, "an object {\"candidate_id\", \"score\"}",
                           v);
  const char *key;
  json_t *val;
  char p[512];
  json_object_foreach((json_t *)v, key, val) {
    snprintf(p, sizeof p, "%.400s.%.100s", path, key);
    ks_code rc;
    if (strcmp(key, "candidate_id") == 0) {
      long long id;
      rc = ks_wmi_get_int(val, p, 0, LLONG_MAX,
                          "0.. (a candidate id, 0 = none)", &id, err);
      if (!rc)
        n->solution.candidate_id = id;
    } else if (strcmp(key, "score") == 0) {
      rc = get_num(val, p, &n->solution.score, err);
    } else {
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: unknown field; a solution has candidate_id and "
                        "score",
                        p);
    }
    if (rc)
      return rc;
  }
  return KS_OK;
}

static const char *not_here_reason(unsigned bit) {
  switch (bit) {
  case WM_F_ID:
  case WM_F_PARENT:
    return "a node's id and parent never change; delete it and insert a new "
           "one instead";
  case WM_F_SPLIT: return "it is set by the split operation";
  case WM_F_SOLUTION:
  case WM_F_ATTEMPTS:
  case WM_F_EVIDENCE:
    return "a new node has no attempts yet; results are recorded after "
           "evaluations";
  default: return "it is not accepted by this operation";
  }
}

ks_code ks_wmi_parse_fields(const json_t *obj, ks_wm_node *n, unsigned allowed,
                            const char *const *skip, bool merge_params,
                            const char *where, ks_err *err) {
  char path[512];
  if (!json_is_object(obj))
    return ks_wmi_type_err(err, where && *where ? where : "fields", "an object",
                           obj);
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    bool skipped = false;
    for (int i = 0; skip && skip[i]; i++)
      skipped |= strcmp(skip[i], key) == 0;
    if (skipped)
      continue;
    ks_wmi_path(path, sizeof path, where, key);
    unsigned bit = 0;
    for (int i = 0; i < NFIELDS; i++)
      if (strcmp(fields[i].name, key) == 0)
        bit = fields[i].bit;
    if (!bit) {
      char known[512] = "";
      for (int i = 0; i < NFIELDS; i++)
        if (fields[i].bit & allowed) {
          strcat(known, known[0] ? ", " : "");
          strcat(known, fields[i].name);
        }
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: unknown field; the fields here are: %s", path,
                        known);
    }
    if (!(bit & allowed))
      return ks_err_set(err, KS_ERR_INPUT, "%s: cannot be set here: %s", path,
                        not_here_reason(bit));
    ks_code rc = KS_OK;
    long long i;
    switch (bit) {
    case WM_F_ID:
    case WM_F_PARENT:
      if (bit == WM_F_PARENT && json_is_null(v)) {
        n->parent[0] = '\0';
        break;
      }
      if (!json_is_string(v))
        return ks_wmi_type_err(err, path, "an id string", v);
      if (strlen(json_string_value(v)) >= KS_WM_ID_MAX ||
          (bit == WM_F_PARENT && !ks_wmi_id_ok(json_string_value(v))))
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s: '%.80s' is not a valid id (1 to %d characters "
                          "from A-Z a-z 0-9 _ . : -)",
                          path, json_string_value(v), KS_WM_ID_MAX - 1);
      snprintf(bit == WM_F_ID ? n->id : n->parent, KS_WM_ID_MAX, "%s",
               json_string_value(v));
      break;
    case WM_F_DECISION: rc = get_str(v, path, &n->decision, err); break;
    case WM_F_CHOICE: rc = get_str(v, path, &n->choice, err); break;
    case WM_F_NOTES: rc = get_str(v, path, &n->notes, err); break;
    case WM_F_STATUS:
      if (!json_is_string(v))
        return ks_wmi_type_err(err, path, "a status string", v);
      if (!ks_wm_status_parse(json_string_value(v), &n->status))
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s: '%.80s' is not a status; use open, running, "
                          "solved, failed, too_hard or pruned",
                          path, json_string_value(v));
      break;
    case WM_F_SPLIT:
      if (!json_is_boolean(v))
        return ks_wmi_type_err(err, path, "true or false", v);
      n->split = json_is_true(v);
      break;
    case WM_F_ACTION: rc = parse_action(v, n, path, err); break;
    case WM_F_CONCEPTS: rc = parse_concepts(v, n, path, err); break;
    case WM_F_PARAMS: rc = parse_params(v, n, merge_params, path, err); break;
    case WM_F_SOLUTION: rc = parse_solution(v, n, path, err); break;
    case WM_F_EVIDENCE: rc = parse_evidence(v, n, path, err); break;
    case WM_F_ATTEMPTS:
      rc = ks_wmi_get_int(v, path, 0, INT_MAX, "0..2147483647", &i, err);
      if (!rc)
        n->attempts = (int)i;
      break;
    }
    if (rc)
      return rc;
  }
  return KS_OK;
}

/* ---------------------------------------------------------------- checks */

const char *ks_wmi_path(char *buf, size_t n, const char *where,
                        const char *field) {
  if (where && *where)
    snprintf(buf, n, "%s.%s", where, field);
  else
    snprintf(buf, n, "%s", field);
  return buf;
}

bool ks_wmi_id_ok(const char *id) {
  size_t len = id ? strlen(id) : 0;
  if (len == 0 || len >= KS_WM_ID_MAX)
    return false;
  for (const char *c = id; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
          (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == ':' ||
          *c == '-'))
      return false;
  return true;
}

bool ks_wmi_utf8_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int extra = *p < 0x80             ? 0
                : (*p & 0xE0) == 0xC0 ? 1
                : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 ? 3
                                      : -1;
    if (extra < 0 || (extra == 1 && *p < 0xC2))
      return false;
    p++;
    for (int i = 0; i < extra; i++, p++)
      if ((*p & 0xC0) != 0x80)
        return false;
  }
  return true;
}

/* Length limits keep prompts and files sane; notes may be long. */
enum { SHORT_MAX = 200, TEXT_MAX = 4000, NOTES_MAX = 65536 };

static ks_code check_text(const char *s, size_t max, bool required,
                          const char *where, const char *field, ks_err *err) {
  char path[512];
  ks_wmi_path(path, sizeof path, where, field);
  if (required && !*s)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: is empty; give a short non-empty text", path);
  if (strlen(s) > max)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: is %zu bytes long; the limit is %zu, shorten it",
                      path, strlen(s), max);
  if (!ks_wmi_utf8_ok(s))
    return ks_err_set(err, KS_ERR_INPUT, "%s: is not valid UTF-8", path);
  return KS_OK;
}

ks_code ks_wmi_node_check(const ks_wm_node *n, bool is_root, const char *where,
                          ks_err *err) {
  char path[512];
  ks_code rc;
  if (!ks_wmi_id_ok(n->id))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: '%s' is not a valid id; use 1 to %d characters "
                      "from A-Z a-z 0-9 _ . : - (or omit it for a fresh one)",
                      ks_wmi_path(path, sizeof path, where, "id"), n->id,
                      KS_WM_ID_MAX - 1);
  if (!is_root && strcmp(n->id, KS_WM_ROOT_ID) == 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: 'root' is reserved for the root; choose another id",
                      ks_wmi_path(path, sizeof path, where, "id"));
  if ((rc = check_text(n->decision, SHORT_MAX, !is_root, where, "decision",
                       err)) ||
      (rc = check_text(n->choice, SHORT_MAX, !is_root, where, "choice", err)) ||
      (rc = check_text(n->action.title, SHORT_MAX, false, where, "action.title",
                       err)) ||
      (rc = check_text(n->action.description, TEXT_MAX, false, where,
                       "action.description", err)) ||
      (rc = check_text(n->action.rationale, TEXT_MAX, false, where,
                       "action.rationale", err)) ||
      (rc = check_text(n->notes, NOTES_MAX, false, where, "notes", err)))
    return rc;
  if (n->action.difficulty < 1 || n->action.difficulty > 5)
    return ks_err_set(
        err, KS_ERR_INPUT, "%s: %d is outside 1..5; use 1 (easy) to 5 (hard)",
        ks_wmi_path(path, sizeof path, where, "action.difficulty"),
        n->action.difficulty);
  if (!(n->action.priority >= 0 && n->action.priority <= 1))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: %g is outside 0..1; use a weight between 0 (last) "
                      "and 1 (first)",
                      ks_wmi_path(path, sizeof path, where, "action.priority"),
                      n->action.priority);
  if (!(n->action.expected_speedup >= 0) ||
      !isfinite(n->action.expected_speedup))
    return ks_err_set(
        err, KS_ERR_INPUT,
        "%s: %g is not a finite number >= 0; give the expected speedup over "
        "the parent as a factor (1.3 = 30%% faster)",
        ks_wmi_path(path, sizeof path, where, "action.expected_speedup"),
        n->action.expected_speedup);
  for (int i = 0; i < n->n_concepts; i++) {
    char field[64];
    snprintf(field, sizeof field, "concepts[%d]", i);
    if ((rc = check_text(n->concepts[i], KS_WM_ID_MAX - 1, true, where, field,
                         err)))
      return rc;
  }
  if (!json_is_object(n->params))
    return ks_err_set(err, KS_ERR_INPUT, "%s: must be an object",
                      ks_wmi_path(path, sizeof path, where, "params"));
  const char *key;
  json_t *v;
  json_object_foreach(n->params, key, v) {
    if (!*key || !(json_is_string(v) || json_is_number(v)))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: parameter '%s' must have a non-empty name and a "
                        "string or number value",
                        ks_wmi_path(path, sizeof path, where, "params"), key);
  }
  if (n->solution.candidate_id < 0)
    return ks_err_set(
        err, KS_ERR_INPUT,
        "%s: %lld is negative; use a candidate id, or 0 for none",
        ks_wmi_path(path, sizeof path, where, "solution.candidate_id"),
        (long long)n->solution.candidate_id);
  if (!(n->solution.score >= 0) || !isfinite(n->solution.score))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: %g is not a finite number >= 0 (scores are "
                      "speedups over the baseline; 0 = wrong)",
                      ks_wmi_path(path, sizeof path, where, "solution.score"),
                      n->solution.score);
  if (n->attempts < 0)
    return ks_err_set(err, KS_ERR_INPUT, "%s: %d is negative",
                      ks_wmi_path(path, sizeof path, where, "attempts"),
                      n->attempts);
  for (int i = 0; i < n->n_evidence; i++)
    if (n->evidence[i] <= 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: evidence[%d] = %lld is not a candidate id (> 0)",
                        ks_wmi_path(path, sizeof path, where, "evidence"), i,
                        (long long)n->evidence[i]);
  if (!is_root && n->status == KS_WM_SOLVED && n->solution.candidate_id == 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: %s cannot be solved without a solution; set "
                      "solution {\"candidate_id\": ID, \"score\": S} as well",
                      ks_wmi_path(path, sizeof path, where, "status"), n->id);
  if (n->split && n->status != KS_WM_OPEN && n->status != KS_WM_PRUNED)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: %s is a split group header; its status can only be "
                      "open or pruned (work happens in its children)",
                      ks_wmi_path(path, sizeof path, where, "status"), n->id);
  return KS_OK;
}
