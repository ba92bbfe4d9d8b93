/* tournament.h — choosing the best under noise (DESIGN.md: Search loop,
 * Final tournament). When a run ends, its leading candidates are timed
 * again together in interleaved rounds (each round evaluates every finalist
 * once, in an order shuffled per round), so that drift of the machine's load
 * hits them all alike; after two rounds the better half goes on, halving
 * again each round until two are left (successive halving); the winner is
 * the best median of the scores over the
 * evaluator's fixed bases (ks_eval_fixed_score: within a round the anchor
 * adds only noise), and its margin over the runner-up comes with a
 * distribution-free interval from the paired per-round ratios. A search
 * that found the best keeps it.
 */
#ifndef KS_TOURNAMENT_H
#define KS_TOURNAMENT_H

#include "eval/eval.h"
#include "store/store.h"

#define KS_TOURNEY_MAX 16
#define KS_TOURNEY_ROUNDS_MAX 32

typedef struct ks_tourney_opts {
  int finalists; /* default 8; <= 1 means no tournament */
  int rounds;    /* default 5 */
  uint64_t seed; /* order of each round */
  bool quiet;
} ks_tourney_opts;

typedef struct ks_tourney_result {
  int n; /* finalists that took part */
  int rounds;
  int64_t cand[KS_TOURNEY_MAX]; /* candidate ids, ranked after */
  double score[KS_TOURNEY_MAX][KS_TOURNEY_ROUNDS_MAX]; /* over the anchor */
  double fixed[KS_TOURNEY_MAX][KS_TOURNEY_ROUNDS_MAX]; /* over fixed bases */
  int n_rounds[KS_TOURNEY_MAX];        /* rounds it took part in */
  double median[KS_TOURNEY_MAX];       /* of fixed: what ranks */
  double score_median[KS_TOURNEY_MAX]; /* of score: what is reported */
  double search_score[KS_TOURNEY_MAX]; /* what the search had recorded */
  int winner, runner_up;               /* indices, -1 none */
  double margin, ci_lo, ci_hi; /* winner / runner-up, median and range */
  double confidence;           /* of [ci_lo, ci_hi] for the median */
  bool told_apart;             /* the interval excludes 1 */
} ks_tourney_result;

/* Runs the tournament over the store's top candidates. KS_OK with r->n = 0
 * when fewer than two correct candidates exist (nothing to decide). */
ks_code ks_tournament(ks_evaluator *ev, ks_store *store, const ks_task *task,
                      const ks_tourney_opts *o, ks_tourney_result *r,
                      ks_err *err);
/* {finalists: [{candidate_id, search_score, scores, median}], winner,
 * runner_up, margin, interval: [lo, hi], confidence, told_apart, note}. */
json_t *ks_tourney_to_json(const ks_tourney_result *r);

#endif
