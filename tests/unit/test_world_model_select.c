/* test_world_model_select.c — choosing the next node and showing the tree
 * (src/search/world_model_select.c, world_model_render.c): the frontier,
 * priority then difficulty, same seed same picks, the exploration bonus;
 * renders show the active path, stay bounded and list every node. Helpers:
 * wm_fixture.h. */
#include "search/world_model.h"
#include "wm_fixture.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
