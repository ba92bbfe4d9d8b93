/* fuzz_world_model.c — world_model.json loading (ks_wm_from_json,
 * src/search/world_model_json.c): a damaged or hostile file is refused with
 * the JSON path of the fault, or gives a tree that serializes, renders,
 * ranks and plans without a crash, and reloads from its own JSON. */
#include "fuzz.h"
#include "search/world_model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *doc = json_loadb((const char *)data, size, 0, NULL);
  if (!doc)
    return 0;
  ks_wm *wm = NULL;
  ks_err err = {0};
  if (ks_wm_from_json(doc, &wm, &err) == KS_OK) {
    json_t *again = ks_wm_to_json(wm);
    ks_wm *wm2 = NULL;
    if (ks_wm_from_json(again, &wm2, &err) != KS_OK)
      abort(); /* what ksearch writes it must read back */
    ks_wm_free(wm2);
    json_decref(again);
    free(ks_wm_render_tree(wm));
    free(ks_wm_render_compact(wm, NULL, 3));
    const ks_wm_node *sel = ks_wm_select(wm, 0.25, 7);
    char steps[32][KS_WM_PLAN_STEP];
    for (int i = 0; i < ks_wm_count(wm); i++) {
      const ks_wm_node *n = ks_wm_node_at(wm, i);
      (void)ks_wm_plan(wm, n->id, steps, 32);
      free(ks_wm_render_compact(wm, n->id, 2));
    }
    (void)sel;
    (void)ks_wm_best_solved(wm);
    ks_wm_free(wm);
  }
  json_decref(doc);
  return 0;
}
