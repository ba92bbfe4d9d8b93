/* wm_fixture.c — the world-model tests' shared helpers (wm_fixture.h). */
#include "wm_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>

char *wmt_dump(const ks_wm *wm) {
  json_t *j = ks_wm_to_json(wm);
  char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(j);
  return s;
}

void wmt_add(ks_wm *wm, const char *id, const char *parent,
             const char *decision, const char *choice, double priority,
             int difficulty) {
  ks_wm_node_spec s;
  ks_wm_spec_init(&s);
  s.id = id;
  s.parent = parent;
  s.decision = decision;
  s.choice = choice;
  s.priority = priority;
  s.difficulty = difficulty;
  ks_err err = {0};
  cr_assert_eq(ks_wm_insert(wm, &s, NULL, &err), KS_OK, "%s", err.msg);
}

void wmt_update(ks_wm *wm, const char *id, const char *fields_json) {
  json_error_t je;
  json_t *f = json_loads(fields_json, 0, &je);
  cr_assert_not_null(f, "bad test JSON: %s", je.text);
  ks_err err = {0};
  cr_assert_eq(ks_wm_update(wm, id, f, &err), KS_OK, "%s", err.msg);
  json_decref(f);
}

void wmt_solve(ks_wm *wm, const char *id, long long cand, double score) {
  char buf[256];
  snprintf(buf, sizeof buf,
           "{\"status\":\"solved\",\"solution\":{\"candidate_id\":%lld,"
           "\"score\":%g}}",
           cand, score);
  wmt_update(wm, id, buf);
}

/* root ─ n1 (solved) ─ n3 (open)
 *      └ n2 (open)   └ n4 (failed) */
ks_wm *wmt_small(void) {
  ks_wm *wm = ks_wm_new("rmsnorm");
  wmt_add(wm, "n1", "root", "algorithm", "two-pass", 0.8, 2);
  wmt_add(wm, "n2", "root", "algorithm", "one-pass", 0.6, 3);
  wmt_add(wm, "n3", "n1", "vectorization", "AVX2", 0.7, 2);
  wmt_add(wm, "n4", "n1", "vectorization", "AVX-512", 0.5, 3);
  wmt_solve(wm, "n1", 11, 1.5);
  ks_err err = {0};
  cr_assert_eq(ks_wm_set_status(wm, "n4", KS_WM_FAILED, &err), KS_OK, "%s",
               err.msg);
  return wm;
}
