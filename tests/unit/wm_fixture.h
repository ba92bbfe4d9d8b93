/* wm_fixture.h — helpers the world-model tests share (test_world_model.c,
 * test_world_model_json.c, test_world_model_select.c): building a tree node
 * by node and asserting each edit succeeds. */
#ifndef KS_TEST_WM_FIXTURE_H
#define KS_TEST_WM_FIXTURE_H

#include "search/world_model.h"

/* The tree as compact JSON (malloc'd), to compare before and after. */
char *wmt_dump(const ks_wm *wm);
/* Inserts a node; asserts success. */
void wmt_add(ks_wm *wm, const char *id, const char *parent,
             const char *decision, const char *choice, double priority,
             int difficulty);
/* Applies an update given as a JSON object; asserts success. */
void wmt_update(ks_wm *wm, const char *id, const char *fields_json);
/* Marks a node solved by candidate cand with score. */
void wmt_solve(ks_wm *wm, const char *id, long long cand, double score);
/* root ─ n1 (solved) ─ n3 (open)
 *      └ n2 (open)   └ n4 (failed) */
ks_wm *wmt_small(void);

#endif
