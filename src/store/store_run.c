/* store_run.c — the run row, the task snapshot and the world-model nodes
 * (store.h: runs, snapshot, nodes; DESIGN.md: Store). The run row holds the
 * task identity a --resume is checked against; the node set is replaced in
 * one transaction so a saved tree is never half old, half new. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- runs */

void ks_store_run_free(ks_store_run *r) {
  if (!r)
    return;
  free(r->task_name);
  free(r->task_hash);
  free(r->backend);
  free(r->config_json);
  free(r->stopped_because);
  memset(r, 0, sizeof *r);
}

ks_code ks_store_get_run(ks_store *s, ks_store_run *out, bool *found,
                         ks_err *err) {
  memset(out, 0, sizeof *out);
  *found = false;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_RUN_GET, &st, err);
  if (c)
    return c;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    out->task_name = ks_st_col_dup(st, 0, &oom);
    out->task_hash = ks_st_col_dup(st, 1, &oom);
    out->backend = ks_st_col_dup(st, 2, &oom);
    out->seed = sqlite3_column_int64(st, 3);
    out->config_json = ks_st_col_dup(st, 4, &oom);
    out->created = sqlite3_column_double(st, 5);
    out->updated = sqlite3_column_double(st, 6);
    out->stopped_because = ks_st_col_dup(st, 7, &oom);
    *found = true;
    if (oom) {
      ks_store_run_free(out);
      *found = false;
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory reading the run",
                     s->path);
    }
  } else if (rc != SQLITE_DONE) {
    c = ks_st_fail(s, rc, "reading the run", err);
  }
  ks_st_done(st);
  return c;
}

ks_code ks_store_check_task(ks_store *s, const char *task_name,
                            const char *task_hash, ks_err *err) {
  ks_code c;
  if ((c = ks_st_need(task_name, "task_name", err)) ||
      (c = ks_st_need(task_hash, "task_hash", err)))
    return c;
  ks_store_run r;
  bool found;
  if ((c = ks_store_get_run(s, &r, &found, err)) || !found)
    return c;
  if (strcmp(r.task_name, task_name) != 0)
    c = ks_err_set(err, KS_ERR_INPUT,
                   "run folder %s holds a search of task '%s' (hash %s), not "
                   "of task '%s' (hash %s); choose another --out, or resume "
                   "it with task '%s'",
                   s->dir, r.task_name, r.task_hash, task_name, task_hash,
                   r.task_name);
  else if (strcmp(r.task_hash, task_hash) != 0)
    c = ks_err_set(err, KS_ERR_INPUT,
                   "run folder %s holds a search of task '%s' as it was "
                   "(hash %s), but task '%s' has changed since (hash %s: its "
                   "task.json, its reference or the --workloads selection "
                   "differs); restore the task and give the run's own "
                   "--workloads (or none), or start a new run with another "
                   "--out",
                   s->dir, r.task_name, r.task_hash, task_name, task_hash);
  ks_store_run_free(&r);
  return c;
}

ks_code ks_store_put_run(ks_store *s, const char *task_name,
                         const char *task_hash, const char *backend,
                         int64_t seed, const char *config_json, ks_err *err) {
  ks_code c;
  char *cfg = NULL;
  sqlite3_stmt *st = NULL;
  if ((c = ks_st_need(backend, "backend", err)) ||
      (c = ks_store_check_task(s, task_name, task_hash, err)) ||
      (c = ks_st_canon_json(s, config_json, "{}", true, "run config", &cfg,
                            err)) ||
      (c = ks_st_prep(s, ST_RUN_PUT, &st, err)))
    goto out;
  ks_st_bind_text(st, 1, task_name);
  ks_st_bind_text(st, 2, task_hash);
  ks_st_bind_text(st, 3, backend);
  sqlite3_bind_int64(st, 4, seed);
  ks_st_bind_text(st, 5, cfg);
  sqlite3_bind_double(st, 6, ks_wall_now());
  c = ks_st_run(s, st, "recording the run", err);
out:
  free(cfg);
  return c;
}

ks_code ks_store_set_stopped(ks_store *s, const char *reason, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_RUN_STOP, &st, err);
  if (c)
    return c;
  ks_st_bind_text(st, 1, reason);
  sqlite3_bind_double(st, 2, ks_wall_now());
  return ks_st_run(s, st, "recording why the run stopped", err);
}

/* ---------------------------------------------------------------- snapshot */

ks_code ks_store_put_task_snapshot(ks_store *s, const char *task_json,
                                   const char *reference_source, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = ks_st_need(task_json, "task_json", err)) ||
      (c = ks_st_need(reference_source, "reference_source", err)) ||
      (c = ks_st_prep(s, ST_SNAP_PUT, &st, err)))
    return c;
  ks_st_bind_text(st, 1, task_json);
  ks_st_bind_text(st, 2, reference_source);
  sqlite3_bind_double(st, 3, ks_wall_now());
  return ks_st_run(s, st, "saving the task snapshot", err);
}

ks_code ks_store_get_task_snapshot(ks_store *s, char **task_json,
                                   char **reference_source, ks_err *err) {
  if (task_json)
    *task_json = NULL;
  if (reference_source)
    *reference_source = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_SNAP_GET, &st, err);
  if (c)
    return c;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    char *a = ks_st_col_dup(st, 0, &oom), *b = ks_st_col_dup(st, 1, &oom);
    if (oom) {
      free(a);
      free(b);
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
    } else {
      if (task_json)
        *task_json = a;
      else
        free(a);
      if (reference_source)
        *reference_source = b;
      else
        free(b);
    }
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INPUT,
                   "%s holds no task snapshot; the run was never started "
                   "properly: start a new run with another --out",
                   s->path);
  } else {
    c = ks_st_fail(s, rc, "reading the task snapshot", err);
  }
  ks_st_done(st);
  return c;
}

/* ---------------------------------------------------------------- nodes */

static ks_code node_put(ks_store *s, const char *id, const char *json, double t,
                        ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = ks_st_need(id, "node id", err)) ||
      (c = ks_st_need(json, "node json", err)) ||
      (c = ks_st_prep(s, ST_NODE_PUT, &st, err)))
    return c;
  ks_st_bind_text(st, 1, id);
  ks_st_bind_text(st, 2, json);
  sqlite3_bind_double(st, 3, t);
  return ks_st_run(s, st, "saving a world-model node", err);
}

ks_code ks_store_put_node(ks_store *s, const char *node_id,
                          const char *node_json, ks_err *err) {
  return node_put(s, node_id, node_json, ks_wall_now(), err);
}

ks_code ks_store_replace_nodes(ks_store *s, const json_t *nodes, ks_err *err) {
  if (!json_is_array(nodes))
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: replace_nodes needs a JSON array", s->path);
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = ks_st_prep(s, ST_NODE_CLEAR, &st, err)) ||
      (c = ks_st_begin(s, "saving the world model", err)))
    return c;
  if ((c = ks_st_run(s, st, "saving the world model", err)))
    goto out;
  double t = ks_wall_now();
  size_t i;
  json_t *n;
  json_array_foreach(nodes, i, n) {
    const char *id = json_string_value(json_object_get(n, "id"));
    if (!id) {
      c = ks_err_set(err, KS_ERR_INTERNAL,
                     "%s: world-model node %zu has no string \"id\"", s->path,
                     i);
      goto out;
    }
    char *text = json_dumps(n, JSON_COMPACT);
    if (!text) {
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
      goto out;
    }
    c = node_put(s, id, text, t, err);
    free(text);
    if (c)
      goto out;
  }
  c = ks_st_commit(s, "saving the world model", err);
out:
  if (c)
    ks_st_rollback(s);
  return c;
}

ks_code ks_store_list_nodes(ks_store *s, json_t **out, ks_err *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_NODE_LIST, &st, err);
  if (c)
    return c;
  json_t *arr = json_array();
  int rc;
  while (arr && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_error_t je;
    const char *id = (const char *)sqlite3_column_text(st, 0);
    json_t *n = json_loads((const char *)sqlite3_column_text(st, 1), 0, &je);
    if (!n) {
      c = ks_err_set(err, KS_ERR_INPUT,
                     "%s is corrupt: node '%s' holds invalid JSON (%s); move "
                     "it away or choose another --out",
                     s->path, id ? id : "?", je.text);
      break;
    }
    json_array_append_new(arr, n);
  }
  if (!arr)
    c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
  else if (!c && rc != SQLITE_DONE)
    c = ks_st_fail(s, rc, "reading the world model", err);
  ks_st_done(st);
  if (c)
    json_decref(arr);
  else
    *out = arr;
  return c;
}
