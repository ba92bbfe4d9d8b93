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

struct ks_eval_result;
struct ks_store;
struct ks_roofline;

/* What every planner is created with. */
typedef struct ks_planner_ctx {
  const ks_task *task;
  const char *backend;
  const ks_template_set *tpls; /* may hold no template (LLM planner) */
  const ks_class_spec *spec;
  const ks_analysis *an;
  const struct ks_roofline *roof; /* may be NULL */
  struct ks_store *store;         /* for planners that record calls */
  const char *run_dir;
  uint64_t seed;
  int max_attempts;
  const json_t *options; /* planner-specific (e.g. LLM flags); may be NULL */
} ks_planner_ctx;

typedef struct ks_proposal {
  char node_id[KS_WM_ID_MAX];
  const ks_template *tpl; /* NULL when the code did not come from one */
  ks_candidate cand;      /* owned; params set */
} ks_proposal;

/* One table of functions per planner, like the backends (DESIGN.md:
 * planner / coder). */
typedef struct ks_planner_i {
  const char *name;
  bool needs_templates;
  ks_code (*create)(const ks_planner_ctx *ctx, void **self, ks_err *err);
  /* Fills a fresh tree; a resumed tree (more than the root) is left alone. */
  ks_code (*init_tree)(void *self, ks_wm *wm, ks_err *err);
  /* The parameters of a stored candidate (children start from their
   * parent's best parameters). */
  void (*remember)(void *self, int64_t cand_id, const char *params);
  /* Next candidate; out->node_id is "" when there is nothing left. */
  ks_code (*propose)(void *self, ks_wm *wm, int iteration, ks_proposal *out,
                     ks_err *err);
  /* Optional: up to k (2..64) candidates from k distinct open plans at
   * once, for a search through a broker (--parallel); a planner whose code
   * comes from a model writes them concurrently. *n: how many are in out
   * (0: nothing left). NULL: the search calls propose once per slot. */
  ks_code (*propose_batch)(void *self, ks_wm *wm, int iteration, int k,
                           ks_proposal *out, int *n, ks_err *err);
  /* Evidence: score 0 for a failed candidate; res is the full result, NULL
   * when replaying a stored evaluation on resume. */
  ks_code (*observe)(void *self, ks_wm *wm, const char *node_id,
                     int64_t cand_id, double score,
                     const struct ks_eval_result *res, ks_err *err);
  /* Optional (noise-aware planners; DESIGN.md: Built-in planner, Noise): a
   * near tie that decides the next step, to be settled before it is taken.
   * True when one is pending: *cand is the tied child's candidate, *other
   * its parent's. The search times the two beside each other, both ways
   * round (ks_evaluate_beside), and calls settle with the paired speed
   * ratio of cand over other (0: it could not be timed; the tie stands).
   * Local runs only: a run through a broker never asks. */
  bool (*pending_tie)(void *self, const ks_wm *wm, char node_id[KS_WM_ID_MAX],
                      int64_t *cand, int64_t *other);
  ks_code (*settle)(void *self, ks_wm *wm, const char *node_id, double ratio,
                    ks_err *err);
  void (*destroy)(void *self);
} ks_planner_i;

/* The registry (planner_registry.c): "builtin", "random", ... */
const ks_planner_i *ks_planner_find(const char *name);
void ks_proposal_free(ks_proposal *pr);

extern const ks_planner_i ks_planner_builtin;
extern const ks_planner_i ks_planner_random;

#endif
