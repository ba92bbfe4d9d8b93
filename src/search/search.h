/* search.h — `ksearch run`: the K-Search loop (DESIGN.md: How the parts
 * meet). Each round the planner picks the most promising open plan in the
 * world model and writes a candidate from its template; the evaluator builds,
 * checks and times it in the sandbox; the store commits the evaluation; the
 * planner updates the tree from the evidence; world_model.json is rewritten
 * atomically. Stops on budget, time, stagnation, an empty frontier or
 * Ctrl-C; `--resume` continues from the store without repeating or losing a
 * finished evaluation. */
#ifndef KS_SEARCH_H
#define KS_SEARCH_H

#include "eval/eval.h"

#include <jansson.h>

typedef struct ks_search_opts {
  const char *task;
  const char *backend;
  const char *planner; /* a name in planner_registry.c; default "builtin" */
  const json_t *planner_options; /* planner-specific, may be NULL */
  const char *out_dir;           /* NULL: runs/<task>-<timestamp> */
  const char *resume_dir;
  int budget;     /* evaluations, counting earlier sessions of the run */
  double time_s;  /* 0: no limit */
  int stagnation; /* stop after this many evaluations without a new best */
  uint64_t seed;
  int max_attempts;  /* implementation attempts per plan before it fails */
  ks_eval_opts eval; /* threads, seeds, timing */
  /* through a broker (DESIGN.md: Workers); NULL: evaluate here */
  const char *broker; /* redis://... */
  const char *target; /* target hash or identity; NULL: the only one live */
  int parallel;       /* jobs in flight at once (>= 1) */
  int max_tries;      /* deliveries of a job before it is given up */
  bool quiet;
  bool report; /* rewrite <run>/report.html after each evaluation */
  const char *command_line; /* recorded for the report; may be NULL */
  int finalists;            /* final tournament (tournament.h); <2: none */
  const char *workloads; /* --workloads selection (task_select.c); NULL: all */
  int tourney_rounds;
  int tourney_tie_rounds; /* tie-break rounds after those (tournament.h) */
} ks_search_opts;

void ks_search_opts_default(ks_search_opts *o);
/* Runs (or resumes) a search; *summary is the summary.json object. */
ks_code ks_search_run(const ks_search_opts *o, json_t **summary, ks_err *err);

#endif
