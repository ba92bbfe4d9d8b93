/* tournament.h — choosing the best under noise (DESIGN.md: Search loop,
 * Final tournament). When a run ends, its leading candidates are timed
 * again, each beside one yardstick (the search's best, a finalist too):
 * ks_evaluate_beside runs the yardstick after every timed repetition of the
 * finalist, on the same inputs, so each round gives every finalist a ratio
 * to the yardstick measured in the same seconds, and a change of the
 * machine's load between evaluations cancels (a drift that the previous
 * design, finalists timed one after another and compared by their own
 * times, did not cancel: bench/noise_choice.sh picked the true best in 0 of
 * 5 searches). The yardstick is timed beside itself too, so a finalist's
 * place in the repetition order favours none. Rounds go on until the
 * leader is told apart from every other finalist (a sign test on the
 * paired per-round ratios eliminates those clearly slower) or the rounds
 * run out (then tie-break rounds among those still in, until the leader
 * is told apart or none can beat it by KS_TOURNEY_SAME_BAND); the winner is
 * the best median ratio (of the top two, the one that leads in their own
 * paired rounds), and its margin over the runner-up comes with a
 * distribution-free interval. The decision logic
 * (ks_tourney_play) is separate from the evaluations, so that it can be
 * tested on synthetic timings.
 */
#ifndef KS_TOURNAMENT_H
#define KS_TOURNAMENT_H

#include "eval/eval.h"
#include "store/store.h"

#define KS_TOURNEY_MAX 16
#define KS_TOURNEY_ROUNDS_MAX 32
/* tie-break rounds end when no finalist still in can be faster than the
 * leader by more than this (the upper end of the 90% interval of their
 * paired ratios, 85% coverage at least) */
#define KS_TOURNEY_SAME_BAND 1.02

typedef struct ks_tourney_opts {
  int finalists; /* default 8; <= 1 means no tournament */
  int rounds;    /* at most (default 6); fewer when decided earlier */
  /* tie-break rounds after those (default 0 here; runs use 10): played
   * while the leader is neither told apart from every finalist still in
   * nor known to be at most KS_TOURNEY_SAME_BAND slower than each */
  int tie_rounds;
  uint64_t seed; /* order of each round */
  bool quiet;
} ks_tourney_opts;

typedef struct ks_tourney_result {
  int n;                        /* finalists that took part */
  int rounds;                   /* rounds played */
  int tie_rounds;               /* of which tie-break rounds */
  int yardstick;                /* index of the yardstick finalist */
  int64_t cand[KS_TOURNEY_MAX]; /* candidate ids */
  /* per round: the finalist's speed over the yardstick's (beside_ratio),
   * and its fixed-base score (for the record); 0 = not correct */
  double ratio[KS_TOURNEY_MAX][KS_TOURNEY_ROUNDS_MAX];
  double fixed[KS_TOURNEY_MAX][KS_TOURNEY_ROUNDS_MAX];
  int n_rounds[KS_TOURNEY_MAX];  /* rounds it took part in */
  int out_after[KS_TOURNEY_MAX]; /* eliminated after round N; 0 never */
  bool failed[KS_TOURNEY_MAX];   /* not correct in a round: out */
  double median[KS_TOURNEY_MAX]; /* of ratio: what ranks */
  double fixed_median[KS_TOURNEY_MAX];
  double search_score[KS_TOURNEY_MAX]; /* what the search had recorded */
  int winner, runner_up;               /* indices, -1 none */
  double margin, ci_lo, ci_hi; /* winner / runner-up, median and interval */
  double confidence;           /* of [ci_lo, ci_hi] for the median */
  bool told_apart; /* the interval excludes 1, at >= 85% (4+ rounds) */
} ks_tourney_result;

/* One measurement: finalist f beside finalist y (the yardstick); *ratio =
 * f's speed over y's in the same seconds (0: f was not correct), *fixed =
 * f's fixed-base score. */
typedef ks_code (*ks_tourney_measure)(void *ctx, int f, int y, double *ratio,
                                      double *fixed, ks_err *err);

/* The decision, over n finalists (index 0 is the yardstick: the search's
 * best), with `measure` doing the timing. */
ks_code ks_tourney_play(const ks_tourney_opts *o, int n,
                        ks_tourney_measure measure, void *ctx,
                        ks_tourney_result *r, ks_err *err);

/* Runs the tournament over the store's top candidates. KS_OK with r->n = 0
 * when fewer than two correct candidates exist (nothing to decide). */
ks_code ks_tournament(ks_evaluator *ev, ks_store *store, const ks_task *task,
                      const ks_tourney_opts *o, ks_tourney_result *r,
                      ks_err *err);
/* {finalists: [{candidate_id, search_score, ratios, median_ratio, scores,
 * median, eliminated_after}], yardstick, winner, runner_up, margin,
 * interval: [lo, hi], confidence, told_apart, rounds, tie_rounds, note}. */
json_t *ks_tourney_to_json(const ks_tourney_result *r);

/* A stored candidate (source and parameters) ready to evaluate again: the
 * tournament's finalists and a settled tie's two sides. */
ks_code ks_search_load_candidate(ks_store *st, const ks_task *task, int64_t id,
                                 ks_candidate *c, ks_err *err);

#endif
