/* search_tie.c — settling a near tie before the coordinate search steps on
 * (DESIGN.md: Built-in planner, Noise; Search loop). A child within the
 * run's noise of its parent is a tie: the planner cannot tell which of the
 * two to step from, and one noisy figure each is what it has. When the tie
 * decides the next step (the better of the two is near the run's best),
 * the planner asks for it to be settled: the two candidates are timed
 * beside each other, both ways round (ks_evaluate_beside: the other runs
 * after every timed repetition, on the same inputs), and the planner gets
 * their paired speed ratio, the geometric mean of the two orders, so that
 * the place in the repetition order favours neither. A settlement costs two
 * evaluations of the budget and at most a fifth of the budget goes to them;
 * each is a store event "retime" (counted again on resume). Local runs
 * only: the workers of a broker run evaluate candidates, not pairs. */
#include "search/search_internal.h"
#include "search/tournament.h"
#include "util/util.h"

#include <math.h>
#include <string.h>

/* budget units one settlement costs: one evaluation per order */
#define TIE_COST 2

int ks_search_tie_cap(const ks_search_opts *o) { return o->budget / 5; }

ks_code ks_search_settle_tie(run_state *s, double t0, bool *did, ks_err *err) {
  *did = false;
  if (!s->ev || !s->pi->pending_tie || !s->pi->settle ||
      s->retimes + TIE_COST > ks_search_tie_cap(s->o) ||
      s->evaluations + s->retimes + TIE_COST > s->o->budget)
    return KS_OK;
  char node[KS_WM_ID_MAX];
  int64_t a = 0, b = 0;
  if (!s->pi->pending_tie(s->pl, s->wm, node, &a, &b))
    return KS_OK;
  ks_candidate ca, cb;
  memset(&ca, 0, sizeof ca);
  memset(&cb, 0, sizeof cb);
  ks_code rc = ks_search_load_candidate(s->store, &s->task, a, &ca, err);
  if (!rc)
    rc = ks_search_load_candidate(s->store, &s->task, b, &cb, err);
  double q[2] = {0, 0};
  for (int k = 0; k < 2 && !rc; k++) {
    ks_eval_result res;
    memset(&res, 0, sizeof res);
    rc = k == 0 ? ks_evaluate_beside(s->ev, &ca, &cb, &res, err)
                : ks_evaluate_beside(s->ev, &cb, &ca, &res, err);
    if (!rc && res.status == KS_EVAL_OK)
      q[k] = res.beside_ratio;
    ks_eval_result_free(&res);
  }
  ks_candidate_free(&ca);
  ks_candidate_free(&cb);
  if (rc)
    return rc;
  s->retimes += TIE_COST;
  *did = true;
  /* a over b: q[0] is a's speed over b's, q[1] b's over a's */
  double ratio = q[0] > 0 && q[1] > 0 ? sqrt(q[0] / q[1]) : 0;
  json_t *ev =
      json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:i}", "node", node,
                "candidate", (json_int_t)a, "other", (json_int_t)b, "forward",
                q[0], "backward", q[1], "ratio", ratio, "cost", TIE_COST);
  char *text = json_dumps(ev, JSON_COMPACT);
  json_decref(ev);
  rc = ks_store_add_event(s->store, "retime", text, err);
  free(text);
  if (!rc)
    rc = s->pi->settle(s->pl, s->wm, node, ratio, err);
  if (!rc)
    rc = ks_search_save_tree(s, err);
  if (!rc && !s->o->quiet)
    fprintf(stderr,
            "[%lld+%lld/%d] tie at %s: candidate %lld beside %lld, paired "
            "%.3fx (%.0fs)\n",
            (long long)s->evaluations, (long long)s->retimes, s->o->budget,
            node, (long long)a, (long long)b, ratio, ks_now() - t0);
  return rc;
}

/* A resumed run counts the settlements it already paid for. */
ks_code ks_search_count_ties(run_state *s, ks_err *err) {
  json_t *arr = NULL;
  ks_code rc = ks_store_list_events(s->store, "retime", &arr, err);
  if (!rc)
    s->retimes = (int64_t)json_array_size(arr) * TIE_COST;
  json_decref(arr);
  return rc;
}
