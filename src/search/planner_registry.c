/* planner_registry.c — the planners `ksearch run --planner` knows. One line
 * per planner. */
#include "search/planner.h"

#include <string.h>

extern const ks_planner_i ks_planner_llm; /* planner_llm.c */
static const ks_planner_i *const k_planners[] = {
    &ks_planner_builtin,
    &ks_planner_random,
    &ks_planner_llm,
};

const ks_planner_i *ks_planner_find(const char *name) {
  for (size_t i = 0; i < sizeof k_planners / sizeof *k_planners; i++)
    if (!strcmp(k_planners[i]->name, name))
      return k_planners[i];
  return NULL;
}

void ks_proposal_free(ks_proposal *pr) { ks_candidate_free(&pr->cand); }
