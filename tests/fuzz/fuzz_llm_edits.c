/* fuzz_llm_edits.c — the edit-script parser and rules of the LLM planner
 * (src/llm/edits.c) over the world model's validation (ks_wm_apply_json):
 * an answer's JSON is read, checked and applied all or nothing to a small
 * tree; whatever it holds, the tree stays valid (it serializes and reloads). */
#include "fuzz.h"
#include "llm/edits.h"

static ks_wm *small_tree(void) {
  ks_wm *wm = ks_wm_new("softmax");
  json_t *ops = json_loads(
      "[{\"op\":\"insert\",\"parent\":\"root\",\"id\":\"n1\",\"decision\":"
      "\"algorithm\",\"choice\":\"three-pass\",\"action\":{\"title\":\"t\","
      "\"description\":\"d\",\"difficulty\":2,\"priority\":0.9,"
      "\"expected_speedup\":2,\"rationale\":\"r\"}},"
      "{\"op\":\"insert\",\"parent\":\"n1\",\"id\":\"n2\",\"decision\":\"vec\","
      "\"choice\":\"8\",\"action\":{\"title\":\"v\",\"description\":\"d\","
      "\"difficulty\":1,\"priority\":0.5,\"expected_speedup\":1.2,"
      "\"rationale\":\"r\"},\"params\":{\"VEC\":\"8\"}}]",
      0, NULL);
  ks_err err = {0};
  if (!ops || ks_wm_apply_json(wm, ops, &err) != KS_OK)
    abort();
  json_decref(ops);
  return wm;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *answer = json_loadb((const char *)data, size, 0, NULL);
  if (!answer)
    return 0;
  for (int inserts_only = 0; inserts_only < 2; inserts_only++) {
    ks_llm_edit_answer a;
    ks_err err = {0};
    if (ks_llm_edit_answer_read(answer, inserts_only == 0, &a, &err) != KS_OK)
      continue;
    ks_wm *wm = small_tree();
    (void)ks_llm_apply_edits(wm, a.ops, inserts_only, &err);
    json_t *doc = ks_wm_to_json(wm);
    ks_wm *back = NULL;
    if (ks_wm_from_json(doc, &back, &err) != KS_OK)
      abort(); /* an applied script must leave a valid tree */
    ks_wm_free(back);
    json_decref(doc);
    ks_wm_free(wm);
    ks_llm_edit_answer_free(&a);
  }
  json_decref(answer);
  return 0;
}
