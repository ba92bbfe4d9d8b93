/* tournament.c — see tournament.h. Statistics: a finalist's per-round
 * ratios to the yardstick are paired with the leader's of the same round
 * (q = ratio_f / ratio_leader: the yardstick's own noise cancels in q as
 * well); under "no difference" each q is below 1 with probability 1/2, so
 * a sign test decides without assuming how the noise is distributed (here
 * it is not normal: pre-empted repetitions, bandwidth shared with
 * neighbours). The interval for the median of q is a pair of order
 * statistics, [q_(k), q_(n+1-k)], covering it with probability
 * 1 - 2 P(Bin(n, 1/2) < k). */
#include "search/tournament.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the median of the positive values (0 if none) */
static double median_pos(const double *v, int n) {
  double tmp[KS_TOURNEY_ROUNDS_MAX];
  int m = 0;
  for (int i = 0; i < n; i++)
    if (v[i] > 0)
      tmp[m++] = v[i];
  if (!m)
    return 0;
  qsort(tmp, (size_t)m, sizeof *tmp, cmp_d);
  return m % 2 ? tmp[m / 2] : 0.5 * (tmp[m / 2 - 1] + tmp[m / 2]);
}

/* P(Bin(n, 1/2) <= c) */
static double binom_cdf(int n, int c) {
  double p = 0, term = pow(0.5, n); /* C(n, 0) / 2^n */
  for (int i = 0; i <= c && i <= n; i++) {
    p += term;
    term = term * (n - i) / (i + 1);
  }
  return p;
}

/* the paired ratios of f over g in the rounds both finished */
static int paired(const ks_tourney_result *r, int f, int g, double *q) {
  int n = 0;
  for (int k = 0; k < r->rounds; k++)
    if (k < r->n_rounds[f] && k < r->n_rounds[g] && r->ratio[f][k] > 0 &&
        r->ratio[g][k] > 0)
      q[n++] = r->ratio[f][k] / r->ratio[g][k];
  return n;
}

/* one-sided sign test at `level` (1/16 in the rounds: 4 rounds all slower
 * is the least evidence); or 3 rounds all at least 5% slower (a finalist
 * that far behind in every round is not the one the tournament is about).
 * The test is repeated after every round, so the more rounds, the likelier
 * a chance run of bad rounds: tie-break rounds ask for 1/64. */
static bool clearly_slower(const double *q, int n, double level) {
  int above = 0;
  double hi = 0;
  for (int i = 0; i < n; i++) {
    above += q[i] >= 1;
    hi = q[i] > hi ? q[i] : hi;
  }
  return (n >= 4 && binom_cdf(n, above) <= level) ||
         (n >= 3 && above == 0 && hi < 0.95);
}

/* The narrowest pair of order statistics of the sorted q[0..n) with at
 * least 90% coverage for their median (with fewer than 5 values none
 * reaches it: the range); *conf = its coverage. */
static void median_interval(const double *q, int n, double *lo, double *hi,
                            double *conf) {
  int k = 1;
  while (k + 1 <= (n + 1) / 2 && 1 - 2 * binom_cdf(n, k) >= 0.9)
    k++;
  *lo = q[k - 1];
  *hi = q[n - k];
  *conf = 1 - 2 * binom_cdf(n, k - 1);
}

/* f's paired ratios to g, sorted, with the interval of their median
 * (median_interval); the number of rounds both played. */
static int paired_interval(const ks_tourney_result *r, int f, int g, double *q,
                           double *lo, double *hi, double *conf) {
  int n = paired(r, f, g, q);
  *lo = *hi = *conf = 0;
  if (n > 0) {
    qsort(q, (size_t)n, sizeof *q, cmp_d);
    median_interval(q, n, lo, hi, conf);
  }
  return n;
}

/* Whether f, by its paired ratios to the leader g (the same interval as
 * the winner's margin, at 85% or more), is at most `band` faster than g:
 * then more rounds could change the pick by less than the band. A
 * finalist far slower passes too (the sign test may not have caught it). */
static bool not_faster_by(const ks_tourney_result *r, int f, int g,
                          double band) {
  double q[KS_TOURNEY_ROUNDS_MAX], lo, hi, conf;
  int n = paired_interval(r, f, g, q, &lo, &hi, &conf);
  return n >= 4 && conf >= 0.85 && hi <= band;
}

static bool alive(const ks_tourney_result *r, int f) {
  return !r->failed[f] && !r->out_after[f];
}

/* the alive finalist with the best median ratio so far, -1 none */
static int leader(ks_tourney_result *r) {
  int best = -1;
  for (int f = 0; f < r->n; f++) {
    if (!alive(r, f))
      continue;
    r->median[f] = median_pos(r->ratio[f], r->n_rounds[f]);
    if (best < 0 || r->median[f] > r->median[best])
      best = f;
  }
  return best;
}

ks_code ks_tourney_play(const ks_tourney_opts *o, int n,
                        ks_tourney_measure measure, void *ctx,
                        ks_tourney_result *r, ks_err *err) {
  memset(r, 0, sizeof *r);
  r->winner = r->runner_up = -1;
  n = n > KS_TOURNEY_MAX ? KS_TOURNEY_MAX : n;
  int rounds = o->rounds < 1 ? 6 : o->rounds;
  rounds = rounds > KS_TOURNEY_ROUNDS_MAX ? KS_TOURNEY_ROUNDS_MAX : rounds;
  int extra = o->tie_rounds < 0 ? 0 : o->tie_rounds;
  extra = rounds + extra > KS_TOURNEY_ROUNDS_MAX
              ? KS_TOURNEY_ROUNDS_MAX - rounds
              : extra;
  r->n = n;
  r->yardstick = 0;
  if (n < 2)
    return KS_OK;
  ks_rng rng;
  ks_rng_seed(&rng, o->seed, 0x70a4);
  ks_code rc = KS_OK;
  for (int round = 0; !rc && round < rounds + extra; round++) {
    int order[KS_TOURNEY_MAX], m = 0;
    for (int f = 0; f < n; f++)
      if (alive(r, f))
        order[m++] = f;
    if (m < 2)
      break;
    for (int i = m - 1; i > 0; i--) {
      int j = (int)(ks_rng_u64(&rng) % (uint64_t)(i + 1));
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    r->rounds = round + 1;
    for (int k = 0; !rc && k < m; k++) {
      int f = order[k];
      double ratio = 0, fixed = 0;
      rc = measure(ctx, f, r->yardstick, &ratio, &fixed, err);
      r->ratio[f][round] = ratio > 0 && isfinite(ratio) ? ratio : 0;
      r->fixed[f][round] = fixed;
      r->n_rounds[f] = round + 1;
      /* not correct this time: out (correct without a ratio, the
       * yardstick did not run: that round does not count for it) */
      if (!rc && !(fixed > 0))
        r->failed[f] = true;
    }
    if (rc)
      break;
    if (!o->quiet)
      ks_log(KS_LOG_INFO, "tournament: round %d of at most %d done (%d in)",
             round + 1, round < rounds ? rounds : rounds + extra, m);
    int lead = leader(r);
    if (lead < 0)
      break;
    int still = 0, settled = 0;
    for (int f = 0; f < n; f++) {
      if (f == lead || !alive(r, f))
        continue;
      double q[KS_TOURNEY_ROUNDS_MAX];
      int nq = paired(r, f, lead, q);
      if (clearly_slower(q, nq, round < rounds ? 1.0 / 16 : 1.0 / 64))
        r->out_after[f] = round + 1;
      else {
        still++;
        settled += not_faster_by(r, f, lead, KS_TOURNEY_SAME_BAND);
      }
    }
    if (still == 0)
      break; /* the leader is told apart from every other finalist */
    /* tie-break rounds: none still in can be faster than the leader by
     * more than the band, so more rounds could not change the pick by
     * more than that */
    if (round + 1 >= rounds && settled == still)
      break;
  }
  r->tie_rounds = r->rounds > rounds ? r->rounds - rounds : 0;
  if (rc)
    return rc;
  for (int f = 0; f < n; f++) {
    r->median[f] = median_pos(r->ratio[f], r->n_rounds[f]);
    r->fixed_median[f] = median_pos(r->fixed[f], r->n_rounds[f]);
  }
  r->winner = leader(r);
  if (r->winner < 0)
    return KS_OK;
  for (int f = 0; f < n; f++)
    if (f != r->winner && !r->failed[f] && r->median[f] > 0 &&
        (r->runner_up < 0 || r->median[f] > r->median[r->runner_up]))
      r->runner_up = f;
  if (r->runner_up < 0)
    return KS_OK;
  double q[KS_TOURNEY_ROUNDS_MAX];
  int nq = paired_interval(r, r->winner, r->runner_up, q, &r->ci_lo, &r->ci_hi,
                           &r->confidence);
  if (nq > 0) {
    /* the top two by their medians against the yardstick, decided by
     * their own paired rounds: the direct comparison of the two */
    if (median_pos(q, nq) < 1 && nq == r->n_rounds[r->winner]) {
      int t = r->winner;
      r->winner = r->runner_up;
      r->runner_up = t;
      nq = paired_interval(r, r->winner, r->runner_up, q, &r->ci_lo, &r->ci_hi,
                           &r->confidence);
    }
    r->margin = median_pos(q, nq);
    /* and not on a coin's word: fewer than 4 rounds cover less than 85% */
    r->told_apart = r->ci_lo > 1 && r->confidence >= 0.85;
    /* and from every other finalist still in, not only the runner-up by
     * median: a third one still in may be the faster */
    for (int f = 0; r->told_apart && f < r->n; f++) {
      if (f == r->winner || f == r->runner_up || !alive(r, f))
        continue;
      double qf[KS_TOURNEY_ROUNDS_MAX], lo, hi, conf;
      if (!paired_interval(r, r->winner, f, qf, &lo, &hi, &conf)) {
        r->told_apart = false;
        break;
      }
      r->told_apart = lo > 1 && conf >= 0.85;
    }
  }
  return KS_OK;
}

ks_code ks_search_load_candidate(ks_store *st, const ks_task *task, int64_t id,
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

typedef struct real_ctx {
  ks_evaluator *ev;
  ks_candidate *cands;
} real_ctx;

static ks_code real_measure(void *ctx, int f, int y, double *ratio,
                            double *fixed, ks_err *err) {
  real_ctx *c = ctx;
  ks_eval_result res;
  ks_code rc = ks_evaluate_beside(c->ev, &c->cands[f], &c->cands[y], &res, err);
  bool ok = !rc && res.status == KS_EVAL_OK;
  *ratio = ok ? res.beside_ratio : 0;
  *fixed = ok ? ks_eval_fixed_score(c->ev, &res) : 0;
  ks_eval_result_free(&res);
  return rc;
}

ks_code ks_tournament(ks_evaluator *ev, ks_store *store, const ks_task *task,
                      const ks_tourney_opts *o, ks_tourney_result *r,
                      ks_err *err) {
  memset(r, 0, sizeof *r);
  r->winner = r->runner_up = -1;
  int want = o->finalists > KS_TOURNEY_MAX ? KS_TOURNEY_MAX : o->finalists;
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
  int64_t ids[KS_TOURNEY_MAX];
  double ss[KS_TOURNEY_MAX];
  int have = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    rc = ks_search_load_candidate(store, task, top[i].candidate_id,
                                  &cands[have], err);
    if (!rc) {
      ids[have] = top[i].candidate_id;
      ss[have] = top[i].score;
      have++;
    }
  }
  free(top);
  /* index 0, the yardstick, is the search's best (ks_store_top's order) */
  real_ctx ctx = {ev, cands};
  if (!rc)
    rc = ks_tourney_play(o, have, real_measure, &ctx, r, err);
  for (int i = 0; i < have; i++) {
    ks_candidate_free(&cands[i]);
    r->cand[i] = ids[i];
    r->search_score[i] = ss[i];
  }
  return rc;
}

json_t *ks_tourney_to_json(const ks_tourney_result *r) {
  json_t *fin = json_array();
  for (int i = 0; i < r->n; i++) {
    json_t *q = json_array(), *f = json_array();
    for (int k = 0; k < r->n_rounds[i]; k++) {
      json_array_append_new(q, json_real(r->ratio[i][k]));
      json_array_append_new(f, json_real(r->fixed[i][k]));
    }
    json_array_append_new(
        fin, json_pack("{s:I, s:f, s:o, s:f, s:o, s:f, s:i, s:b}",
                       "candidate_id", (json_int_t)r->cand[i], "search_score",
                       isfinite(r->search_score[i]) ? r->search_score[i] : 0,
                       "ratios", q, "median_ratio", r->median[i], "scores", f,
                       "median", r->fixed_median[i], "eliminated_after",
                       r->out_after[i], "failed", r->failed[i]));
  }
  char note[320], tie[48] = "";
  if (r->tie_rounds > 0)
    snprintf(tie, sizeof tie, ", %d of them tie-break", r->tie_rounds);
  if (r->winner < 0 || r->runner_up < 0)
    snprintf(note, sizeof note, "fewer than two correct candidates");
  else if (r->told_apart)
    snprintf(note, sizeof note,
             "candidate %lld beats candidate %lld by %.3fx (%.3f to %.3f in "
             "%d rounds%s, %.0f%% interval; each timed beside candidate %lld)",
             (long long)r->cand[r->winner], (long long)r->cand[r->runner_up],
             r->margin, r->ci_lo, r->ci_hi, r->rounds, tie, r->confidence * 100,
             (long long)r->cand[r->yardstick]);
  else
    snprintf(note, sizeof note,
             "candidates %lld and %lld cannot be told apart (%.3fx, %.3f to "
             "%.3f in %d rounds%s, %.0f%% interval): the winner is the better "
             "median, not a proven faster kernel",
             (long long)r->cand[r->winner], (long long)r->cand[r->runner_up],
             r->margin, r->ci_lo, r->ci_hi, r->rounds, tie,
             r->confidence * 100);
  return json_pack(
      "{s:o, s:o, s:o, s:o, s:f, s:[f,f], s:f, s:b, s:s, s:i, s:i}",
      "finalists", fin, "yardstick",
      r->n > 0 ? json_integer(r->cand[r->yardstick]) : json_null(), "winner",
      r->winner >= 0 ? json_integer(r->cand[r->winner]) : json_null(),
      "runner_up",
      r->runner_up >= 0 ? json_integer(r->cand[r->runner_up]) : json_null(),
      "margin", r->margin, "interval", r->ci_lo, r->ci_hi, "confidence",
      r->confidence, "told_apart", r->told_apart, "note", note, "rounds",
      r->rounds, "tie_rounds", r->tie_rounds);
}
