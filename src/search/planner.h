/* planner.h — the built-in planner (DESIGN.md: World model; planner/coder
 * "builtin"). It grows the world model one decision per level: the first
 * level holds the algorithmic families (one per template); solving a node
 * adds children for the next decision of the class spec (vector width,
 * accumulators, blocking, scheduling...), one per choice of that decision's
 * template parameters. Each node gets several implementation attempts with
 * different values for the parameters its plan has not fixed yet, so a good
 * plan survives one bad parameter choice. Priorities start from the analysis
 * (the bottleneck regime picks the class spec's priority column) and move
 * with evidence: a choice that helped on one branch raises its twins (same
 * decision, same choice) on other branches, one that hurt lowers them.
 *
 * The "random" planner proposes uniformly random templates and parameters;
 * it exists as the baseline of the search-efficiency benchmark. */
#ifndef KS_PLANNER_H
#define KS_PLANNER_H

#include "search/analysis.h"
#include "search/templates.h"
#include "search/world_model.h"

typedef struct ks_planner ks_planner;

typedef struct ks_proposal {
  char node_id[KS_WM_ID_MAX];
  const ks_template *tpl;
  ks_candidate cand; /* owned; params set */
} ks_proposal;

ks_planner *ks_planner_new(const char *kind, const ks_template_set *tpls,
                           const ks_class_spec *spec, const ks_analysis *an,
                           uint64_t seed, int max_attempts);
void ks_planner_free(ks_planner *p);
/* Fills a fresh tree (root notes + one node per template). */
ks_code ks_planner_init_tree(ks_planner *p, ks_wm *wm, ks_err *err);
/* Tells the planner the parameters of a stored candidate (for children that
 * start from their parent's best parameters). */
void ks_planner_remember(ks_planner *p, int64_t cand_id, const char *params);
/* Next candidate. node_id is "" when the frontier is empty. */
ks_code ks_planner_propose(ks_planner *p, ks_wm *wm, int iteration,
                           ks_proposal *out, ks_err *err);
/* Evidence: score 0 for a failed candidate. Updates statuses, expands solved
 * nodes, moves twin priorities. */
ks_code ks_planner_observe(ks_planner *p, ks_wm *wm, const char *node_id,
                           int64_t cand_id, double score, ks_err *err);
void ks_proposal_free(ks_proposal *pr);

#endif
