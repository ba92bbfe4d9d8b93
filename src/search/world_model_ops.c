/* world_model_ops.c — the world model's edit operations (DESIGN.md "World
 * model"): insert, update, split, delete, and edit scripts that apply all or
 * nothing. Every operation checks everything first and changes the tree only
 * when the whole operation is valid, so a rejected edit (from the LLM or the
 * built-in planner) leaves the tree exactly as it was and the message says
 * what to fix. Node structs are never moved or copied over, so pointers from
 * ks_wm_find stay valid across edits (except to a deleted node). */
#include "search/world_model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX 16

/* The fresh id the k-th (0-based) id-less new node would get, skipping ids
 * in use and ids taken earlier in the same operation. Reserves nothing. */
static void peek_id(const ks_wm *wm, long *counter, char out[KS_WM_ID_MAX]) {
  do
    snprintf(out, KS_WM_ID_MAX, "n%ld", (*counter)++);
  while (ks_wmi_get(wm, out));
}

/* Checks a new node against the tree; `taken` are ids claimed by earlier
 * children of the same split. Assigns a fresh id when it has none. */
static ks_code insert_check(const ks_wm *wm, ks_wm_node *n, long *counter,
                            char (*taken)[KS_WM_ID_MAX], int n_taken,
                            const char *where, ks_err *err) {
  char path[512];
  if (n->status != KS_WM_OPEN)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: a new node starts open, not %s; leave status out",
                      ks_wmi_path(path, sizeof path, where, "status"),
                      ks_wm_status_name(n->status));
  if (!n->parent[0])
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: missing; give the id of the node to insert under "
                      "(\"root\" for a new first decision)",
                      ks_wmi_path(path, sizeof path, where, "parent"));
  const ks_wm_node *p = ks_wmi_get(wm, n->parent);
  if (!p)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: no node '%s' in the world model (unknown parent); "
                      "use the id of an existing node",
                      ks_wmi_path(path, sizeof path, where, "parent"),
                      n->parent);
  if (p->status == KS_WM_PRUNED)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: '%s' is pruned; insert under a live node, or reopen "
                      "'%s' first (status open)",
                      ks_wmi_path(path, sizeof path, where, "parent"),
                      n->parent, n->parent);
  if (n->id[0]) {
    bool dup = ks_wmi_get(wm, n->id) != NULL;
    for (int i = 0; i < n_taken; i++)
      dup |= strcmp(taken[i], n->id) == 0;
    if (dup)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: a node '%s' already exists (duplicate id); ids "
                        "must be unique, leave id out to get a fresh one",
                        ks_wmi_path(path, sizeof path, where, "id"), n->id);
  } else {
    for (;;) {
      peek_id(wm, counter, n->id);
      bool dup = false;
      for (int i = 0; i < n_taken; i++)
        dup |= strcmp(taken[i], n->id) == 0;
      if (!dup)
        break;
    }
  }
  static const char *const what[] = {"decision", "choice"};
  for (int i = 0; i < 2; i++)
    if (!*(i ? n->choice : n->decision))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: missing or empty; a node needs a decision (what "
                        "is decided, e.g. \"algorithm\") and a choice (e.g. "
                        "\"two-pass online\")",
                        ks_wmi_path(path, sizeof path, where, what[i]));
  if (!*n->action.title)
    ks_wmi_set_str(&n->action.title, n->choice);
  return ks_wmi_node_check(n, false, where, err);
}

static ks_code node_from_spec(const ks_wm_node_spec *s, const char *parent,
                              ks_wm_node **out, const char *where,
                              ks_err *err) {
  *out = NULL;
  if (!s)
    return ks_err_set(err, KS_ERR_INPUT, "%s: no node spec given", where);
  if (s->id && strlen(s->id) >= KS_WM_ID_MAX)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.id: longer than %d characters; use a short id", where,
                      KS_WM_ID_MAX - 1);
  if (parent && strlen(parent) >= KS_WM_ID_MAX)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.parent: no node '%.80s' in the world model", where,
                      parent);
  if (s->params && !json_is_object(s->params))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.params: must be a JSON object of name: value", where);
  for (int i = 0; i < s->n_concepts; i++)
    if (!s->concepts || !s->concepts[i])
      return ks_err_set(err, KS_ERR_INPUT, "%s.concepts[%d]: is NULL", where,
                        i);
  ks_wm_node *n = ks_wmi_node_new();
  snprintf(n->id, sizeof n->id, "%s", s->id ? s->id : "");
  snprintf(n->parent, sizeof n->parent, "%s", parent ? parent : "");
  ks_wmi_set_str(&n->decision, s->decision);
  ks_wmi_set_str(&n->choice, s->choice);
  ks_wmi_set_str(&n->action.title, s->title);
  ks_wmi_set_str(&n->action.description, s->description);
  ks_wmi_set_str(&n->action.rationale, s->rationale);
  n->action.difficulty = s->difficulty;
  n->action.priority = s->priority;
  n->action.expected_speedup = s->expected_speedup;
  n->concepts = ks_wmi_xmalloc(sizeof(char *) * (size_t)s->n_concepts);
  for (int i = 0; i < s->n_concepts; i++)
    n->concepts[i] = ks_wmi_xstrdup(s->concepts[i]);
  n->n_concepts = s->n_concepts;
  if (s->params) {
    json_decref(n->params);
    n->params = json_deep_copy(s->params);
  }
  ks_wmi_set_str(&n->notes, s->notes);
  *out = n;
  return KS_OK;
}

/* ---------------------------------------------------------------- insert */

/* Takes ownership of n. */
static ks_code op_insert(ks_wm *wm, ks_wm_node *n, const char *where,
                         char id_out[KS_WM_ID_MAX], ks_err *err) {
  long counter = wm->next_id;
  ks_code rc = insert_check(wm, n, &counter, NULL, 0, where, err);
  if (rc) {
    ks_wmi_node_free(n);
    return rc;
  }
  if (id_out)
    snprintf(id_out, KS_WM_ID_MAX, "%s", n->id);
  ks_wmi_append(wm, n);
  if (counter > wm->next_id)
    wm->next_id = counter;
  return KS_OK;
}

ks_code ks_wm_insert(ks_wm *wm, const ks_wm_node_spec *spec,
                     char id_out[KS_WM_ID_MAX], ks_err *err) {
  ks_wm_node *n;
  ks_code rc =
      node_from_spec(spec, spec ? spec->parent : NULL, &n, "insert", err);
  return rc ? rc : op_insert(wm, n, "insert", id_out, err);
}

/* ---------------------------------------------------------------- update */

static void allowed_list(ks_wm_status from, char *buf, size_t n) {
  buf[0] = '\0';
  for (int s = 0; s < KS_WM_NSTATUS; s++)
    if (s != (int)from && ks_wm_status_allowed(from, (ks_wm_status)s)) {
      size_t len = strlen(buf);
      snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
               ks_wm_status_name((ks_wm_status)s));
    }
  if (!buf[0])
    snprintf(buf, n, "nothing (%s is final)", ks_wm_status_name(from));
}

static ks_code node_missing(const char *id, const char *where, ks_err *err) {
  return ks_err_set(err, KS_ERR_INPUT,
                    "%s: no node '%s' in the world model (unknown id); use "
                    "the id of an existing node",
                    where, id ? id : "(null)");
}

static ks_code op_update(ks_wm *wm, const char *id, const json_t *fields,
                         const char *const *skip, const char *where,
                         ks_err *err) {
  char path[512];
  ks_wm_node *n = ks_wmi_get(wm, id);
  if (!n)
    return node_missing(id, where, err);
  if (!n->up)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: the root cannot be edited; insert, update or prune "
                      "its children instead",
                      where);
  ks_wm_node *c = ks_wmi_node_clone(n);
  ks_code rc =
      ks_wmi_parse_fields(fields, c, WM_F_UPDATE, skip, true, where, err);
  if (rc)
    goto out;
  if (!ks_wm_status_allowed(n->status, c->status)) {
    char ok[128];
    allowed_list(n->status, ok, sizeof ok);
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: '%s' cannot go from %s to %s (invalid status "
                    "transition); from %s it can go to: %s",
                    ks_wmi_path(path, sizeof path, where, "status"), id,
                    ks_wm_status_name(n->status), ks_wm_status_name(c->status),
                    ks_wm_status_name(n->status), ok);
    goto out;
  }
  if (n->status == KS_WM_SOLVED &&
      (c->solution.candidate_id != n->solution.candidate_id ||
       c->solution.score != n->solution.score) &&
      (c->solution.candidate_id == 0 ||
       !(c->solution.score > n->solution.score))) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: '%s' is solved with candidate %lld (score %g) and "
                    "keeps its solution; it can only be replaced by a "
                    "candidate with a higher score",
                    ks_wmi_path(path, sizeof path, where, "solution"), id,
                    (long long)n->solution.candidate_id, n->solution.score);
    goto out;
  }
  if ((rc = ks_wmi_node_check(c, false, where, err)))
    goto out;
  /* Commit: move the new contents into the existing struct (links kept). */
  ks_wm_node old = *n;
  *n = *c;
  n->up = old.up;
  n->n_children = old.n_children;
  n->depth = old.depth;
  n->pos = old.pos;
  *c = old;
out:
  ks_wmi_node_free(c);
  return rc;
}

ks_code ks_wm_update(ks_wm *wm, const char *id, const json_t *fields,
                     ks_err *err) {
  char where[KS_WM_ID_MAX + 16];
  snprintf(where, sizeof where, "update(%s)", id ? id : "");
  return op_update(wm, id, fields, NULL, where, err);
}

ks_code ks_wm_set_status(ks_wm *wm, const char *id, ks_wm_status status,
                         ks_err *err) {
  json_t *f = json_pack("{ss}", "status", ks_wm_status_name(status));
  ks_code rc = f ? ks_wm_update(wm, id, f, err)
                 : ks_err_set(err, KS_ERR_INPUT, "set_status: bad status %d",
                              (int)status);
  json_decref(f);
  return rc;
}

/* ---------------------------------------------------------------- split */

/* Takes ownership of kids[0..n). */
static ks_code op_split(ks_wm *wm, const char *id, ks_wm_node **kids, int n,
                        const char *where, char (*ids_out)[KS_WM_ID_MAX],
                        ks_err *err) {
  char path[512];
  ks_code rc = KS_OK;
  char(*taken)[KS_WM_ID_MAX] = NULL;
  ks_wm_node *s = ks_wmi_get(wm, id);
  if (!s) {
    rc = node_missing(id, where, err);
  } else if (!s->up) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: the root cannot be split; insert children under it "
                    "instead",
                    where);
  } else if (s->split) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: '%s' is already split; insert more children under it "
                    "or split one of its children",
                    where, id);
  } else if (s->status != KS_WM_OPEN) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: only open leaves can be split; '%s' is %s (reopen it "
                    "first with status open)",
                    where, id, ks_wm_status_name(s->status));
  } else if (s->n_children > 0) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: only open leaves can be split; '%s' has %d "
                    "children (insert more children instead)",
                    where, id, s->n_children);
  } else if (n < 2 || n > SPLIT_MAX) {
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: a split needs 2 to %d children, got %d; to rewrite "
                    "one plan use update",
                    ks_wmi_path(path, sizeof path, where, "children"),
                    SPLIT_MAX, n);
  }
  if (!rc) {
    taken = ks_wmi_xmalloc(sizeof *taken * (size_t)n);
    long counter = wm->next_id;
    for (int i = 0; i < n && !rc; i++) {
      char w[512];
      snprintf(w, sizeof w, "%s.children[%d]", where, i);
      if (kids[i]->parent[0] && strcmp(kids[i]->parent, id) != 0)
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "%s.parent: children of a split go under '%s'; leave "
                        "parent out",
                        w, id);
      snprintf(kids[i]->parent, KS_WM_ID_MAX, "%s", id);
      if (!rc)
        rc = insert_check(wm, kids[i], &counter, taken, i, w, err);
      snprintf(taken[i], KS_WM_ID_MAX, "%s", kids[i]->id);
    }
    if (!rc) {
      for (int i = 0; i < n; i++) {
        if (ids_out)
          snprintf(ids_out[i], KS_WM_ID_MAX, "%s", kids[i]->id);
        ks_wmi_append(wm, kids[i]);
        kids[i] = NULL;
      }
      s->split = true;
      if (counter > wm->next_id)
        wm->next_id = counter;
    }
  }
  for (int i = 0; i < n; i++)
    ks_wmi_node_free(kids[i]);
  free(taken);
  return rc;
}

ks_code ks_wm_split(ks_wm *wm, const char *id, const ks_wm_node_spec *children,
                    int n, char (*ids_out)[KS_WM_ID_MAX], ks_err *err) {
  char where[KS_WM_ID_MAX + 16];
  snprintf(where, sizeof where, "split(%s)", id ? id : "");
  if (n < 0 || (n > 0 && !children))
    n = 0;
  ks_wm_node **kids = ks_wmi_xmalloc(sizeof *kids * (size_t)n);
  ks_code rc = KS_OK;
  int made = 0;
  for (; made < n && !rc; made++) {
    char w[512];
    snprintf(w, sizeof w, "%s.children[%d]", where, made);
    rc = node_from_spec(&children[made], id, &kids[made], w, err);
  }
  if (rc) {
    for (int i = 0; i < made; i++)
      ks_wmi_node_free(kids[i]);
  } else {
    rc = op_split(wm, id, kids, n, where, ids_out, err);
  }
  free(kids);
  return rc;
}

/* ---------------------------------------------------------------- delete */

static ks_code op_delete(ks_wm *wm, const char *id, const char *where,
                         ks_err *err) {
  ks_wm_node *n = ks_wmi_get(wm, id);
  if (!n)
    return node_missing(id, where, err);
  if (!n->up)
    return ks_err_set(err, KS_ERR_INPUT, "%s: the root cannot be deleted",
                      where);
  if (n->status != KS_WM_OPEN)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: only open leaves can be deleted; '%s' is %s (set "
                      "status pruned to drop it instead)",
                      where, id, ks_wm_status_name(n->status));
  if (n->n_children > 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: only open leaves can be deleted; '%s' has %d "
                      "children (set status pruned to drop the branch)",
                      where, id, n->n_children);
  ks_wm_node *p = n->up;
  ks_wmi_remove_at(wm, n->pos);
  if (p->split && p->n_children == 0)
    p->split = false; /* the group is empty: back to a plain open leaf */
  return KS_OK;
}

ks_code ks_wm_delete(ks_wm *wm, const char *id, ks_err *err) {
  char where[KS_WM_ID_MAX + 16];
  snprintf(where, sizeof where, "delete(%s)", id ? id : "");
  return op_delete(wm, id, where, err);
}

/* ---------------------------------------------------------------- scripts */

static ks_code only_keys(const json_t *op, const char *const *keys,
                         const char *where, const char *what, ks_err *err) {
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)op, key, v) {
    bool ok = false;
    for (int i = 0; keys[i]; i++)
      ok |= strcmp(keys[i], key) == 0;
    if (!ok)
      return ks_err_set(err, KS_ERR_INPUT, "%s.%s: unknown field; %s", where,
                        key, what);
  }
  return KS_OK;
}

static ks_code get_id(const json_t *op, const char *where, const char **id,
                      ks_err *err) {
  json_t *v = json_object_get(op, "id");
  *id = json_string_value(v);
  if (!*id)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.id: missing; give the id of the node to change as "
                      "a string",
                      where);
  return KS_OK;
}

static ks_code apply_one(ks_wm *wm, const json_t *op, const char *where,
                         ks_err *err) {
  static const char *const skip_op[] = {"op", NULL};
  static const char *const skip_op_id[] = {"op", "id", NULL};
  if (!json_is_object(op))
    return ks_err_set(err, KS_ERR_INPUT, "%s: expected an object {\"op\": ...}",
                      where);
  const char *name = json_string_value(json_object_get(op, "op"));
  const char *id = NULL;
  ks_code rc;
  if (!name)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s.op: missing; use \"insert\", \"update\", \"split\" "
                      "or \"delete\"",
                      where);
  if (strcmp(name, "insert") == 0) {
    ks_wm_node *n = ks_wmi_node_new();
    rc = ks_wmi_parse_fields(op, n, WM_F_INSERT, skip_op, false, where, err);
    if (rc) {
      ks_wmi_node_free(n);
      return rc;
    }
    return op_insert(wm, n, where, NULL, err);
  }
  if (strcmp(name, "update") == 0)
    return (rc = get_id(op, where, &id, err))
               ? rc
               : op_update(wm, id, op, skip_op_id, where, err);
  if (strcmp(name, "delete") == 0) {
    static const char *const keys[] = {"op", "id", NULL};
    if ((rc = get_id(op, where, &id, err)) ||
        (rc = only_keys(op, keys, where, "delete takes only id", err)))
      return rc;
    return op_delete(wm, id, where, err);
  }
  if (strcmp(name, "split") == 0) {
    static const char *const keys[] = {"op", "id", "children", NULL};
    if ((rc = get_id(op, where, &id, err)) ||
        (rc = only_keys(op, keys, where, "split takes id and children", err)))
      return rc;
    json_t *ch = json_object_get(op, "children");
    if (!json_is_array(ch))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s.children: expected an array of new nodes "
                        "(decision, choice, action, ...)",
                        where);
    int n = (int)json_array_size(ch);
    ks_wm_node **kids = ks_wmi_xmalloc(sizeof *kids * (size_t)n);
    rc = KS_OK;
    int made = 0;
    for (; made < n && !rc; made++) {
      char w[512];
      snprintf(w, sizeof w, "%s.children[%d]", where, made);
      kids[made] = ks_wmi_node_new();
      rc = ks_wmi_parse_fields(json_array_get(ch, made), kids[made],
                               WM_F_INSERT, NULL, false, w, err);
    }
    if (rc) {
      for (int i = 0; i < made; i++)
        ks_wmi_node_free(kids[i]);
    } else {
      rc = op_split(wm, id, kids, n, where, NULL, err);
    }
    free(kids);
    return rc;
  }
  return ks_err_set(err, KS_ERR_INPUT,
                    "%s.op: '%.40s' is not an operation; use \"insert\", "
                    "\"update\", \"split\" or \"delete\"",
                    where, name);
}

static ks_code apply_all(ks_wm *wm, const json_t *ops, ks_err *err) {
  for (size_t i = 0; i < json_array_size(ops); i++) {
    char where[32];
    snprintf(where, sizeof where, "ops[%zu]", i);
    ks_code rc = apply_one(wm, json_array_get(ops, i), where, err);
    if (rc)
      return rc;
  }
  return KS_OK;
}

ks_code ks_wm_apply_json(ks_wm *wm, const json_t *ops, ks_err *err) {
  if (!json_is_array(ops))
    return ks_err_set(err, KS_ERR_INPUT,
                      "ops: expected an array of operations "
                      "[{\"op\": \"insert\"|\"update\"|\"split\"|\"delete\", "
                      "...}]");
  /* Dry run on a copy; only a script valid from start to end touches the
   * tree. It is then replayed on the tree itself (same ops, same state, same
   * result) so that node pointers held by callers stay valid. */
  ks_wm *copy = ks_wm_clone(wm);
  ks_code rc = apply_all(copy, ops, err);
  if (!rc) {
    ks_err again;
    if (apply_all(wm, ops, &again) != KS_OK)
      ks_wmi_swap(wm, copy); /* cannot happen; keep the validated result */
  }
  ks_wm_free(copy);
  return rc;
}
