/* world_model_json.c — world_model.json (DESIGN.md "World model", "run"):
 * the node field parser shared with edit scripts, the tree <-> JSON
 * conversion with full validation, and the atomic save / load.
 *
 * Format: {"version": 1, "next_id": k, "nodes": [node, ...]} where a node is
 * {"id", "parent" (null for the root), "decision", "choice", "status",
 *  "split", "action": {"title", "description", "difficulty", "priority",
 *  "expected_speedup", "rationale"}, "concepts": [..], "params": {..},
 *  "solution": {"candidate_id", "score"}, "attempts", "evidence": [..],
 *  "notes"}. Every field is written; on reading, all but id, parent,
 * decision, choice and status may be left out (defaults of a new node). */
#include "search/world_model_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- to JSON */

static void put(json_t *o, const char *k, json_t *v) {
  if (!v || json_object_set_new(o, k, v))
    abort();
}

json_t *ks_wm_node_to_json(const ks_wm_node *n) {
  json_t *o = json_object(), *a = json_object(), *s = json_object();
  json_t *c = json_array(), *e = json_array();
  if (!o || !a || !s || !c || !e)
    abort();
  put(o, "id", json_string(n->id));
  put(o, "parent", n->parent[0] ? json_string(n->parent) : json_null());
  put(o, "decision", json_string(n->decision));
  put(o, "choice", json_string(n->choice));
  put(o, "status", json_string(ks_wm_status_name(n->status)));
  put(o, "split", json_boolean(n->split));
  put(a, "title", json_string(n->action.title));
  put(a, "description", json_string(n->action.description));
  put(a, "difficulty", json_integer(n->action.difficulty));
  put(a, "priority", json_real(n->action.priority));
  put(a, "expected_speedup", json_real(n->action.expected_speedup));
  put(a, "rationale", json_string(n->action.rationale));
  put(o, "action", a);
  for (int i = 0; i < n->n_concepts; i++)
    if (json_array_append_new(c, json_string(n->concepts[i])))
      abort();
  put(o, "concepts", c);
  put(o, "params", json_deep_copy(n->params));
  put(s, "candidate_id", json_integer(n->solution.candidate_id));
  put(s, "score", json_real(n->solution.score));
  put(o, "solution", s);
  put(o, "attempts", json_integer(n->attempts));
  for (int i = 0; i < n->n_evidence; i++)
    if (json_array_append_new(e, json_integer(n->evidence[i])))
      abort();
  put(o, "evidence", e);
  put(o, "notes", json_string(n->notes));
  return o;
}

json_t *ks_wm_to_json(const ks_wm *wm) {
  json_t *doc = json_object(), *nodes = json_array();
  if (!doc || !nodes)
    abort();
  put(doc, "version", json_integer(KS_WM_VERSION));
  put(doc, "next_id", json_integer(wm->next_id));
  for (int i = 0; i < wm->n; i++)
    if (json_array_append_new(nodes, ks_wm_node_to_json(wm->nodes[i])))
      abort();
  put(doc, "nodes", nodes);
  return doc;
}

/* ---------------------------------------------------------------- from JSON */

static ks_code check_structure(ks_wm *wm, ks_err *err) {
  int roots = 0;
  for (int i = 0; i < wm->n; i++) {
    ks_wm_node *n = wm->nodes[i];
    if (!n->parent[0]) {
      roots++;
      if (strcmp(n->id, KS_WM_ROOT_ID) != 0)
        return ks_err_set(err, KS_ERR_INPUT,
                          "nodes[%d].parent: '%s' has no parent but only the "
                          "root (id \"root\") may; give it a parent",
                          i, n->id);
    } else if (!ks_wmi_get(wm, n->parent)) {
      return ks_err_set(err, KS_ERR_INPUT,
                        "nodes[%d].parent: no node '%s' in this file; use "
                        "the id of a node listed under nodes",
                        i, n->parent);
    } else if (strcmp(n->parent, n->id) == 0) {
      return ks_err_set(err, KS_ERR_INPUT,
                        "nodes[%d].parent: '%s' is its own parent", i, n->id);
    }
  }
  if (roots != 1)
    return ks_err_set(err, KS_ERR_INPUT,
                      "nodes: found %d roots; exactly one node (id \"root\", "
                      "parent null) must have no parent",
                      roots);
  /* Every chain must reach the root within n steps, else it loops. */
  for (int i = 0; i < wm->n; i++) {
    const ks_wm_node *p = wm->nodes[i];
    int steps = 0;
    while (p->parent[0] && steps <= wm->n) {
      p = ks_wmi_get(wm, p->parent);
      steps++;
    }
    if (steps > wm->n)
      return ks_err_set(err, KS_ERR_INPUT,
                        "nodes[%d].parent: following parents from '%s' loops "
                        "without reaching the root; every node must lead up "
                        "to \"root\"",
                        i, wm->nodes[i]->id);
  }
  ks_wmi_relink(wm);
  for (int i = 0; i < wm->n; i++)
    if (wm->nodes[i]->split && wm->nodes[i]->n_children == 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "nodes[%d].split: '%s' is marked split but has no "
                        "children; set split to false",
                        i, wm->nodes[i]->id);
  return KS_OK;
}

ks_code ks_wm_from_json(const json_t *doc, ks_wm **out, ks_err *err) {
  *out = NULL;
  if (!json_is_object(doc))
    return ks_wmi_type_err(err, "world model",
                           "an object {\"version\", \"nodes\"}", doc);
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)doc, key, v) {
    if (strcmp(key, "version") && strcmp(key, "next_id") &&
        strcmp(key, "nodes"))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: unknown field; a world model has version, "
                        "next_id, nodes",
                        key);
  }
  long long ver, next = 1;
  json_t *jv = json_object_get(doc, "version");
  if (!jv)
    return ks_err_set(err, KS_ERR_INPUT,
                      "version: missing; add \"version\": %d", KS_WM_VERSION);
  ks_code rc = ks_wmi_get_int(jv, "version", KS_WM_VERSION, KS_WM_VERSION,
                              "the versions this ksearch reads (1)", &ver, err);
  if (rc)
    return rc;
  if ((v = json_object_get(doc, "next_id")) &&
      (rc = ks_wmi_get_int(v, "next_id", 1, 999999999, "1..999999999", &next,
                           err)))
    return rc;
  json_t *nodes = json_object_get(doc, "nodes");
  if (!json_is_array(nodes) || json_array_size(nodes) == 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "nodes: expected a non-empty array of nodes, got %s",
                      nodes ? ks_wmi_type_name(nodes) : "nothing");
  static const char *const required[] = {"id", "parent", "decision", "choice",
                                         "status"};
  ks_wm *wm = ks_wmi_alloc();
  for (size_t i = 0; i < json_array_size(nodes); i++) {
    json_t *jn = json_array_get(nodes, i);
    char where[64];
    snprintf(where, sizeof where, "nodes[%zu]", i);
    if (!json_is_object(jn)) {
      rc = ks_wmi_type_err(err, where, "an object", jn);
      goto fail;
    }
    for (size_t r = 0; r < sizeof required / sizeof required[0]; r++)
      if (!json_object_get(jn, required[r])) {
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "%s: missing field '%s'; every node has id, parent "
                        "(null for the root), decision, choice and status",
                        where, required[r]);
        goto fail;
      }
    ks_wm_node *n = ks_wmi_node_new();
    if ((rc = ks_wmi_parse_fields(jn, n, WM_F_ALL, NULL, false, where, err)) ||
        (rc = ks_wmi_node_check(n, !n->parent[0], where, err))) {
      ks_wmi_node_free(n);
      goto fail;
    }
    const ks_wm_node *dup = ks_wmi_get(wm, n->id);
    if (dup) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "%s.id: '%s' is already used by nodes[%d]; ids must be "
                      "unique",
                      where, n->id, dup->pos);
      ks_wmi_node_free(n);
      goto fail;
    }
    ks_wmi_append(wm, n);
  }
  if ((rc = check_structure(wm, err)))
    goto fail;
  if (next > wm->next_id)
    wm->next_id = (long)next;
  *out = wm;
  return KS_OK;
fail:
  ks_wm_free(wm);
  return rc;
}

/* ---------------------------------------------------------------- files */

ks_code ks_wm_save(const ks_wm *wm, const char *path, ks_err *err) {
  json_t *doc = ks_wm_to_json(wm);
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
  json_decref(doc);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "world model: cannot serialize");
  size_t len = strlen(text);
  /* memcpy, not sprintf: gcc 12's UBSan instrumentation adds a null path
   * after the allocation and -Wformat-overflow then reported "null
   * destination pointer" for the sprintf (a -Werror build failure) */
  static const char suffix[] = ".tmp.XXXXXX";
  size_t plen = strlen(path);
  char *tmp = ks_wmi_xmalloc(plen + sizeof suffix);
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, suffix, sizeof suffix);
  ks_code rc = KS_OK;
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc = ks_err_set(err, KS_ERR_IO,
                    "%s: cannot create a temporary file next to it: %s; "
                    "check that the folder exists and is writable",
                    path, strerror(errno));
    goto out;
  }
  size_t done = 0;
  while (done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = ks_err_set(err, KS_ERR_IO, "%s: write failed: %s", tmp,
                      strerror(errno));
      break;
    }
    done += (size_t)w;
  }
  if (!rc && (write(fd, "\n", 1) != 1 || fsync(fd) != 0))
    rc = ks_err_set(err, KS_ERR_IO, "%s: write/fsync failed: %s", tmp,
                    strerror(errno));
  if (close(fd) != 0 && !rc)
    rc = ks_err_set(err, KS_ERR_IO, "%s: close failed: %s", tmp,
                    strerror(errno));
  if (!rc && rename(tmp, path) != 0)
    rc = ks_err_set(err, KS_ERR_IO, "%s: cannot rename %s over it: %s", path,
                    tmp, strerror(errno));
  if (rc) {
    unlink(tmp);
    goto out;
  }
  /* Make the rename itself durable. */
  char *dir = ks_wmi_xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *(slash == dir ? slash + 1 : slash) = '\0';
  int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  free(dir);
out:
  free(tmp);
  free(text);
  return rc;
}

ks_code ks_wm_load(const char *path, ks_wm **out, ks_err *err) {
  *out = NULL;
  json_error_t jerr;
  json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (!doc) {
    FILE *f = fopen(path, "r");
    if (!f)
      return ks_err_set(err, KS_ERR_IO, "%s: cannot open: %s", path,
                        strerror(errno));
    fclose(f);
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s:%d:%d: not valid JSON: %s; fix the file or remove "
                      "it to start a new world model",
                      path, jerr.line, jerr.column, jerr.text);
  }
  ks_code rc = ks_wm_from_json(doc, out, err);
  json_decref(doc);
  if (rc)
    ks_err_prefix(err, "%s: ", path);
  return rc;
}
