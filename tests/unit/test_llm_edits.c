/* test_llm_edits.c — what a model may change in the world model
 * (src/llm/edits.c): answer shapes, the required reflection, fields only
 * ksearch writes, init's inserts-only rule; a refused script changes
 * nothing. */
#include "llm/answer.h"
#include "llm/edits.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static ks_wm *tree(void) {
  ks_wm *wm = ks_wm_new("softmax");
  json_t *ops = json_loads(
      "[{\"op\":\"insert\",\"parent\":\"root\",\"id\":\"a\",\"decision\":"
      "\"algorithm\",\"choice\":\"three-pass\"}]",
      0, NULL);
  ks_err err;
  cr_assert_eq(ks_llm_apply_edits(wm, ops, true, &err), KS_OK, "%s", err.msg);
  json_decref(ops);
  return wm;
}

static ks_code apply(ks_wm *wm, const char *text, bool inserts_only,
                     ks_err *err) {
  json_t *ops = json_loads(text, 0, NULL);
  cr_assert_not_null(ops, "bad test JSON");
  ks_code rc = ks_llm_apply_edits(wm, ops, inserts_only, err);
  json_decref(ops);
  return rc;
}

Test(llm_edits, ksearch_owned_fields_are_refused) {
  ks_wm *wm = tree();
  ks_err err;
  cr_assert_eq(apply(wm,
                     "[{\"op\":\"update\",\"id\":\"a\",\"status\":"
                     "\"solved\"}]",
                     false, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "ops[0].status") && strstr(err.msg, "ksearch"),
            "%s", err.msg);
  cr_assert_eq(apply(wm,
                     "[{\"op\":\"update\",\"id\":\"a\",\"action\":{"
                     "\"priority\":0.2}},{\"op\":\"update\",\"id\":\"a\","
                     "\"solution\":{\"candidate_id\":3,\"score\":9}}]",
                     false, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "ops[1].solution"), "%s", err.msg);
  cr_assert_float_eq(ks_wm_find(wm, "a")->action.priority, 0.5, 1e-12,
                     "nothing applied");
  cr_assert_eq(apply(wm,
                     "[{\"op\":\"split\",\"id\":\"a\",\"children\":[{"
                     "\"decision\":\"d\",\"choice\":\"x\"},{\"decision\":"
                     "\"d\",\"choice\":\"y\",\"attempts\":2}]}]",
                     false, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "ops[0].children[1].attempts"), "%s", err.msg);
  ks_wm_free(wm);
}

Test(llm_edits, init_inserts_only_and_world_model_errors_pass_through) {
  ks_wm *wm = tree();
  ks_err err;
  cr_assert_eq(apply(wm, "[{\"op\":\"delete\",\"id\":\"a\"}]", true, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "insert"), "%s", err.msg);
  cr_assert_eq(apply(wm,
                     "[{\"op\":\"insert\",\"parent\":\"nope\","
                     "\"decision\":\"d\",\"choice\":\"c\"}]",
                     false, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "ops[0].parent"), "%s", err.msg);
  cr_assert_eq(apply(wm,
                     "[{\"op\":\"update\",\"id\":\"a\",\"status\":"
                     "\"pruned\"},{\"op\":\"update\",\"id\":\"a\","
                     "\"status\":\"open\",\"notes\":\"back\"}]",
                     false, &err),
               KS_OK, "%s", err.msg);
  cr_assert_str_eq(ks_wm_find(wm, "a")->notes, "back");
  ks_wm_free(wm);
}

Test(llm_edits, answer_shapes_and_required_reflection) {
  json_t *j = json_loads("{\"reflection\":\"  \",\"ops\":[]}", 0, NULL);
  ks_llm_edit_answer a;
  ks_err err;
  cr_assert_eq(ks_llm_edit_answer_read(j, true, &a, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "reflection"), "%s", err.msg);
  cr_assert_eq(ks_llm_edit_answer_read(j, false, &a, &err), KS_OK);
  ks_llm_edit_answer_free(&a);
  json_decref(j);
  j = json_loads("{\"analysis\":{\"bottlenecks\":\"memory\"},\"ops\":[{}]}", 0,
                 NULL);
  cr_assert_eq(ks_llm_edit_answer_read(j, false, &a, &err), KS_OK);
  cr_assert_str_eq(a.analysis, "bottlenecks: memory\n");
  cr_assert_eq(json_array_size(a.ops), 1);
  ks_llm_edit_answer_free(&a);
  json_decref(j);
  j = json_loads("[{\"op\":\"delete\",\"id\":\"a\"}]", 0, NULL);
  cr_assert_eq(ks_llm_edit_answer_read(j, false, &a, &err), KS_OK);
  cr_assert_eq(a.ops, j);
  ks_llm_edit_answer_free(&a);
  json_decref(j);
  j = json_loads("{\"op\":\"delete\",\"id\":\"a\"}", 0, NULL);
  cr_assert_eq(ks_llm_edit_answer_read(j, false, &a, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "\"ops\" array"), "%s", err.msg);
  json_decref(j);
}

Test(llm_edits, too_many_operations) {
  json_t *ops = json_array();
  for (int i = 0; i <= KS_LLM_MAX_OPS; i++)
    json_array_append_new(ops,
                          json_pack("{s:s, s:s}", "op", "delete", "id", "a"));
  json_t *j = json_pack("{s:s, s:o}", "reflection", "r", "ops", ops);
  ks_llm_edit_answer a;
  ks_err err;
  cr_assert_eq(ks_llm_edit_answer_read(j, true, &a, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "at most"), "%s", err.msg);
  json_decref(j);
}
