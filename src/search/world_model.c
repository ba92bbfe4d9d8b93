/* world_model.c — the world model's storage and queries (DESIGN.md "World
 * model"): nodes, the tree that owns them, lookups, plans, ids and attempts.
 * Field parsing and range checks live in world_model_fields.c, edits in
 * world_model_ops.c, selection in world_model_select.c, JSON in
 * world_model_json.c, text views in world_model_render.c. */
#include "search/world_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- memory */

void *ks_wmi_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    abort();
  return p;
}

void *ks_wmi_xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p)
    abort();
  return p;
}

char *ks_wmi_xstrdup(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = ks_wmi_xmalloc(n);
  memcpy(d, s ? s : "", n);
  return d;
}

void ks_wmi_set_str(char **dst, const char *s) {
  char *d = ks_wmi_xstrdup(s);
  free(*dst);
  *dst = d;
}

/* ---------------------------------------------------------------- status */

static const char *const status_names[KS_WM_NSTATUS] = {
    "open", "running", "solved", "failed", "too_hard", "pruned"};

const char *ks_wm_status_name(ks_wm_status s) {
  return (unsigned)s < KS_WM_NSTATUS ? status_names[s] : "?";
}

bool ks_wm_status_parse(const char *name, ks_wm_status *out) {
  for (int i = 0; name && i < KS_WM_NSTATUS; i++)
    if (strcmp(name, status_names[i]) == 0) {
      *out = (ks_wm_status)i;
      return true;
    }
  return false;
}

bool ks_wm_status_allowed(ks_wm_status from, ks_wm_status to) {
  if (from == to)
    return true;
  switch (from) {
  case KS_WM_OPEN: return to != KS_WM_OPEN;
  case KS_WM_RUNNING: return to != KS_WM_RUNNING;
  case KS_WM_FAILED:
  case KS_WM_TOO_HARD: return to == KS_WM_OPEN || to == KS_WM_PRUNED;
  case KS_WM_PRUNED: return to == KS_WM_OPEN;
  case KS_WM_SOLVED:
  default: return false;
  }
}

/* ---------------------------------------------------------------- nodes */

void ks_wm_spec_init(ks_wm_node_spec *spec) {
  memset(spec, 0, sizeof *spec);
  spec->difficulty = 3;
  spec->priority = 0.5;
  spec->expected_speedup = 1.0;
}

ks_wm_node *ks_wmi_node_new(void) {
  ks_wm_node *n = ks_wmi_xmalloc(sizeof *n);
  memset(n, 0, sizeof *n);
  n->decision = ks_wmi_xstrdup("");
  n->choice = ks_wmi_xstrdup("");
  n->status = KS_WM_OPEN;
  n->action.title = ks_wmi_xstrdup("");
  n->action.description = ks_wmi_xstrdup("");
  n->action.rationale = ks_wmi_xstrdup("");
  n->action.difficulty = 3;
  n->action.priority = 0.5;
  n->action.expected_speedup = 1.0;
  n->params = json_object();
  if (!n->params)
    abort();
  n->notes = ks_wmi_xstrdup("");
  return n;
}

void ks_wmi_node_free(ks_wm_node *n) {
  if (!n)
    return;
  free(n->decision);
  free(n->choice);
  free(n->action.title);
  free(n->action.description);
  free(n->action.rationale);
  for (int i = 0; i < n->n_concepts; i++)
    free(n->concepts[i]);
  free(n->concepts);
  json_decref(n->params);
  free(n->evidence);
  free(n->notes);
  free(n);
}

ks_wm_node *ks_wmi_node_clone(const ks_wm_node *s) {
  ks_wm_node *n = ks_wmi_xmalloc(sizeof *n);
  *n = *s;
  n->decision = ks_wmi_xstrdup(s->decision);
  n->choice = ks_wmi_xstrdup(s->choice);
  n->action.title = ks_wmi_xstrdup(s->action.title);
  n->action.description = ks_wmi_xstrdup(s->action.description);
  n->action.rationale = ks_wmi_xstrdup(s->action.rationale);
  n->concepts = ks_wmi_xmalloc(sizeof(char *) * (size_t)s->n_concepts);
  for (int i = 0; i < s->n_concepts; i++)
    n->concepts[i] = ks_wmi_xstrdup(s->concepts[i]);
  n->params = json_deep_copy(s->params);
  if (!n->params)
    abort();
  n->evidence = ks_wmi_xmalloc(sizeof(int64_t) * (size_t)s->n_evidence);
  if (s->n_evidence)
    memcpy(n->evidence, s->evidence, sizeof(int64_t) * (size_t)s->n_evidence);
  n->notes = ks_wmi_xstrdup(s->notes);
  n->up = NULL;
  n->n_children = 0;
  n->depth = 0;
  n->pos = 0;
  return n;
}

/* ---------------------------------------------------------------- tree */

ks_wm *ks_wmi_alloc(void) {
  ks_wm *wm = ks_wmi_xmalloc(sizeof *wm);
  memset(wm, 0, sizeof *wm);
  wm->next_id = 1;
  wm->index = json_object();
  if (!wm->index)
    abort();
  return wm;
}

ks_wm *ks_wm_new(const char *root_title) {
  ks_wm *wm = ks_wmi_alloc();
  ks_wm_node *r = ks_wmi_node_new();
  const char *title = root_title && *root_title ? root_title : "task";
  snprintf(r->id, sizeof r->id, "%s", KS_WM_ROOT_ID);
  ks_wmi_set_str(&r->decision, "task");
  ks_wmi_set_str(&r->choice, title);
  ks_wmi_set_str(&r->action.title, title);
  r->status = KS_WM_SOLVED;
  r->action.expected_speedup = 1.0;
  ks_wmi_append(wm, r);
  return wm;
}

void ks_wm_set_root_notes(ks_wm *wm, const char *notes) {
  /* the analysis belongs to the task, not to a plan, so it lives on the
   * root; this is the one root field a planner may write */
  ks_wmi_set_str(&((ks_wm_node *)ks_wm_root(wm))->notes, notes ? notes : "");
}

void ks_wm_free(ks_wm *wm) {
  if (!wm)
    return;
  for (int i = 0; i < wm->n; i++)
    ks_wmi_node_free(wm->nodes[i]);
  free(wm->nodes);
  json_decref(wm->index);
  free(wm);
}

ks_wm *ks_wm_clone(const ks_wm *src) {
  ks_wm *wm = ks_wmi_alloc();
  for (int i = 0; i < src->n; i++)
    ks_wmi_append(wm, ks_wmi_node_clone(src->nodes[i]));
  wm->next_id = src->next_id;
  ks_wmi_relink(wm);
  return wm;
}

void ks_wmi_swap(ks_wm *a, ks_wm *b) {
  ks_wm t = *a;
  *a = *b;
  *b = t;
}

ks_wm_node *ks_wmi_get(const ks_wm *wm, const char *id) {
  if (!wm || !id)
    return NULL;
  json_t *v = json_object_get(wm->index, id);
  return v ? wm->nodes[json_integer_value(v)] : NULL;
}

static void index_set(ks_wm *wm, const char *id, int pos) {
  if (json_object_set_new(wm->index, id, json_integer(pos)) != 0)
    abort();
}

void ks_wmi_append(ks_wm *wm, ks_wm_node *n) {
  if (wm->n == wm->cap) {
    wm->cap = wm->cap ? 2 * wm->cap : 16;
    wm->nodes =
        ks_wmi_xrealloc(wm->nodes, sizeof(ks_wm_node *) * (size_t)wm->cap);
  }
  n->pos = wm->n;
  wm->nodes[wm->n++] = n;
  index_set(wm, n->id, n->pos);
  n->up = n->parent[0] ? ks_wmi_get(wm, n->parent) : NULL;
  n->depth = n->up ? n->up->depth + 1 : 0;
  n->n_children = 0;
  if (n->up)
    n->up->n_children++;
  ks_wmi_note_id(wm, n->id);
}

void ks_wmi_remove_at(ks_wm *wm, int pos) {
  ks_wmi_node_free(wm->nodes[pos]);
  memmove(wm->nodes + pos, wm->nodes + pos + 1,
          sizeof(ks_wm_node *) * (size_t)(wm->n - pos - 1));
  wm->n--;
  ks_wmi_relink(wm);
}

void ks_wmi_relink(ks_wm *wm) {
  json_object_clear(wm->index);
  for (int i = 0; i < wm->n; i++) {
    wm->nodes[i]->pos = i;
    wm->nodes[i]->n_children = 0;
    index_set(wm, wm->nodes[i]->id, i);
  }
  for (int i = 0; i < wm->n; i++) {
    ks_wm_node *n = wm->nodes[i];
    n->up = n->parent[0] ? ks_wmi_get(wm, n->parent) : NULL;
    if (n->up)
      n->up->n_children++;
  }
  /* Depth by walking up; callers guarantee there is no cycle. */
  for (int i = 0; i < wm->n; i++) {
    int d = 0;
    for (const ks_wm_node *p = wm->nodes[i]->up; p && d <= wm->n; p = p->up)
      d++;
    wm->nodes[i]->depth = d;
  }
}

void ks_wmi_note_id(ks_wm *wm, const char *id) {
  if (id[0] != 'n' || id[1] < '0' || id[1] > '9')
    return;
  char *end;
  long k = strtol(id + 1, &end, 10);
  if (*end == '\0' && k >= wm->next_id && k < 1000000000L)
    wm->next_id = k + 1;
}

void ks_wm_new_id(ks_wm *wm, char out[KS_WM_ID_MAX]) {
  char id[KS_WM_ID_MAX];
  do
    snprintf(id, sizeof id, "n%ld", wm->next_id++);
  while (ks_wmi_get(wm, id));
  memcpy(out, id, sizeof id);
}

/* ---------------------------------------------------------------- queries */

int ks_wm_count(const ks_wm *wm) { return wm ? wm->n : 0; }

const ks_wm_node *ks_wm_root(const ks_wm *wm) {
  return ks_wmi_get(wm, KS_WM_ROOT_ID);
}

const ks_wm_node *ks_wm_node_at(const ks_wm *wm, int i) {
  return wm && i >= 0 && i < wm->n ? wm->nodes[i] : NULL;
}

const ks_wm_node *ks_wm_find(const ks_wm *wm, const char *id) {
  return ks_wmi_get(wm, id);
}

int ks_wm_children(const ks_wm *wm, const char *id, const ks_wm_node **out,
                   int max) {
  const ks_wm_node *p = ks_wmi_get(wm, id);
  if (!p)
    return -1;
  int k = 0;
  for (int i = 0; i < wm->n; i++)
    if (wm->nodes[i]->up == p) {
      if (k < max)
        out[k] = wm->nodes[i];
      k++;
    }
  return k;
}

const ks_wm_node *ks_wm_best_solved(const ks_wm *wm) {
  const ks_wm_node *best = NULL;
  for (int i = 0; wm && i < wm->n; i++) {
    const ks_wm_node *n = wm->nodes[i];
    if (n->status == KS_WM_SOLVED && n->solution.candidate_id > 0 &&
        (!best || n->solution.score > best->solution.score))
      best = n;
  }
  return best;
}

int ks_wm_plan(const ks_wm *wm, const char *id, char out[][KS_WM_PLAN_STEP],
               int max) {
  const ks_wm_node *n = ks_wmi_get(wm, id);
  if (!n)
    return -1;
  int steps = 0;
  for (const ks_wm_node *p = n; p && p->up; p = p->up)
    steps += !p->split;
  int k = steps;
  for (const ks_wm_node *p = n; p && p->up; p = p->up) {
    if (p->split)
      continue;
    k--;
    if (k < max)
      snprintf(out[k], KS_WM_PLAN_STEP, "%s: %s", p->decision, p->choice);
  }
  return steps;
}

ks_code ks_wm_record_attempt(ks_wm *wm, const char *id, int64_t candidate_id,
                             double score, ks_err *err) {
  ks_wm_node *n = ks_wmi_get(wm, id);
  if (!n)
    return ks_err_set(err, KS_ERR_INPUT,
                      "record attempt: no node '%s' in the world model; "
                      "use the id of an existing node",
                      id ? id : "(null)");
  if (!n->up)
    return ks_err_set(err, KS_ERR_INPUT,
                      "record attempt: the root is the baseline and has no "
                      "attempts; record attempts on a plan node");
  if (n->split)
    return ks_err_set(err, KS_ERR_INPUT,
                      "record attempt: %s is a split group header and is never "
                      "implemented; record the attempt on one of its children",
                      id);
  if (candidate_id < 0 || isnan(score))
    return ks_err_set(err, KS_ERR_INPUT,
                      "record attempt on %s: candidate id %lld and score %g "
                      "must be a candidate id >= 0 and a number",
                      id, (long long)candidate_id, score);
  n->attempts++;
  if (candidate_id > 0) {
    n->evidence = ks_wmi_xrealloc(n->evidence, sizeof(int64_t) *
                                                   (size_t)(n->n_evidence + 1));
    n->evidence[n->n_evidence++] = candidate_id;
    if (isfinite(score) && score > 0 &&
        (n->solution.candidate_id == 0 || score > n->solution.score)) {
      n->solution.candidate_id = candidate_id;
      n->solution.score = score;
    }
  }
  return KS_OK;
}
