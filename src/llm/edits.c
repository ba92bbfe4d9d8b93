/* edits.c — see edits.h. */
#include "llm/edits.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void ks_llm_edit_answer_free(ks_llm_edit_answer *a) {
  free(a->reflection);
  free(a->analysis);
  memset(a, 0, sizeof *a);
}

ks_code ks_llm_edit_answer_read(const json_t *answer, bool require_reflection,
                                ks_llm_edit_answer *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  if (json_is_array(answer)) {
    out->ops = (json_t *)answer;
  } else {
    out->ops = json_object_get(answer, "ops");
    if (!json_is_array(out->ops)) {
      /* a lone operation object is a one-op script */
      if (json_is_string(json_object_get(answer, "op"))) {
        return ks_err_set(err, KS_ERR_INPUT,
                          "expected {\"reflection\": ..., \"ops\": [...]}; "
                          "put the operation inside an \"ops\" array");
      }
      return ks_err_set(err, KS_ERR_INPUT,
                        "ops: missing or not an array; answer {%s\"ops\": "
                        "[{\"op\": ...}, ...]}",
                        require_reflection ? "\"reflection\": \"...\", " : "");
    }
    const char *r = json_string_value(json_object_get(answer, "reflection"));
    out->reflection = ks_strdup(r ? r : "");
    json_t *an = json_object_get(answer, "analysis");
    if (json_is_string(an)) {
      out->analysis = ks_strdup(json_string_value(an));
    } else if (json_is_object(an)) {
      ks_buf b;
      ks_buf_init(&b);
      const char *k;
      json_t *v;
      json_object_foreach(an, k, v) {
        if (json_is_string(v))
          ks_buf_printf(&b, "%s: %s\n", k, json_string_value(v));
        else {
          char *s = json_dumps(v, JSON_COMPACT);
          ks_buf_printf(&b, "%s: %s\n", k, s ? s : "");
          free(s);
        }
      }
      out->analysis = b.data ? b.data : ks_strdup("");
    }
  }
  if (!out->reflection)
    out->reflection = ks_strdup("");
  if (!out->analysis)
    out->analysis = ks_strdup("");
  if (require_reflection) {
    bool blank = true;
    for (const char *p = out->reflection; *p; p++)
      blank &= *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
    if (blank) {
      ks_llm_edit_answer_free(out);
      return ks_err_set(err, KS_ERR_INPUT,
                        "reflection: missing or empty; it is required: say in "
                        "1 to 5 sentences what the evidence teaches before "
                        "the ops");
    }
  }
  if (json_array_size(out->ops) > KS_LLM_MAX_OPS) {
    size_t n = json_array_size(out->ops);
    ks_llm_edit_answer_free(out);
    return ks_err_set(err, KS_ERR_INPUT,
                      "ops: %zu operations; at most %d per answer", n,
                      KS_LLM_MAX_OPS);
  }
  return KS_OK;
}

static ks_code node_fields(const json_t *o, const char *where, ks_err *err) {
  static const char *const owned[] = {"solution", "attempts", "evidence",
                                      "split", NULL};
  for (int k = 0; owned[k]; k++)
    if (json_object_get(o, owned[k]))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s.%s: recorded by ksearch from evaluations; leave "
                        "it out",
                        where, owned[k]);
  const char *st = json_string_value(json_object_get(o, "status"));
  if (st && (!strcmp(st, "solved") || !strcmp(st, "running")))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.status: \"%s\" is decided by ksearch from "
                      "measurements; use \"open\", \"pruned\" or \"too_hard\"",
                      where, st);
  return KS_OK;
}

ks_code ks_llm_apply_edits(ks_wm *wm, const json_t *ops, bool inserts_only,
                           ks_err *err) {
  if (!json_is_array(ops))
    return ks_err_set(err, KS_ERR_INPUT, "ops: expected an array");
  if (json_array_size(ops) > KS_LLM_MAX_OPS)
    return ks_err_set(err, KS_ERR_INPUT, "ops: at most %d operations",
                      KS_LLM_MAX_OPS);
  size_t i;
  json_t *op;
  json_array_foreach(ops, i, op) {
    char where[32];
    snprintf(where, sizeof where, "ops[%zu]", i);
    if (!json_is_object(op))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: expected an object {\"op\": ...}", where);
    const char *name = json_string_value(json_object_get(op, "op"));
    if (inserts_only && (!name || strcmp(name, "insert")))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s.op: the initial world model is built from "
                        "\"insert\" operations only",
                        where);
    ks_code rc = node_fields(op, where, err);
    if (rc)
      return rc;
    size_t j;
    json_t *ch;
    json_array_foreach(json_object_get(op, "children"), j, ch) {
      char w2[64];
      snprintf(w2, sizeof w2, "%s.children[%zu]", where, j);
      if ((rc = node_fields(ch, w2, err)))
        return rc;
    }
  }
  return ks_wm_apply_json(wm, ops, err);
}
