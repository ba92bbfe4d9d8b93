/* tournament.c — see tournament.h. The interval: with R rounds, the range
 * [min, max] of the R paired ratios winner/runner-up covers their median
 * with probability 1 - 2^(1-R) (every ratio falls on one side of the median
 * with probability 1/2 each): 0.94 at R = 5, 0.998 at R = 10. */
#include "search/tournament.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n) {
  double tmp[KS_TOURNEY_ROUNDS_MAX];
  memcpy(tmp, v, sizeof(double) * (size_t)n);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_d);
  return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

static ks_code load_candidate(ks_store *st, const ks_task *task, int64_t id,
                              ks_candidate *c, ks_err *err) {
  ks_store_candidate sc;
  memset(&sc, 0, sizeof sc);
  ks_code rc = ks_store_get_candidate(st, id, &sc, err);
  if (!rc)
    rc =
        ks_candidate_parse(sc.source, "(stored candidate)", task->name, c, err);
  json_t *params =
      !rc && sc.params_json ? json_loads(sc.params_json, 0, NULL) : NULL;
  const char *k;
  json_t *v;
  json_object_foreach(params, k, v) {
    if (!rc && json_is_string(v))
      rc = ks_candidate_set_param(c, k, json_string_value(v), err);
  }
  json_decref(params);
  if (!rc)
    ks_candidate_fill_defaults(c);
  ks_store_candidate_free(&sc);
  return rc;
}

ks_code ks_tournament(ks_evaluator *ev, ks_store *store, const ks_task *task,
                      const ks_tourney_opts *o, ks_tourney_result *r,
                      ks_err *err) {
  memset(r, 0, sizeof *r);
  r->winner = r->runner_up = -1;
  int want = o->finalists > KS_TOURNEY_MAX ? KS_TOURNEY_MAX : o->finalists;
  int rounds = o->rounds < 1 ? 5 : o->rounds;
  if (rounds > KS_TOURNEY_ROUNDS_MAX)
    rounds = KS_TOURNEY_ROUNDS_MAX;
  if (want < 2)
    return KS_OK;
  ks_store_eval *top = NULL;
  size_t n = 0;
  ks_code rc = ks_store_top(store, (size_t)want, &top, &n, err);
  if (rc || n < 2) {
    free(top);
    return rc;
  }
  ks_candidate cands[KS_TOURNEY_MAX];
  int have = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    rc = load_candidate(store, task, top[i].candidate_id, &cands[have], err);
    if (!rc) {
      r->cand[have] = top[i].candidate_id;
      r->search_score[have] = top[i].score;
      have++;
    }
  }
  free(top);
  r->n = have;
  r->rounds = rounds;
  /* successive halving: every finalist gets two rounds, then the better
   * half (by the median of its fixed-base scores so far) goes on, until two
   * are left; those two get every round. The net is wide (a leader whose
   * one search measurement was unlucky still enters) and the rounds go
   * where the decision is: 8 finalists and 5 rounds cost 8+8+4+2+2 = 24
   * evaluations, about what 5 finalists x 5 rounds cost */
  int alive[KS_TOURNEY_MAX], n_alive = have;
  for (int i = 0; i < have; i++)
    alive[i] = i;
  ks_rng rng;
  ks_rng_seed(&rng, o->seed, 0x70a4);
  for (int round = 0; !rc && round < rounds; round++) {
    int order[KS_TOURNEY_MAX];
    memcpy(order, alive, sizeof(int) * (size_t)n_alive);
    for (int i = n_alive - 1; i > 0; i--) {
      int j = (int)(ks_rng_u64(&rng) % (uint64_t)(i + 1));
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int k = 0; !rc && k < n_alive; k++) {
      int f = order[k];
      ks_eval_result res;
      rc = ks_evaluate(ev, &cands[f], &res, err);
      bool ok = !rc && res.status == KS_EVAL_OK;
      r->score[f][round] = ok ? res.score : 0;
      r->fixed[f][round] = ok ? ks_eval_fixed_score(ev, &res) : 0;
      r->n_rounds[f] = round + 1;
      ks_eval_result_free(&res);
    }
    if (!o->quiet && !rc)
      ks_log(KS_LOG_INFO, "tournament: round %d of %d done (%d finalists)",
             round + 1, rounds, n_alive);
    if (round >= 1 && n_alive > 2) {
      /* rank the living by their median so far; the better half goes on */
      for (int i = 1; i < n_alive; i++)
        for (int j = i; j > 0; j--) {
          double a = median_of(r->fixed[alive[j]], round + 1);
          double b = median_of(r->fixed[alive[j - 1]], round + 1);
          if (a <= b)
            break;
          int t = alive[j];
          alive[j] = alive[j - 1];
          alive[j - 1] = t;
        }
      n_alive = (n_alive + 1) / 2 < 2 ? 2 : (n_alive + 1) / 2;
    }
  }
  for (int i = 0; i < have; i++)
    ks_candidate_free(&cands[i]);
  if (rc)
    return rc;
  /* the ranking and the paired ratios use the fixed-base scores: within a
   * round the finalists are timed seconds apart, and the anchor beside each
   * (the reference, timed again every time) would only add its own noise */
  for (int i = 0; i < have; i++) {
    r->median[i] = median_of(r->fixed[i], r->n_rounds[i]);
    r->score_median[i] = median_of(r->score[i], r->n_rounds[i]);
  }
  /* the winner and the runner-up are the two that went every round */
  for (int k = 0; k < n_alive; k++) {
    int i = alive[k];
    if (r->winner < 0 || r->median[i] > r->median[r->winner]) {
      r->runner_up = r->winner;
      r->winner = i;
    } else if (r->runner_up < 0 || r->median[i] > r->median[r->runner_up]) {
      r->runner_up = i;
    }
  }
  double ratio[KS_TOURNEY_ROUNDS_MAX];
  int nr = 0;
  for (int k = 0; k < rounds; k++)
    if (r->fixed[r->runner_up][k] > 0 && r->fixed[r->winner][k] > 0)
      ratio[nr++] = r->fixed[r->winner][k] / r->fixed[r->runner_up][k];
  if (nr > 0) {
    r->margin = median_of(ratio, nr);
    qsort(ratio, (size_t)nr, sizeof *ratio, cmp_d);
    r->ci_lo = ratio[0];
    r->ci_hi = ratio[nr - 1];
    r->confidence = 1 - pow(2, 1 - nr);
    r->told_apart = r->ci_lo > 1;
  }
  return KS_OK;
}

json_t *ks_tourney_to_json(const ks_tourney_result *r) {
  json_t *fin = json_array();
  for (int i = 0; i < r->n; i++) {
    json_t *s = json_array(), *f = json_array();
    for (int k = 0; k < r->n_rounds[i]; k++) {
      json_array_append_new(s, json_real(r->score[i][k]));
      json_array_append_new(f, json_real(r->fixed[i][k]));
    }
    json_array_append_new(
        fin, json_pack("{s:I, s:f, s:o, s:f, s:o, s:f}", "candidate_id",
                       (json_int_t)r->cand[i], "search_score",
                       isfinite(r->search_score[i]) ? r->search_score[i] : 0,
                       "scores", s, "median", r->score_median[i],
                       "fixed_scores", f, "fixed_median", r->median[i]));
  }
  char note[256];
  if (r->winner < 0 || r->runner_up < 0)
    snprintf(note, sizeof note, "fewer than two correct candidates");
  else if (r->told_apart)
    snprintf(note, sizeof note,
             "candidate %lld beats candidate %lld by %.3fx (%.3f to %.3f in "
             "%d rounds, %.0f%% interval)",
             (long long)r->cand[r->winner], (long long)r->cand[r->runner_up],
             r->margin, r->ci_lo, r->ci_hi, r->rounds, r->confidence * 100);
  else
    snprintf(note, sizeof note,
             "candidates %lld and %lld cannot be told apart (%.3fx, %.3f to "
             "%.3f in %d rounds, %.0f%% interval): the winner is the better "
             "median, not a proven faster kernel",
             (long long)r->cand[r->winner], (long long)r->cand[r->runner_up],
             r->margin, r->ci_lo, r->ci_hi, r->rounds, r->confidence * 100);
  return json_pack(
      "{s:o, s:o, s:o, s:f, s:[f,f], s:f, s:b, s:s, s:i}", "finalists", fin,
      "winner", r->winner >= 0 ? json_integer(r->cand[r->winner]) : json_null(),
      "runner_up",
      r->runner_up >= 0 ? json_integer(r->cand[r->runner_up]) : json_null(),
      "margin", r->margin, "interval", r->ci_lo, r->ci_hi, "confidence",
      r->confidence, "told_apart", r->told_apart, "note", note, "rounds",
      r->rounds);
}
