/* test_world_model.c — unit tests of the world model (src/search/world_model*):
 * edit validation leaves the tree untouched, scripts are all-or-nothing, JSON
 * round trips and rejects bad files by JSON path, selection is ordered and
 * reproducible, saves are atomic, renders are bounded. */
#include "search/world_model.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static char *wmt_dump(const ks_wm *wm) {
  json_t *j = ks_wm_to_json(wm);
  char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(j);
  return s;
}

static void wmt_add(ks_wm *wm, const char *id, const char *parent,
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

static void wmt_update(ks_wm *wm, const char *id, const char *fields_json) {
  json_error_t je;
  json_t *f = json_loads(fields_json, 0, &je);
  cr_assert_not_null(f, "bad test JSON: %s", je.text);
  ks_err err = {0};
  cr_assert_eq(ks_wm_update(wm, id, f, &err), KS_OK, "%s", err.msg);
  json_decref(f);
}

static void wmt_solve(ks_wm *wm, const char *id, long long cand, double score) {
  char buf[256];
  snprintf(buf, sizeof buf,
           "{\"status\":\"solved\",\"solution\":{\"candidate_id\":%lld,"
           "\"score\":%g}}",
           cand, score);
  wmt_update(wm, id, buf);
}

/* root ─ n1 (solved) ─ n3 (open)
 *      └ n2 (open)   └ n4 (failed) */
static ks_wm *wmt_small(void) {
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

/* Runs an update that must fail; checks the message and that nothing
 * changed. */
static void wmt_bad_update(ks_wm *wm, const char *id, const char *fields_json,
                           const char *want) {
  char *before = wmt_dump(wm);
  json_t *f = json_loads(fields_json, 0, NULL);
  cr_assert_not_null(f);
  ks_err err = {0};
  cr_assert_eq(ks_wm_update(wm, id, f, &err), KS_ERR_INPUT, "%s accepted",
               fields_json);
  cr_assert(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
  char *after = wmt_dump(wm);
  cr_assert_str_eq(before, after);
  free(before);
  free(after);
  json_decref(f);
}

static void wmt_bad_script(ks_wm *wm, const char *script, const char *want) {
  char *before = wmt_dump(wm);
  json_error_t je;
  json_t *ops = json_loads(script, 0, &je);
  cr_assert_not_null(ops, "bad test JSON: %s", je.text);
  ks_err err = {0};
  cr_assert_eq(ks_wm_apply_json(wm, ops, &err), KS_ERR_INPUT, "%s accepted",
               script);
  cr_assert(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
  char *after = wmt_dump(wm);
  cr_assert_str_eq(before, after);
  free(before);
  free(after);
  json_decref(ops);
}

static void wmt_bad_doc(const char *doc, const char *want) {
  json_error_t je;
  json_t *j = json_loads(doc, 0, &je);
  cr_assert_not_null(j, "bad test JSON: %s", je.text);
  ks_wm *wm = (ks_wm *)1;
  ks_err err = {0};
  cr_assert_eq(ks_wm_from_json(j, &wm, &err), KS_ERR_INPUT, "accepted: %s",
               doc);
  cr_assert_null(wm);
  cr_assert(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
  json_decref(j);
}

/* ---------------------------------------------------------------- basics */

Test(world_model, new_tree_has_only_the_root) {
  ks_wm *wm = ks_wm_new("rmsnorm");
  cr_assert_eq(ks_wm_count(wm), 1);
  const ks_wm_node *r = ks_wm_root(wm);
  cr_assert_str_eq(r->id, "root");
  cr_assert_str_eq(r->choice, "rmsnorm");
  cr_assert_eq(r->status, KS_WM_SOLVED);
  cr_assert_null(ks_wm_select(wm, 1.0, 7));
  cr_assert_null(ks_wm_best_solved(wm));
  ks_wm_free(wm);
}

Test(world_model, insert_assigns_fresh_ids_and_plans) {
  ks_wm *wm = ks_wm_new("t");
  ks_wm_node_spec s;
  ks_wm_spec_init(&s);
  s.parent = "root";
  s.decision = "algorithm";
  s.choice = "two-pass";
  const char *concepts[] = {"row_reduction", "simd"};
  s.concepts = concepts;
  s.n_concepts = 2;
  char id[KS_WM_ID_MAX], id2[KS_WM_ID_MAX];
  ks_err err = {0};
  cr_assert_eq(ks_wm_insert(wm, &s, id, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(id, "n1");
  s.parent = id;
  s.decision = "vector width";
  s.choice = "8";
  cr_assert_eq(ks_wm_insert(wm, &s, id2, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(id2, "n2");
  const ks_wm_node *n = ks_wm_find(wm, "n2");
  cr_assert_not_null(n);
  cr_assert_eq(n->status, KS_WM_OPEN);
  cr_assert_str_eq(n->action.title, "8", "title defaults to the choice");
  cr_assert_eq(n->up, ks_wm_find(wm, "n1"));
  cr_assert_eq(n->depth, 2);
  cr_assert_eq(ks_wm_find(wm, "n1")->n_concepts, 2);
  char plan[4][KS_WM_PLAN_STEP];
  cr_assert_eq(ks_wm_plan(wm, "n2", plan, 4), 2);
  cr_assert_str_eq(plan[0], "algorithm: two-pass");
  cr_assert_str_eq(plan[1], "vector width: 8");
  cr_assert_eq(ks_wm_plan(wm, "nope", plan, 4), -1);
  char fresh[KS_WM_ID_MAX];
  ks_wm_new_id(wm, fresh);
  cr_assert_str_eq(fresh, "n3");
  ks_wm_free(wm);
}

/* ---------------------------------------------------------------- invalid
 * edits */

Test(world_model, insert_rejections_name_the_problem) {
  ks_wm *wm = wmt_small();
  char *before = wmt_dump(wm);
  struct {
    const char *id, *parent, *decision, *choice;
    int difficulty;
    double priority;
    const char *want;
  } cases[] = {
      {NULL, "zz", "a", "b", 3, 0.5, "unknown parent"},
      {"n2", "root", "a", "b", 3, 0.5, "already exists"},
      {NULL, "root", "a", "b", 7, 0.5, "outside 1..5"},
      {NULL, "root", "a", "b", 0, 0.5, "action.difficulty"},
      {NULL, "root", "a", "b", 3, 1.5, "outside 0..1"},
      {NULL, "root", "a", "b", 3, -0.1, "action.priority"},
      {NULL, "root", "", "b", 3, 0.5, "decision: missing or empty"},
      {NULL, NULL, "a", "b", 3, 0.5, "parent: missing"},
      {"bad id!", "root", "a", "b", 3, 0.5, "not a valid id"},
      {"root", "n1", "a", "b", 3, 0.5, "already exists"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ks_wm_node_spec s;
    ks_wm_spec_init(&s);
    s.id = cases[i].id;
    s.parent = cases[i].parent;
    s.decision = cases[i].decision;
    s.choice = cases[i].choice;
    s.difficulty = cases[i].difficulty;
    s.priority = cases[i].priority;
    ks_err err = {0};
    cr_assert_eq(ks_wm_insert(wm, &s, NULL, &err), KS_ERR_INPUT, "case %zu", i);
    cr_assert(strstr(err.msg, cases[i].want), "case %zu: '%s' lacks '%s'", i,
              err.msg, cases[i].want);
    char *after = wmt_dump(wm);
    cr_assert_str_eq(before, after, "case %zu changed the tree", i);
    free(after);
  }
  free(before);
  ks_wm_free(wm);
}

Test(world_model, update_rejections_name_the_problem) {
  ks_wm *wm = wmt_small();
  wmt_bad_update(wm, "root", "{\"notes\":\"x\"}", "root cannot be edited");
  wmt_bad_update(wm, "n9", "{\"notes\":\"x\"}", "no node 'n9'");
  wmt_bad_update(wm, "n2", "{\"action\":{\"difficulty\":6}}", "outside 1..5");
  wmt_bad_update(wm, "n2", "{\"action\":{\"priority\":2}}",
                 "action.priority: 2 is outside 0..1");
  wmt_bad_update(wm, "n2", "{\"action\":{\"priority\":\"high\"}}",
                 "expected a number");
  wmt_bad_update(wm, "n2", "{\"action\":{\"colour\":1}}", "unknown field");
  wmt_bad_update(wm, "n2", "{\"colour\":1}", "colour: unknown field");
  wmt_bad_update(wm, "n2", "{\"id\":\"n7\"}", "never change");
  wmt_bad_update(wm, "n2", "{\"parent\":\"n1\"}", "never change");
  wmt_bad_update(wm, "n2", "{\"split\":true}", "split operation");
  wmt_bad_update(wm, "n2", "{\"status\":\"done\"}", "not a status");
  wmt_bad_update(wm, "n2", "{\"status\":\"solved\"}", "without a solution");
  wmt_bad_update(wm, "n1", "{\"status\":\"open\"}",
                 "cannot go from solved to open");
  wmt_bad_update(wm, "n4",
                 "{\"status\":\"solved\",\"solution\":"
                 "{\"candidate_id\":3,\"score\":2}}",
                 "cannot go from failed to solved");
  /* Solved nodes keep their solution unless the score improves. */
  wmt_bad_update(wm, "n1", "{\"solution\":null}", "keeps its solution");
  wmt_bad_update(wm, "n1", "{\"solution\":{\"candidate_id\":12,\"score\":1.2}}",
                 "keeps its solution");
  wmt_bad_update(wm, "n1", "{\"solution\":{\"candidate_id\":12,\"score\":1.5}}",
                 "higher score");
  wmt_bad_update(wm, "n1", "{\"solution\":{\"candidate_id\":0,\"score\":3}}",
                 "keeps its solution");
  wmt_bad_update(wm, "n2", "{\"params\":{\"VEC\":[8]}}", "params.VEC");
  wmt_bad_update(wm, "n2", "{\"attempts\":-1}", "attempts");
  wmt_bad_update(wm, "n2", "{\"decision\":\"\"}", "decision");
  /* ...and a better score is accepted. */
  wmt_update(wm, "n1", "{\"solution\":{\"candidate_id\":12,\"score\":1.9}}");
  cr_assert_eq(ks_wm_find(wm, "n1")->solution.candidate_id, 12);
  ks_wm_free(wm);
}

Test(world_model, update_changes_listed_fields_only) {
  ks_wm *wm = wmt_small();
  wmt_update(wm, "n2", "{\"params\":{\"VEC\":8,\"UNROLL\":\"4\"}}");
  wmt_update(wm, "n2",
             "{\"action\":{\"priority\":0.9},\"params\":{\"VEC\":null,"
             "\"TILE\":16},\"notes\":\"try tiles\"}");
  const ks_wm_node *n = ks_wm_find(wm, "n2");
  cr_assert_float_eq(n->action.priority, 0.9, 1e-12);
  cr_assert_eq(n->action.difficulty, 3, "unlisted action field kept");
  cr_assert_str_eq(n->choice, "one-pass");
  cr_assert_null(json_object_get(n->params, "VEC"), "null removes");
  cr_assert_str_eq(json_string_value(json_object_get(n->params, "UNROLL")),
                   "4");
  cr_assert_eq(json_integer_value(json_object_get(n->params, "TILE")), 16);
  cr_assert_str_eq(n->notes, "try tiles");
  /* difficulty written as 2.0 is an integer */
  wmt_update(wm, "n2", "{\"action\":{\"difficulty\":2.0}}");
  cr_assert_eq(n->action.difficulty, 2);
  ks_wm_free(wm);
}

Test(world_model, delete_only_open_leaves) {
  ks_wm *wm = wmt_small();
  const char *cases[][2] = {
      {"root", "root cannot be deleted"},
      {"n1", "only open leaves can be deleted; 'n1' is solved"},
      {"n4", "only open leaves"},
      {"n7", "no node 'n7'"},
  };
  char *before = wmt_dump(wm);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ks_err err = {0};
    cr_assert_eq(ks_wm_delete(wm, cases[i][0], &err), KS_ERR_INPUT);
    cr_assert(strstr(err.msg, cases[i][1]), "'%s' lacks '%s'", err.msg,
              cases[i][1]);
    char *after = wmt_dump(wm);
    cr_assert_str_eq(before, after);
    free(after);
  }
  free(before);
  /* An open node with children is not a leaf. */
  wmt_add(wm, "n5", "n2", "tile", "16", 0.5, 2);
  ks_err err = {0};
  cr_assert_eq(ks_wm_delete(wm, "n2", &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "has 1 children"), "%s", err.msg);
  cr_assert_eq(ks_wm_delete(wm, "n5", &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_wm_delete(wm, "n2", &err), KS_OK, "%s", err.msg);
  cr_assert_null(ks_wm_find(wm, "n2"));
  cr_assert_eq(ks_wm_count(wm), 4);
  cr_assert_eq(ks_wm_find(wm, "root")->n_children, 1);
  /* Deleted ids are not handed out again. */
  char fresh[KS_WM_ID_MAX];
  ks_wm_new_id(wm, fresh);
  cr_assert_str_eq(fresh, "n6");
  ks_wm_free(wm);
}

Test(world_model, split_rules) {
  ks_wm *wm = wmt_small();
  ks_wm_node_spec kids[2];
  for (int i = 0; i < 2; i++) {
    ks_wm_spec_init(&kids[i]);
    kids[i].decision = "step";
    kids[i].choice = i ? "vectorize" : "tile";
  }
  char *before = wmt_dump(wm);
  const char *cases[][2] = {
      {"n1", "only open leaves can be split; 'n1' is solved"},
      {"n4", "only open leaves can be split; 'n4' is failed"},
      {"root", "root cannot be split"},
      {"zz", "no node 'zz'"},
  };
  ks_err err = {0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_assert_eq(ks_wm_split(wm, cases[i][0], kids, 2, NULL, &err),
                 KS_ERR_INPUT);
    cr_assert(strstr(err.msg, cases[i][1]), "'%s' lacks '%s'", err.msg,
              cases[i][1]);
  }
  cr_assert_eq(ks_wm_split(wm, "n2", kids, 1, NULL, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "2 to 16 children"), "%s", err.msg);
  kids[1].priority = 3;
  cr_assert_eq(ks_wm_split(wm, "n2", kids, 2, NULL, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "children[1].action.priority"), "%s", err.msg);
  kids[1].priority = 0.5;
  kids[0].id = kids[1].id = "same";
  cr_assert_eq(ks_wm_split(wm, "n2", kids, 2, NULL, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "already exists"), "%s", err.msg);
  char *after = wmt_dump(wm);
  cr_assert_str_eq(before, after);
  free(after);
  free(before);

  /* A valid split: the header is transparent to frontier and plans. */
  kids[0].id = kids[1].id = NULL;
  char ids[2][KS_WM_ID_MAX];
  cr_assert_eq(ks_wm_split(wm, "n2", kids, 2, ids, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(ids[0], "n5");
  cr_assert_str_eq(ids[1], "n6");
  const ks_wm_node *n2 = ks_wm_find(wm, "n2");
  cr_assert(n2->split);
  cr_assert_eq(n2->status, KS_WM_OPEN);
  cr_assert_not(ks_wm_on_frontier(n2));
  cr_assert(ks_wm_on_frontier(ks_wm_find(wm, "n5")));
  char plan[4][KS_WM_PLAN_STEP];
  cr_assert_eq(ks_wm_plan(wm, "n6", plan, 4), 1);
  cr_assert_str_eq(plan[0], "step: vectorize");
  cr_assert_eq(ks_wm_split(wm, "n2", kids, 2, NULL, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "already split"), "%s", err.msg);
  wmt_bad_update(wm, "n2", "{\"status\":\"running\"}", "split group header");
  cr_assert_eq(ks_wm_record_attempt(wm, "n2", 5, 1.0, &err), KS_ERR_INPUT);
  /* Pruning the header prunes the group; deleting all children un-splits. */
  wmt_update(wm, "n2", "{\"status\":\"pruned\"}");
  cr_assert_not(ks_wm_on_frontier(ks_wm_find(wm, "n5")));
  wmt_update(wm, "n2", "{\"status\":\"open\"}");
  cr_assert_eq(ks_wm_delete(wm, "n5", &err), KS_OK, "%s", err.msg);
  cr_assert(n2->split);
  cr_assert_eq(ks_wm_delete(wm, "n6", &err), KS_OK, "%s", err.msg);
  cr_assert_not(n2->split);
  cr_assert(ks_wm_on_frontier(n2));
  ks_wm_free(wm);
}

Test(world_model, record_attempt_keeps_best_solution) {
  ks_wm *wm = wmt_small();
  ks_err err = {0};
  cr_assert_eq(ks_wm_record_attempt(wm, "n3", 21, -1, &err), KS_OK);
  cr_assert_eq(ks_wm_record_attempt(wm, "n3", 22, 0.0, &err), KS_OK);
  const ks_wm_node *n = ks_wm_find(wm, "n3");
  cr_assert_eq(n->attempts, 2);
  cr_assert_eq(n->n_evidence, 2);
  cr_assert_eq(n->solution.candidate_id, 0, "failed attempts set nothing");
  cr_assert_eq(ks_wm_record_attempt(wm, "n3", 23, 1.8, &err), KS_OK);
  cr_assert_eq(ks_wm_record_attempt(wm, "n3", 24, 1.7, &err), KS_OK);
  cr_assert_eq(n->solution.candidate_id, 23);
  cr_assert_eq(n->evidence[3], 24);
  cr_assert_eq(n->attempts, 4);
  cr_assert_eq(n->status, KS_WM_OPEN, "status is the planner's call");
  cr_assert_eq(ks_wm_record_attempt(wm, "n1", 30, 2.5, &err), KS_OK);
  cr_assert_eq(ks_wm_best_solved(wm), ks_wm_find(wm, "n1"));
  cr_assert_float_eq(ks_wm_best_solved(wm)->solution.score, 2.5, 1e-12);
  cr_assert_eq(ks_wm_record_attempt(wm, "root", 31, 1, &err), KS_ERR_INPUT);
  cr_assert_eq(ks_wm_record_attempt(wm, "n99", 31, 1, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "no node 'n99'"), "%s", err.msg);
  ks_wm_free(wm);
}

/* ---------------------------------------------------------------- scripts */

Test(world_model, valid_script_applies) {
  ks_wm *wm = wmt_small();
  const ks_wm_node *n3 = ks_wm_find(wm, "n3");
  const char *script =
      "["
      "{\"op\":\"insert\",\"id\":\"tile\",\"parent\":\"n3\","
      " \"decision\":\"tiling\",\"choice\":\"64 columns\","
      " \"action\":{\"title\":\"Tile by 64\",\"difficulty\":2,"
      "  \"priority\":0.75,\"expected_speedup\":1.3,\"rationale\":\"L1\"},"
      " \"concepts\":[\"tiling\"],\"params\":{\"TILE\":64}},"
      "{\"op\":\"insert\",\"parent\":\"tile\",\"decision\":\"unroll\","
      " \"choice\":\"4\"},"
      "{\"op\":\"update\",\"id\":\"n3\",\"status\":\"running\","
      " \"notes\":\"in progress\"},"
      "{\"op\":\"split\",\"id\":\"n2\",\"children\":["
      "  {\"decision\":\"pass\",\"choice\":\"first\"},"
      "  {\"id\":\"second\",\"decision\":\"pass\",\"choice\":\"second\"}]},"
      "{\"op\":\"delete\",\"id\":\"second\"}"
      "]";
  json_t *ops = json_loads(script, 0, NULL);
  cr_assert_not_null(ops);
  ks_err err = {0};
  cr_assert_eq(ks_wm_apply_json(wm, ops, &err), KS_OK, "%s", err.msg);
  json_decref(ops);
  cr_assert_eq(ks_wm_count(wm), 5 + 2 + 1);
  const ks_wm_node *t = ks_wm_find(wm, "tile");
  cr_assert_not_null(t);
  cr_assert_str_eq(t->action.title, "Tile by 64");
  cr_assert_float_eq(t->action.expected_speedup, 1.3, 1e-12);
  cr_assert_str_eq(t->concepts[0], "tiling");
  const ks_wm_node *u = ks_wm_find(wm, "n5");
  cr_assert_not_null(u, "id-less insert got n5");
  cr_assert_str_eq(u->parent, "tile");
  cr_assert_not_null(ks_wm_find(wm, "n6"), "split child got n6");
  cr_assert_null(ks_wm_find(wm, "second"));
  /* Pointers taken before the script still point at the live node. */
  cr_assert_eq(n3, ks_wm_find(wm, "n3"));
  cr_assert_eq(n3->status, KS_WM_RUNNING);
  cr_assert_str_eq(n3->notes, "in progress");
  ks_wm_free(wm);
}

Test(world_model, invalid_script_applies_nothing) {
  ks_wm *wm = wmt_small();
  /* Valid first two ops, invalid third: nothing may stick. */
  wmt_bad_script(wm,
                 "[{\"op\":\"insert\",\"parent\":\"root\",\"decision\":\"a\","
                 "\"choice\":\"b\"},"
                 "{\"op\":\"update\",\"id\":\"n2\",\"notes\":\"changed\"},"
                 "{\"op\":\"update\",\"id\":\"n2\",\"action\":"
                 "{\"priority\":1.5}},"
                 "{\"op\":\"delete\",\"id\":\"n3\"}]",
                 "ops[2].action.priority: 1.5 is outside 0..1");
  wmt_bad_script(wm,
                 "[{\"op\":\"delete\",\"id\":\"n3\"},"
                 "{\"op\":\"update\",\"id\":\"n3\",\"notes\":\"x\"}]",
                 "ops[1]: no node 'n3'");
  wmt_bad_script(wm, "[{\"op\":\"move\",\"id\":\"n3\"}]",
                 "ops[0].op: 'move' is not an operation");
  wmt_bad_script(wm, "[{\"id\":\"n3\"}]", "ops[0].op: missing");
  wmt_bad_script(wm, "[{\"op\":\"delete\",\"id\":\"n3\",\"why\":1}]",
                 "ops[0].why: unknown field");
  wmt_bad_script(wm, "[{\"op\":\"update\"}]", "ops[0].id: missing");
  wmt_bad_script(wm, "[{\"op\":\"insert\",\"parent\":\"root\"}]",
                 "ops[0].decision: missing");
  wmt_bad_script(wm,
                 "[{\"op\":\"insert\",\"parent\":\"root\",\"decision\":\"a\","
                 "\"choice\":\"b\",\"status\":\"solved\"}]",
                 "ops[0].status: a new node starts open");
  wmt_bad_script(wm,
                 "[{\"op\":\"insert\",\"parent\":\"root\",\"decision\":\"a\","
                 "\"choice\":\"b\",\"attempts\":3}]",
                 "ops[0].attempts: cannot be set here");
  wmt_bad_script(wm,
                 "[{\"op\":\"split\",\"id\":\"n3\",\"children\":["
                 "{\"decision\":\"a\",\"choice\":\"b\"},"
                 "{\"decision\":\"a\",\"choice\":\"c\",\"action\":"
                 "{\"difficulty\":9}}]}]",
                 "ops[0].children[1].action.difficulty");
  wmt_bad_script(wm, "{\"op\":\"delete\"}", "expected an array");
  ks_wm_free(wm);
}

/* ---------------------------------------------------------------- JSON */

static ks_wm *wmt_rich(void) {
  ks_wm *wm = wmt_small();
  wmt_update(wm, "n3",
             "{\"action\":{\"title\":\"AVX2 rows\",\"description\":"
             "\"8 floats per lane, \\\"quoted\\\"\\nsecond line\","
             "\"rationale\":\"bandwidth bound \\u00e9\\u4e2d\","
             "\"expected_speedup\":1.2345678901234567,\"priority\":0.1},"
             "\"concepts\":[\"simd\",\"row_reduction\"],"
             "\"params\":{\"VEC\":8,\"KIND\":\"fma\",\"ALPHA\":0.25},"
             "\"attempts\":3,\"evidence\":[101,102,9007199254740993],"
             "\"notes\":\"long notes\"}");
  ks_err err = {0};
  cr_assert_eq(ks_wm_record_attempt(wm, "n3", 103, 1.0 / 3.0, &err), KS_OK);
  ks_wm_node_spec k[2];
  ks_wm_spec_init(&k[0]);
  ks_wm_spec_init(&k[1]);
  k[0].decision = k[1].decision = "part";
  k[0].choice = "a";
  k[1].choice = "b";
  cr_assert_eq(ks_wm_split(wm, "n2", k, 2, NULL, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_wm_delete(wm, "n6", &err), KS_OK, "%s", err.msg);
  return wm;
}

Test(world_model, json_round_trip_preserves_everything) {
  ks_wm *wm = wmt_rich();
  json_t *a = ks_wm_to_json(wm);
  ks_wm *back = NULL;
  ks_err err = {0};
  cr_assert_eq(ks_wm_from_json(a, &back, &err), KS_OK, "%s", err.msg);
  json_t *b = ks_wm_to_json(back);
  cr_assert(json_equal(a, b));
  char *sa = wmt_dump(wm), *sb = wmt_dump(back);
  cr_assert_str_eq(sa, sb);
  const ks_wm_node *n3 = ks_wm_find(back, "n3");
  cr_assert_eq(n3->evidence[2], 9007199254740993LL);
  cr_assert_eq(n3->solution.score, 1.0 / 3.0, "exact double round trip");
  cr_assert(ks_wm_find(back, "n2")->split);
  cr_assert_eq(ks_wm_find(back, "n5")->up, ks_wm_find(back, "n2"));
  /* next_id survives: the deleted n6 is not reused after a reload. */
  char fresh[KS_WM_ID_MAX];
  ks_wm_new_id(back, fresh);
  cr_assert_str_eq(fresh, "n7");
  free(sa);
  free(sb);
  json_decref(a);
  json_decref(b);
  ks_wm_free(wm);
  ks_wm_free(back);
}

#define WMT_ROOT                                                               \
  "{\"id\":\"root\",\"parent\":null,\"decision\":\"task\",\"choice\":\"t\","   \
  "\"status\":\"solved\"}"
#define WMT_DOC(nodes) "{\"version\":1,\"nodes\":[" WMT_ROOT nodes "]}"
#define WMT_N(id, parent, extra)                                               \
  ",{\"id\":\"" id "\",\"parent\":\"" parent "\",\"decision\":\"d\","          \
  "\"choice\":\"c\",\"status\":\"open\"" extra "}"

Test(world_model, from_json_accepts_minimal_nodes) {
  json_t *j =
      json_loads(WMT_DOC(WMT_N("a", "root", "") WMT_N("b", "a", "")), 0, NULL);
  ks_wm *wm = NULL;
  ks_err err = {0};
  cr_assert_eq(ks_wm_from_json(j, &wm, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_wm_count(wm), 3);
  cr_assert_eq(ks_wm_find(wm, "b")->action.difficulty, 3, "default");
  /* Parents may come after their children in the file. */
  json_t *j2 =
      json_loads("{\"version\":1,\"nodes\":["
                 "{\"id\":\"b\",\"parent\":\"a\",\"decision\":\"d\","
                 "\"choice\":\"c\",\"status\":\"open\"}," WMT_ROOT WMT_N(
                     "a", "root", "") "]}",
                 0, NULL);
  ks_wm *wm2 = NULL;
  cr_assert_eq(ks_wm_from_json(j2, &wm2, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_wm_find(wm2, "b")->depth, 2);
  json_decref(j);
  json_decref(j2);
  ks_wm_free(wm);
  ks_wm_free(wm2);
}

Test(world_model, from_json_rejects_with_json_paths) {
  wmt_bad_doc("[]", "expected an object");
  wmt_bad_doc("{\"nodes\":[" WMT_ROOT "]}", "version: missing");
  wmt_bad_doc("{\"version\":2,\"nodes\":[" WMT_ROOT "]}", "version: 2");
  wmt_bad_doc("{\"version\":1,\"nodes\":[]}", "nodes: expected a non-empty");
  wmt_bad_doc("{\"version\":1,\"nodes\":[" WMT_ROOT "],\"x\":1}",
              "x: unknown field");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", ",\"action\":{\"priority\":1.5}")),
              "nodes[1].action.priority: 1.5 is outside 0..1");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", "") WMT_N("b", "root", "")
                          WMT_N("c", "a", ",\"action\":{\"difficulty\":0}")),
              "nodes[3].action.difficulty");
  wmt_bad_doc(
      WMT_DOC(WMT_N("a", "root", ",\"action\":{\"difficulty\":\"hard\"}")),
      "nodes[1].action.difficulty: expected an integer");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", "") WMT_N("a", "root", "")),
              "nodes[2].id: 'a' is already used by nodes[1]");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "zz", "")), "nodes[1].parent: no node 'zz'");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "b", "") WMT_N("b", "a", "")), "loops");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "a", "")), "nodes[1].parent");
  wmt_bad_doc("{\"version\":1,\"nodes\":[" WMT_ROOT
              ",{\"id\":\"x\",\"parent\":null,\"decision\":\"d\","
              "\"choice\":\"c\",\"status\":\"open\"}]}",
              "nodes[1].parent");
  wmt_bad_doc("{\"version\":1,\"nodes\":[{\"id\":\"a\",\"parent\":\"b\","
              "\"decision\":\"d\",\"choice\":\"c\",\"status\":\"open\"}" WMT_N(
                  "b", "a", "") "]}",
              "found 0 roots");
  wmt_bad_doc("{\"version\":1,\"nodes\":[{\"id\":\"root\",\"parent\":null,"
              "\"decision\":\"task\",\"choice\":\"t\"}]}",
              "nodes[0]: missing field 'status'");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", ",\"colour\":1")),
              "nodes[1].colour: unknown field");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", ",\"split\":true")), "nodes[1].split");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", ",\"params\":{\"x\":[1]}")),
              "nodes[1].params.x");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root", ",\"evidence\":[5,-2]")),
              "nodes[1].evidence[1]");
  wmt_bad_doc(WMT_DOC(",{\"id\":\"a\",\"parent\":\"root\",\"decision\":\"d\","
                      "\"choice\":\"c\",\"status\":\"solved\"}"),
              "nodes[1].status");
  wmt_bad_doc(WMT_DOC(",{\"id\":\"a\",\"parent\":\"root\",\"decision\":\"d\","
                      "\"choice\":\"c\",\"status\":\"fine\"}"),
              "nodes[1].status: 'fine' is not a status");
  wmt_bad_doc(WMT_DOC(WMT_N("a", "root",
                            ",\"solution\":{\"candidate_id\":1,\"score\":-1}")),
              "nodes[1].solution.score");
}

Test(world_model, save_then_load_is_equal_and_atomic) {
  char dir[] = "/tmp/ks_wm_test_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/world_model.json", dir);
  ks_wm *wm = wmt_rich();
  ks_err err = {0};
  cr_assert_eq(ks_wm_save(wm, path, &err), KS_OK, "%s", err.msg);
  wmt_add(wm, "later", "root", "x", "y", 0.5, 1);
  cr_assert_eq(ks_wm_save(wm, path, &err), KS_OK, "overwrite: %s", err.msg);
  ks_wm *back = NULL;
  cr_assert_eq(ks_wm_load(path, &back, &err), KS_OK, "%s", err.msg);
  json_t *a = ks_wm_to_json(wm), *b = ks_wm_to_json(back);
  cr_assert(json_equal(a, b));
  json_decref(a);
  json_decref(b);
  ks_wm_free(back);
  /* No temporary file left behind. */
  DIR *d = opendir(dir);
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      files++;
      cr_assert_str_eq(e->d_name, "world_model.json");
    }
  closedir(d);
  cr_assert_eq(files, 1);
  /* Broken files are reported with their path and position. */
  FILE *f = fopen(path, "w");
  fputs("{\"version\": 1,\n \"nodes\": [", f);
  fclose(f);
  cr_assert_eq(ks_wm_load(path, &back, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, path) && strstr(err.msg, ":2:"), "%s", err.msg);
  f = fopen(path, "w");
  fputs("{\"version\": 1, \"nodes\": [{\"id\": \"root\"}]}", f);
  fclose(f);
  cr_assert_eq(ks_wm_load(path, &back, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, path) && strstr(err.msg, "nodes[0]"), "%s",
            err.msg);
  unlink(path);
  cr_assert_eq(ks_wm_load(path, &back, &err), KS_ERR_IO);
  char bad[300];
  snprintf(bad, sizeof bad, "%s/missing/world_model.json", dir);
  cr_assert_eq(ks_wm_save(wm, bad, &err), KS_ERR_IO);
  cr_assert(strstr(err.msg, bad), "%s", err.msg);
  rmdir(dir);
  ks_wm_free(wm);
}

/* ---------------------------------------------------------------- selection */

static bool wmt_in(const ks_wm_node **v, int n, const char *id) {
  for (int i = 0; i < n; i++)
    if (strcmp(v[i]->id, id) == 0)
      return true;
  return false;
}

Test(world_model, frontier_is_open_nodes_under_solved_or_root) {
  ks_wm *wm = wmt_small();
  wmt_add(wm, "n5", "n2", "x", "under open", 0.9, 1);
  wmt_add(wm, "n6", "n4", "x", "under failed", 0.9, 1);
  wmt_add(wm, "n7", "n3", "x", "under open", 0.9, 1);
  wmt_add(wm, "n8", "root", "x", "pruned", 0.9, 1);
  wmt_update(wm, "n8", "{\"status\":\"pruned\"}");
  const ks_wm_node *f[16];
  int k = ks_wm_frontier(wm, f, 16);
  cr_assert_eq(k, 2);
  cr_assert(wmt_in(f, k, "n2"), "child of the root");
  cr_assert(wmt_in(f, k, "n3"), "child of solved n1");
  cr_assert_eq(ks_wm_frontier(wm, f, 1), 2, "returns the full count");
  cr_assert_not(ks_wm_on_frontier(ks_wm_root(wm)));
  ks_wm_free(wm);
}

Test(world_model, selection_by_priority_then_difficulty) {
  ks_wm *wm = ks_wm_new("t");
  wmt_add(wm, "a", "root", "d", "a", 0.5, 1);
  wmt_add(wm, "b", "root", "d", "b", 0.9, 5);
  wmt_add(wm, "c", "root", "d", "c", 0.9, 2);
  wmt_add(wm, "e", "root", "d", "e", 0.2, 1);
  const ks_wm_node *r[4];
  for (uint64_t seed = 0; seed < 8; seed++) {
    cr_assert_eq(ks_wm_rank(wm, 0, seed, r, 4), 4);
    cr_assert_str_eq(r[0]->id, "c", "same priority: lower difficulty");
    cr_assert_str_eq(r[1]->id, "b");
    cr_assert_str_eq(r[2]->id, "a");
    cr_assert_str_eq(r[3]->id, "e");
  }
  cr_assert_str_eq(ks_wm_select(wm, 0, 1)->id, "c");
  ks_wm_free(wm);
}

static void wmt_pick_sequence(uint64_t seed, char out[6][KS_WM_ID_MAX]) {
  ks_wm *wm = ks_wm_new("t");
  for (int i = 0; i < 8; i++) {
    char id[16];
    snprintf(id, sizeof id, "t%d", i);
    wmt_add(wm, id, "root", "d", id, 0.5, 2);
  }
  for (int i = 0; i < 6; i++) {
    const ks_wm_node *n = ks_wm_select(wm, 0.5, seed + (uint64_t)i);
    cr_assert_not_null(n);
    snprintf(out[i], KS_WM_ID_MAX, "%s", n->id);
    ks_err err = {0};
    cr_assert_eq(ks_wm_record_attempt(wm, n->id, 100 + i, -1, &err), KS_OK);
    cr_assert_eq(ks_wm_set_status(wm, n->id, KS_WM_FAILED, &err), KS_OK);
  }
  ks_wm_free(wm);
}

Test(world_model, same_seed_same_picks_different_seeds_differ) {
  char a[6][KS_WM_ID_MAX], b[6][KS_WM_ID_MAX];
  wmt_pick_sequence(42, a);
  wmt_pick_sequence(42, b);
  for (int i = 0; i < 6; i++)
    cr_assert_str_eq(a[i], b[i]);
  /* Ties among 8 equal nodes: seeds must not all pick the same one. */
  ks_wm *wm = ks_wm_new("t");
  for (int i = 0; i < 8; i++) {
    char id[16];
    snprintf(id, sizeof id, "t%d", i);
    wmt_add(wm, id, "root", "d", id, 0.5, 2);
  }
  int seen[8] = {0}, distinct = 0;
  for (uint64_t seed = 0; seed < 32; seed++) {
    const ks_wm_node *n = ks_wm_select(wm, 0, seed);
    int k = n->id[1] - '0';
    distinct += !seen[k];
    seen[k] = 1;
  }
  cr_assert_geq(distinct, 3, "seeds broke ties only %d ways", distinct);
  ks_wm_free(wm);
}

Test(world_model, exploration_bonus_changes_picks) {
  ks_wm *wm = ks_wm_new("t");
  wmt_add(wm, "hot", "root", "d", "hot", 0.8, 2);
  wmt_add(wm, "cold", "root", "d", "cold", 0.6, 2);
  ks_err err = {0};
  for (int i = 0; i < 3; i++)
    cr_assert_eq(ks_wm_record_attempt(wm, "hot", 10 + i, -1, &err), KS_OK);
  cr_assert_str_eq(ks_wm_select(wm, 0, 1)->id, "hot");
  cr_assert_str_eq(ks_wm_select(wm, 1.0, 1)->id, "cold");
  cr_assert_str_eq(ks_wm_select(wm, -5, 1)->id, "hot", "negative = 0");
  ks_wm_free(wm);
}

/* ---------------------------------------------------------------- renders */

Test(world_model, compact_render_shows_the_active_path) {
  ks_wm *wm = wmt_small();
  wmt_add(wm, "n5", "n3", "unroll", "by four", 0.5, 1);
  char *s = ks_wm_render_compact(wm, "n5", 3);
  cr_assert_not_null(s);
  cr_assert(strstr(s, "root [solved] task: rmsnorm"), "%s", s);
  cr_assert(strstr(s, "n1 [solved 1.500 #11] algorithm: two-pass"), "%s", s);
  cr_assert(strstr(s, "n3 [open] vectorization: AVX2"), "%s", s);
  cr_assert(strstr(s, "> n5 [open] unroll: by four"), "%s", s);
  cr_assert(strstr(s, "also: n2 [open]"), "sibling of n1: %s", s);
  cr_assert(strstr(s, "also: n4 [failed]"), "sibling of n3: %s", s);
  cr_assert(strstr(s, "best n1 score 1.500"), "%s", s);
  free(s);
  s = ks_wm_render_compact(wm, "n3", 0);
  cr_assert(strstr(s, "also: 1 other sibling (1 failed)"), "%s", s);
  cr_assert_null(strstr(s, "n5"), "below the active node: %s", s);
  free(s);
  s = ks_wm_render_compact(wm, NULL, 2); /* defaults to the best plan */
  cr_assert(strstr(s, "> n1"), "%s", s);
  free(s);
  ks_wm_free(wm);
}

Test(world_model, compact_render_is_bounded) {
  ks_wm *wm = ks_wm_new("big");
  char longtxt[190];
  memset(longtxt, 'x', sizeof longtxt - 1);
  longtxt[sizeof longtxt - 1] = '\0';
  memcpy(longtxt + 58, "\xc3\xa9", 2); /* a 2-byte char near the cut */
  char parent[KS_WM_ID_MAX] = "root", active[KS_WM_ID_MAX] = "";
  for (int d = 0; d < 40; d++) {
    for (int s = 0; s < 30; s++) {
      char id[KS_WM_ID_MAX];
      snprintf(id, sizeof id, "d%02ds%02d", d, s);
      wmt_add(wm, id, parent, longtxt, longtxt, s / 30.0, 1 + s % 5);
      if (s == 0)
        snprintf(active, sizeof active, "%s", id);
    }
    if (d < 39) {
      char buf[128];
      snprintf(buf, sizeof buf,
               "{\"status\":\"solved\",\"solution\":{\"candidate_id\":%d,"
               "\"score\":1.5}}",
               d + 1);
      wmt_update(wm, active, buf);
    }
    snprintf(parent, sizeof parent, "%s", active);
  }
  char *s = ks_wm_render_compact(wm, active, 10);
  cr_assert_lt(strlen(s), KS_WM_COMPACT_MAX);
  cr_assert(strstr(s, "root [solved]"), "%s", s);
  cr_assert(strstr(s, "> d39s00"), "%s", s);
  cr_assert(strstr(s, "levels not shown"), "%s", s);
  cr_assert(strstr(s, "also:"), "some siblings survive");
  json_t *utf8 = json_string(s); /* NULL if a cut split a character */
  cr_assert_not_null(utf8);
  json_decref(utf8);
  free(s);
  char *t = ks_wm_render_tree(wm);
  cr_assert(strstr(t, "d39s29"));
  free(t);
  ks_wm_free(wm);
}

Test(world_model, tree_render_lists_every_node_indented) {
  ks_wm *wm = wmt_small();
  char *s = ks_wm_render_tree(wm);
  cr_assert(strstr(s, "\nroot [solved] task: rmsnorm\n"), "%s", s);
  cr_assert(strstr(s, "\n  n1 [solved 1.500 #11] algorithm: two-pass"), "%s",
            s);
  cr_assert(strstr(s, "\n    n3 [open] vectorization: AVX2"), "%s", s);
  cr_assert(strstr(s, "\n    n4 [failed]"), "%s", s);
  cr_assert(strstr(s, "\n  n2 [open]"), "%s", s);
  cr_assert(strstr(s, "n3") < strstr(s, "n2 [open]"), "depth first: %s", s);
  free(s);
  ks_wm_free(wm);
}
