/* test_world_model_json.c — the world model as JSON (src/search/
 * world_model_json.c): round trips keep everything, minimal nodes are
 * accepted, bad files are rejected by JSON path, a save then load is equal
 * and atomic. Helpers: wm_fixture.h. */
#include "search/world_model.h"
#include "wm_fixture.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
