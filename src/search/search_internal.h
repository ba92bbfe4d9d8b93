/* search_internal.h — the state of one run, shared by the local loop
 * (search.c) and the loop that evaluates through a broker (search_dist.c).
 * Not for use outside src/search/. */
#ifndef KS_SEARCH_INTERNAL_H
#define KS_SEARCH_INTERNAL_H

#include "search/planner.h"
#include "search/search.h"
#include "store/store.h"

#include <limits.h>

struct ks_search_dist; /* search_dist.c */

typedef struct run_state {
  const ks_search_opts *o;
  char dir[PATH_MAX];
  ks_task task;
  ks_template_set tpls;
  ks_class_spec spec;
  ks_analysis an;
  ks_store *store;
  ks_evaluator *ev; /* NULL when the workers evaluate */
  ks_wm *wm;
  const ks_planner_i *pi;
  void *pl;
  json_t *score_of; /* candidate id -> score, for duplicates */
  int64_t evaluations, correct, since_best;
  int64_t retimes; /* budget units spent settling ties (search_tie.c) */
  double best_score;
  int64_t best_cand;
  bool tty;
  struct ks_search_dist *dist; /* NULL for a local run */
} run_state;

bool ks_search_interrupted(void);
ks_code ks_search_save_tree(run_state *s, ks_err *err);
void ks_search_remember_score(run_state *s, int64_t cand, double score);
void ks_search_note_result(run_state *s, int64_t cand, double score,
                           bool correct);
void ks_search_progress(run_state *s, const char *node, const char *plan,
                        const ks_eval_result *r, double t0);
/* A finished evaluation: build + result + measurements committed in the
 * store, then the planner observes it, the tree is saved and the progress
 * line printed. result_json NULL: the eval --json of res. */
ks_code ks_search_record(run_state *s, const char *node_id, int64_t cand_id,
                         int64_t eval_id, const ks_eval_result *res,
                         const json_t *result_json, double t0, ks_err *err);

/* ---- search_tie.c: a near tie timed both ways round before the next step.
 * *did: a settlement was made (it cost budget). Nothing pending, no local
 * evaluator, or the tie share of the budget spent: *did stays false. */
ks_code ks_search_settle_tie(run_state *s, double t0, bool *did, ks_err *err);
ks_code ks_search_count_ties(run_state *s, ks_err *err);
/* budget units a run may spend on ties: a fifth of --budget */
int ks_search_tie_cap(const ks_search_opts *o);

/* ---- search_dist.c: `--broker URL --parallel N` */
/* Connects to the broker, finds the target among the live workers, and
 * fills *roof with that target's roofline (for the analysis). */
ks_code ks_search_dist_open(run_state *s, ks_roofline *roof, ks_err *err);
/* The rounds of a run whose evaluations go to workers; *stopped is the
 * stop reason. */
ks_code ks_search_dist_loop(run_state *s, double t0, const char **stopped,
                            ks_err *err);
void ks_search_dist_close(run_state *s);

#endif
