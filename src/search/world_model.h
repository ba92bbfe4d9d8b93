/* world_model.h — the search tree of DESIGN.md "World model".
 *
 * K-Search's world model is a decision tree: each node makes one decision
 * ("algorithm") with one choice ("two-pass online"), and every root-to-node
 * path is an optimization plan. Planners (built-in rules or an LLM) grow and
 * prune the tree through four edit operations (insert, update, split,
 * delete), each validated before it applies; an edit script (JSON array of
 * operations) applies all-or-nothing. The search loop picks the next plan with
 * ks_wm_select and reports results with ks_wm_record_attempt. The tree is
 * saved as world_model.json ({"version":1,"next_id":k,"nodes":[...]}).
 *
 * Files: world_model.c (tree, nodes, queries), world_model_fields.c (node
 * field parsing and range checks), world_model_ops.c (edits),
 * world_model_select.c (frontier, selection), world_model_json.c (JSON, save,
 * load), world_model_render.c (text views for prompts and `ksearch show`).
 *
 * Choices not fixed by DESIGN.md:
 * - The root has id "root", decision "task", choice = the root title, status
 *   "solved" and no solution; it is the empty plan (the baseline) and cannot
 *   be edited, split, deleted or attempted.
 * - Status transitions (same status is always allowed):
 *     open     -> running, solved, failed, too_hard, pruned
 *     running  -> open, solved, failed, too_hard, pruned
 *     failed   -> open, pruned      (a plan may be retried)
 *     too_hard -> open, pruned      (reopen, then split)
 *     pruned   -> open              (revive)
 *     solved   -> (final)           (solved nodes keep their solution)
 *   A node becomes solved only with a solution (candidate_id > 0). A solved
 *   node's solution may change only to a strictly higher score.
 * - split: an open leaf whose plan is too big becomes the parent of n >= 2
 *   smaller children and gets the flag `split` (status stays open). A split
 *   node is a group header: it is never selected itself, it is transparent to
 *   the frontier (its children are eligible when its own parent is) and it is
 *   left out of plans. Its status may only become pruned (and back to open),
 *   which prunes the group. Deleting its last child clears the flag.
 * - Frontier: open, non-split nodes whose parent is the root or solved (or a
 *   live split node whose parent is, recursively).
 * - Selection key: priority + w * sqrt(ln(1 + A(parent)) / (1 + A(node))),
 *   A(x) = attempts summed over x's subtree (UCT); higher key first, then
 *   lower difficulty, then a hash of (seed, id).
 * - update merges: listed fields change, `action` merges key by key, `params`
 *   follows JSON merge patch (a null value removes the parameter); concepts
 *   and evidence are replaced whole. id, parent and split cannot be updated.
 */
#ifndef KS_WORLD_MODEL_H
#define KS_WORLD_MODEL_H

#include "ksearch.h"

#include <jansson.h>

#define KS_WM_ID_MAX 64        /* ids: 1..63 of [A-Za-z0-9_.:-] */
#define KS_WM_ROOT_ID "root"   /* reserved for the root */
#define KS_WM_VERSION 1        /* world_model.json "version" */
#define KS_WM_PLAN_STEP 256    /* one "decision: choice" plan step */
#define KS_WM_COMPACT_MAX 8192 /* ks_wm_render_compact never exceeds this */

typedef enum ks_wm_status {
  KS_WM_OPEN,
  KS_WM_RUNNING,
  KS_WM_SOLVED,
  KS_WM_FAILED,
  KS_WM_TOO_HARD,
  KS_WM_PRUNED,
  KS_WM_NSTATUS
} ks_wm_status;

const char *ks_wm_status_name(ks_wm_status s); /* "open", "too_hard", ... */
bool ks_wm_status_parse(const char *name, ks_wm_status *out);
/* Whether `from -> to` is an allowed transition (see the table above). */
bool ks_wm_status_allowed(ks_wm_status from, ks_wm_status to);

typedef struct ks_wm_action {
  char *title, *description, *rationale; /* never NULL; "" when unset */
  int difficulty;                        /* 1 (easy) .. 5 (hard) */
  double priority;                       /* 0 .. 1 */
  double expected_speedup;               /* >= 0; the planner's guess */
} ks_wm_action;

typedef struct ks_wm_solution {
  int64_t candidate_id; /* 0 = none */
  double score;         /* >= 0 */
} ks_wm_solution;

/* A node. Callers read nodes through const pointers and change them only
 * through the edit operations, so every invariant is checked in one place. */
typedef struct ks_wm_node {
  char id[KS_WM_ID_MAX];
  char parent[KS_WM_ID_MAX]; /* "" for the root */
  char *decision, *choice;   /* never NULL */
  ks_wm_status status;
  bool split; /* a split group header (see above) */
  ks_wm_action action;
  char **concepts; /* catalogue ids */
  int n_concepts;
  json_t *params; /* object: name -> string | number; never NULL */
  ks_wm_solution solution;
  int attempts;
  int64_t *evidence; /* candidate ids, in the order they were recorded */
  int n_evidence;
  char *notes; /* never NULL */
  /* Links maintained by the tree (read-only). */
  struct ks_wm_node *up; /* parent node; NULL for the root */
  int n_children;
  int depth; /* root 0 */
  int pos;   /* index in storage order (ks_wm_node_at) */
} ks_wm_node;

/* What a planner supplies for a new node (insert and split). */
typedef struct ks_wm_node_spec {
  const char *id;                      /* NULL or "" -> a fresh "n<k>" */
  const char *parent;                  /* insert: required; split: ignored */
  const char *decision, *choice;       /* required, non-empty */
  const char *title;                   /* NULL or "" -> the choice */
  const char *description, *rationale; /* NULL -> "" */
  int difficulty;                      /* 1..5 */
  double priority;                     /* 0..1 */
  double expected_speedup;             /* >= 0 */
  const char *const *concepts;
  int n_concepts;
  const json_t *params; /* object or NULL; copied */
  const char *notes;    /* NULL -> "" */
} ks_wm_node_spec;

/* Zeroes a spec and sets difficulty 3, priority 0.5, expected_speedup 1. */
void ks_wm_spec_init(ks_wm_node_spec *spec);

typedef struct ks_wm ks_wm; /* the tree; owns its nodes */

/* ---- lifecycle and queries (world_model.c) */
ks_wm *ks_wm_new(const char *root_title); /* NULL/"" title -> "task" */
void ks_wm_free(ks_wm *wm);
/* The root's notes hold the task's analysis (the only editable root field). */
void ks_wm_set_root_notes(ks_wm *wm, const char *notes);
ks_wm *ks_wm_clone(const ks_wm *wm); /* deep copy */
int ks_wm_count(const ks_wm *wm);    /* nodes, root included */
const ks_wm_node *ks_wm_root(const ks_wm *wm);
const ks_wm_node *ks_wm_node_at(const ks_wm *wm, int i); /* storage order */
const ks_wm_node *ks_wm_find(const ks_wm *wm, const char *id);
/* Children of `id` in storage order; returns how many there are (may exceed
 * max; only max are written), -1 for an unknown id. */
int ks_wm_children(const ks_wm *wm, const char *id, const ks_wm_node **out,
                   int max);
/* Solved node with the highest solution score (ties: earlier node); NULL if
 * no node has a solution. */
const ks_wm_node *ks_wm_best_solved(const ks_wm *wm);
/* Reserves and writes a fresh id "n<k>"; ids are never reused, even after a
 * delete (the store keeps rows that name them). */
void ks_wm_new_id(ks_wm *wm, char out[KS_WM_ID_MAX]);
/* The plan of `id`: "decision: choice" for each node from the root's child
 * down to `id` (root and split headers left out). Returns the number of steps
 * (may exceed max; only max are written), -1 for an unknown id. */
int ks_wm_plan(const ks_wm *wm, const char *id, char out[][KS_WM_PLAN_STEP],
               int max);
/* One implementation attempt of `id`: attempts += 1, candidate_id (> 0)
 * appended to evidence, and when score > 0 beats the node's solution (or it
 * has none) the solution becomes {candidate_id, score}. score <= 0 means the
 * candidate failed (0 = wrong output). Status is left to the planner. */
ks_code ks_wm_record_attempt(ks_wm *wm, const char *id, int64_t candidate_id,
                             double score, ks_err *err);

/* ---- edit operations (world_model_ops.c); on error nothing changes */
/* New open node under spec->parent; its id goes to id_out (may be NULL). */
ks_code ks_wm_insert(ks_wm *wm, const ks_wm_node_spec *spec,
                     char id_out[KS_WM_ID_MAX], ks_err *err);
/* Changes the fields listed in `fields` (an object using world_model.json
 * node keys: decision, choice, status, action, concepts, params, solution,
 * attempts, evidence, notes). */
ks_code ks_wm_update(ks_wm *wm, const char *id, const json_t *fields,
                     ks_err *err);
/* Typed shorthand for an update of the status alone. */
ks_code ks_wm_set_status(ks_wm *wm, const char *id, ks_wm_status status,
                         ks_err *err);
/* Replaces the plan of the open leaf `id` by n >= 2 smaller children; ids go
 * to ids_out (may be NULL). */
ks_code ks_wm_split(ks_wm *wm, const char *id, const ks_wm_node_spec *children,
                    int n, char (*ids_out)[KS_WM_ID_MAX], ks_err *err);
/* Removes an open leaf. */
ks_code ks_wm_delete(ks_wm *wm, const char *id, ks_err *err);
/* Applies an edit script, all or nothing:
 *   [{"op":"insert","parent":"n3","decision":"..","choice":"..",
 *     "action":{...},"concepts":[..],"params":{..},"notes":"..","id":"opt"},
 *    {"op":"update","id":"n5","status":"pruned","notes":"..."},
 *    {"op":"split","id":"n7","children":[{insert fields}, ...]},
 *    {"op":"delete","id":"n9"}]
 * Later operations see earlier ones (insert a node, then children under it).
 * Messages name the JSON path, e.g. "ops[2].action.priority: ...". */
ks_code ks_wm_apply_json(ks_wm *wm, const json_t *ops, ks_err *err);

/* ---- selection (world_model_select.c) */
/* Whether a node is on the frontier. */
bool ks_wm_on_frontier(const ks_wm_node *n);
/* Frontier nodes in storage order; returns how many there are (may exceed
 * max; only max are written). */
int ks_wm_frontier(const ks_wm *wm, const ks_wm_node **out, int max);
/* Frontier nodes in pick order for (explore_weight, seed); returns the
 * frontier size (may exceed max). A negative or NaN weight counts as 0. */
int ks_wm_rank(const ks_wm *wm, double explore_weight, uint64_t seed,
               const ks_wm_node **out, int max);
/* The first node of ks_wm_rank; NULL when the frontier is empty. The same
 * tree, weight and seed always give the same node. */
const ks_wm_node *ks_wm_select(const ks_wm *wm, double explore_weight,
                               uint64_t seed);

/* ---- JSON (world_model_json.c) */
json_t *ks_wm_to_json(const ks_wm *wm);          /* new reference */
json_t *ks_wm_node_to_json(const ks_wm_node *n); /* new reference */
/* Validates everything (version, one root "root", unique ids, parents
 * exist, no cycles, types and ranges, status/solution/split consistency). */
ks_code ks_wm_from_json(const json_t *doc, ks_wm **out, ks_err *err);
/* Temp file in the same folder, fsync, rename, fsync folder. */
ks_code ks_wm_save(const ks_wm *wm, const char *path, ks_err *err);
ks_code ks_wm_load(const char *path, ks_wm **out, ks_err *err);

/* ---- text views (world_model_render.c); malloc'd, caller frees */
/* For prompts and logs: a one-line summary, the path root..active (NULL ->
 * the best solved node, else the root) and for each node on it up to
 * max_siblings best siblings plus a one-line count of the others. Never
 * longer than KS_WM_COMPACT_MAX bytes (siblings, then middle levels, are
 * dropped to fit); long texts are cut on UTF-8 boundaries. */
char *ks_wm_render_compact(const ks_wm *wm, const char *active_id,
                           int max_siblings);
/* The whole tree for `ksearch show`: one indented line per node with status,
 * score, priority, difficulty and attempts. */
char *ks_wm_render_tree(const ks_wm *wm);

#endif
