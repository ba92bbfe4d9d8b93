/* test_world_model.c — the world model's edits (src/search/world_model*):
 * a new tree, inserts, updates, deletes, splits and attempts; a rejected edit
 * names the problem and leaves the tree untouched; scripts are
 * all-or-nothing. JSON and saves: test_world_model_json.c; selection and
 * renders: test_world_model_select.c; helpers: wm_fixture.h. */
#include "search/world_model.h"
#include "wm_fixture.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
