/* store_stmt.c — the run database's statements and the helpers around them
 * (DESIGN.md: Store). The SQL text of every cached prepared statement, the
 * translation of SQLite failures into messages that name the file and the
 * fix, binding and column helpers, transactions, and the canonical JSON text
 * that lets equal values compare equal in SQL. The query files (store_run.c,
 * store_eval.c, store_query.c, store_log.c) use only these. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

#define FINISHED "status NOT IN ('running', 'interrupted')"
#define EVAL_COLS                                                              \
  "id, candidate_id, node_id, status, correct, score, started, finished"

const char *const ks_st_sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_RUN_GET] = "SELECT task_name, task_hash, backend, seed, config_json, "
                   "created, updated, stopped_because FROM runs WHERE id = 1",
    [ST_RUN_PUT] =
        "INSERT INTO runs (id, task_name, task_hash, backend, seed, "
        "config_json, created, updated) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?6) "
        "ON CONFLICT (id) DO UPDATE SET backend = excluded.backend, "
        "seed = excluded.seed, config_json = excluded.config_json, "
        "updated = excluded.updated, stopped_because = NULL",
    [ST_RUN_STOP] =
        "UPDATE runs SET stopped_because = ?1, updated = ?2 WHERE id = 1",
    [ST_SNAP_PUT] =
        "INSERT INTO task_snapshot (id, task_json, reference_source, created) "
        "VALUES (1, ?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET "
        "task_json = excluded.task_json, "
        "reference_source = excluded.reference_source, "
        "created = excluded.created",
    [ST_SNAP_GET] = "SELECT task_json, reference_source FROM task_snapshot "
                    "WHERE id = 1",
    [ST_NODE_PUT] = "INSERT INTO nodes (id, json, updated) VALUES (?1, ?2, ?3) "
                    "ON CONFLICT (id) DO UPDATE SET json = excluded.json, "
                    "updated = excluded.updated",
    [ST_NODE_CLEAR] = "DELETE FROM nodes",
    [ST_NODE_LIST] = "SELECT id, json FROM nodes ORDER BY rowid",
    [ST_CAND_INSERT] =
        "INSERT INTO candidates (node_id, source, params_json, hash, created) "
        "VALUES (?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT (hash, params_json) DO NOTHING",
    [ST_CAND_FIND] =
        "SELECT id FROM candidates WHERE hash = ?1 AND params_json = ?2",
    [ST_CAND_GET] = "SELECT id, node_id, source, params_json, hash, created "
                    "FROM candidates WHERE id = ?1",
    [ST_BUILD_INSERT] =
        "INSERT INTO builds (candidate_id, ok, seconds, log, artifact, "
        "created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_EVAL_BEGIN] = "INSERT INTO evaluations (candidate_id, node_id, "
                      "status, started) VALUES (?1, ?2, 'running', ?3)",
    [ST_EVAL_FINISH] =
        "UPDATE evaluations SET status = ?2, correct = ?3, score = ?4, "
        "result_json = ?5, finished = ?6 WHERE id = ?1 AND status = 'running'",
    [ST_MEAS_INSERT] =
        "INSERT INTO measurements (evaluation_id, workload, axes_json, "
        "time_ns_median, time_ns_iqr, gbps, roofline_fraction, speedup) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_EVAL_RUNNING] = "SELECT candidate_id FROM evaluations "
                        "WHERE status = 'running' ORDER BY id",
    [ST_EVAL_ABANDON] = "UPDATE evaluations SET status = 'interrupted', "
                        "finished = ?1 WHERE status = 'running'",
    [ST_COUNTS] = "SELECT (SELECT count(*) FROM candidates), "
                  "count(*) FILTER (WHERE " FINISHED "), "
                  "count(*) FILTER (WHERE " FINISHED " AND correct = 1), "
                  "count(*) FILTER (WHERE status = 'running'), "
                  "count(*) FILTER (WHERE status = 'interrupted'), "
                  "(SELECT count(*) FROM llm_calls) FROM evaluations",
    [ST_EVAL_LIST] =
        "SELECT " EVAL_COLS " FROM evaluations WHERE " FINISHED " ORDER BY id",
    [ST_EVAL_TOP] = "SELECT " EVAL_COLS " FROM (SELECT *, row_number() OVER "
                    "(PARTITION BY candidate_id ORDER BY score DESC, id) AS rk "
                    "FROM evaluations WHERE correct = 1 AND " FINISHED ") "
                    "WHERE rk = 1 ORDER BY score DESC, id LIMIT ?1",
    [ST_EVAL_RESULT] = "SELECT result_json FROM evaluations WHERE id = ?1",
    [ST_MEAS_LIST] =
        "SELECT workload, axes_json, time_ns_median, time_ns_iqr, gbps, "
        "roofline_fraction, speedup FROM measurements "
        "WHERE evaluation_id = ?1 ORDER BY workload",
    [ST_LLM_INSERT] =
        "INSERT INTO llm_calls (role, model, request_json, response_text, "
        "prompt_tokens, completion_tokens, latency_s, status, created) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_EVENT_INSERT] =
        "INSERT INTO events (time, kind, json) VALUES (?1, ?2, ?3)",
    [ST_LLM_LIST] = "SELECT id, role, model, status, prompt_tokens, "
                    "completion_tokens, latency_s, created FROM llm_calls "
                    "ORDER BY id",
    [ST_EVENT_LIST] = "SELECT id, time, kind, json FROM events WHERE ?1 IS "
                      "NULL OR kind = ?1 ORDER BY id",
};

/* ---------------------------------------------------------------- errors */

/* Turns an SQLite failure into a message naming the file and the fix. Call
 * before resetting statements or rolling back (they overwrite errmsg). */
ks_code ks_st_fail(ks_store *s, int rc, const char *doing, ks_err *err) {
  const char *why = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s is locked (waited %d ms while %s): another ksearch "
                      "is using the run folder %s; wait for it to finish or "
                      "choose another --out",
                      s->path, s->busy_ms, doing, s->dir);
  case SQLITE_FULL:
    return ks_err_set(err, KS_ERR_IO,
                      "%s: disk full while %s (%s); free space on the disk "
                      "holding %s, then continue with --resume %s (results "
                      "committed before are kept)",
                      s->path, doing, why, s->dir, s->dir);
  case SQLITE_NOTADB:
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s is not a ksearch database: %s (while %s); move it "
                      "away or choose another --out",
                      s->path, why, doing);
  case SQLITE_CORRUPT:
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s is corrupt: %s (while %s); move it away (`sqlite3 "
                      "%s .recover` may save its results) or choose another "
                      "--out",
                      s->path, why, doing, s->path);
  case SQLITE_NOMEM:
    return ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory while %s", s->path,
                      doing);
  case SQLITE_READONLY:
    return ks_err_set(err, KS_ERR_IO,
                      "%s: cannot write while %s: %s; the database or the run "
                      "folder %s is read-only (or was opened for reading)",
                      s->path, doing, why, s->dir);
  case SQLITE_IOERR:
  case SQLITE_CANTOPEN:
  case SQLITE_PERM:
  case SQLITE_PROTOCOL:
    return ks_err_set(err, KS_ERR_IO,
                      "%s: i/o error while %s: %s; check that the run folder "
                      "%s exists, is writable and has free space",
                      s->path, doing, why, s->dir);
  default:
    return ks_err_set(err, KS_ERR_INTERNAL, "%s: %s failed: %s (sqlite %d)",
                      s->path, doing, why, rc);
  }
}

void ks_st_rollback(ks_store *s) {
  if (!sqlite3_get_autocommit(s->db))
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ------------------------------------------------------- statement helpers */

ks_code ks_st_prep(ks_store *s, int id, sqlite3_stmt **out, ks_err *err) {
  if (!s->st[id]) {
    int rc = sqlite3_prepare_v3(s->db, ks_st_sql[id], -1,
                                SQLITE_PREPARE_PERSISTENT, &s->st[id], NULL);
    if (rc != SQLITE_OK) {
      s->st[id] = NULL;
      return ks_st_fail(s, rc, "preparing a query", err);
    }
  }
  *out = s->st[id];
  return KS_OK;
}

void ks_st_done(sqlite3_stmt *st) {
  if (st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
}

void ks_st_bind_text(sqlite3_stmt *st, int i, const char *v) {
  if (v)
    sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

/* NaN and infinities are not numbers SQL can keep; they become NULL. */
void ks_st_bind_real(sqlite3_stmt *st, int i, double v) {
  if (isfinite(v))
    sqlite3_bind_double(st, i, v);
  else
    sqlite3_bind_null(st, i);
}

double ks_st_col_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL
             ? NAN
             : sqlite3_column_double(st, i);
}

/* A malloc'd copy of a text column (NULL for NULL); *oom set on failure. */
char *ks_st_col_dup(sqlite3_stmt *st, int i, bool *oom) {
  const unsigned char *t = sqlite3_column_text(st, i);
  if (!t)
    return NULL;
  char *d = strdup((const char *)t);
  if (!d)
    *oom = true;
  return d;
}

void ks_st_col_copy(sqlite3_stmt *st, int i, char *out, size_t n) {
  const unsigned char *t = sqlite3_column_text(st, i);
  snprintf(out, n, "%s", t ? (const char *)t : "");
}

/* Runs a statement that returns no rows, then resets it. */
ks_code ks_st_run(ks_store *s, sqlite3_stmt *st, const char *doing,
                  ks_err *err) {
  int rc = sqlite3_step(st);
  ks_code c = KS_OK;
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    c = ks_st_fail(s, rc, doing, err);
  ks_st_done(st);
  return c;
}

ks_code ks_st_begin(ks_store *s, const char *doing, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_BEGIN, &st, err);
  return c ? c : ks_st_run(s, st, doing, err);
}

ks_code ks_st_commit(ks_store *s, const char *doing, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_COMMIT, &st, err);
  if (!c)
    c = ks_st_run(s, st, doing, err);
  if (c)
    ks_st_rollback(s);
  return c;
}

ks_code ks_st_need(const void *p, const char *what, ks_err *err) {
  if (!p)
    return ks_err_set(err, KS_ERR_INTERNAL, "store: %s must not be NULL", what);
  return KS_OK;
}

/* ---------------------------------------------------------------- JSON */

/* Canonical text of a JSON value (sorted keys, compact) so equal values
 * compare equal in SQL; NULL text stands for dflt. */
ks_code ks_st_canon_json(ks_store *s, const char *text, const char *dflt,
                         bool need_object, const char *what, char **out,
                         ks_err *err) {
  json_error_t je;
  json_t *v = json_loads(text ? text : dflt, JSON_DECODE_ANY, &je);
  if (!v)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: %s is not valid JSON (%s at line %d)", s->path, what,
                      je.text, je.line);
  if (need_object && !json_is_object(v)) {
    json_decref(v);
    return ks_err_set(err, KS_ERR_INTERNAL, "%s: %s must be a JSON object",
                      s->path, what);
  }
  *out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
  json_decref(v);
  if (!*out)
    return ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory encoding %s",
                      s->path, what);
  return KS_OK;
}
