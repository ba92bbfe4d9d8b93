/* planner_llm_state.c — the LLM planner's memory (DESIGN.md: LLM planner
 * and coder): per-node memo (feedback, status, compiler output, last code,
 * notes), candidate sources and results (this session's, else the store's),
 * planner events, and small text helpers the prompts share. */
#include "search/planner_llm_internal.h"
#include "store/store.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void ks_llmp_id_key(int64_t id, char key[32]) {
  snprintf(key, 32, "%lld", (long long)id);
}

json_t *ks_llmp_memo_of(llm_planner *p, const char *node) {
  json_t *m = json_object_get(p->memo, node);
  if (!m) {
    m = json_object();
    json_object_set_new(p->memo, node, m);
  }
  return m;
}

const char *ks_llmp_memo_str(llm_planner *p, const char *node,
                             const char *key) {
  return json_string_value(
      json_object_get(json_object_get(p->memo, node), key));
}

void ks_llmp_memo_set(llm_planner *p, const char *node, const char *key,
                      const char *v) {
  json_t *m = ks_llmp_memo_of(p, node);
  if (v)
    json_object_set_new(m, key, json_string(v));
  else
    json_object_del(m, key);
}

void ks_llmp_event(llm_planner *p, const char *kind, json_t *j) {
  if (!p->store) {
    json_decref(j);
    return;
  }
  char *s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  ks_err e;
  if (s && ks_store_add_event(p->store, kind, s, &e))
    ks_log(KS_LOG_INFO, "llm planner: could not record an event: %s", e.msg);
  free(s);
}

/* The source of a candidate: this session's memory, else the store. */
char *ks_llmp_cand_source(llm_planner *p, int64_t id) {
  char key[32];
  ks_llmp_id_key(id, key);
  const char *s = json_string_value(json_object_get(p->sources, key));
  if (s)
    return ks_strdup(s);
  ks_store_candidate c;
  memset(&c, 0, sizeof c);
  ks_err e;
  if (!p->store || id <= 0 || ks_store_get_candidate(p->store, id, &c, &e))
    return NULL;
  char *out = ks_strdup(c.source);
  ks_store_candidate_free(&c);
  json_object_set_new(p->sources, key, json_string(out));
  return out;
}

void ks_llmp_remember_result(llm_planner *p, int64_t id, const json_t *rj) {
  char key[32];
  ks_llmp_id_key(id, key);
  char *text = ks_llm_result_text(p->task, rj);
  char *tim = ks_llm_timings_text(p->task, rj);
  const char *st = json_string_value(json_object_get(rj, "status"));
  json_object_set_new(p->results, key,
                      json_pack("{s:s, s:s, s:s}", "text", text, "timings", tim,
                                "status", st ? st : "?"));
  free(text);
  free(tim);
}

/* {text, timings, status} of a candidate's latest evaluation; NULL if none. */
const json_t *ks_llmp_cand_result(llm_planner *p, int64_t id) {
  char key[32];
  ks_llmp_id_key(id, key);
  json_t *r = json_object_get(p->results, key);
  if (r || !p->store || id <= 0)
    return r;
  ks_store_eval *rows = NULL;
  size_t n = 0;
  ks_err e;
  if (ks_store_list_evaluations(p->store, &rows, &n, &e))
    return NULL;
  int64_t eval_id = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].candidate_id == id)
      eval_id = rows[i].id;
  free(rows);
  char *text = NULL;
  if (!eval_id || ks_store_get_result_json(p->store, eval_id, &text, &e) ||
      !text)
    return NULL;
  json_t *rj = json_loads(text, 0, NULL);
  free(text);
  if (!rj)
    return NULL;
  ks_llmp_remember_result(p, id, rj);
  json_decref(rj);
  return json_object_get(p->results, key);
}

const char *ks_llmp_result_field(const json_t *r, const char *k,
                                 const char *dflt) {
  const char *s = json_string_value(json_object_get(r, k));
  return s ? s : dflt;
}

int ks_llmp_reviews_of(const ks_wm_node *n) {
  int k = 0;
  for (const char *s = strstr(n->notes, REVIEW_MARK); s;
       s = strstr(s + 1, REVIEW_MARK))
    k++;
  return k;
}

bool ks_llmp_first_level(const ks_wm_node *n) { return !n->up || !n->up->up; }

char *ks_llmp_fenced(const char *code, const char *lang) {
  char *c = ks_llm_clip(code, CODE_MAX);
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "```%s\n%s%s```\n", lang, c,
                c[0] && c[strlen(c) - 1] == '\n' ? "" : "\n");
  free(c);
  return b.data;
}

char *ks_llmp_tree_text(const ks_wm *wm) {
  char *t = ks_wm_render_tree(wm);
  char *c = ks_llm_clip(t, TREE_MAX);
  free(t);
  return c;
}

void ks_llmp_log_budget(llm_planner *p, const ks_err *e) {
  if (!p->budget_spent)
    ks_log(KS_LOG_INFO, "llm: %s; the run ends", e->msg);
  p->budget_spent = true;
}
