/* store_eval.c — candidates, builds and evaluations (store.h; DESIGN.md:
 * Store). A candidate is unique by (hash, canonical params); an evaluation is
 * begun as 'running' and finished with its measurements in one transaction,
 * so kill -9 leaves at most a 'running' row that the next session marks
 * 'interrupted' (ks_store_abandon_running). Distributed jobs: jobs.c. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- candidates
 */

void ks_store_candidate_free(ks_store_candidate *c) {
  if (!c)
    return;
  free(c->node_id);
  free(c->source);
  free(c->params_json);
  free(c->hash);
  memset(c, 0, sizeof *c);
}

static ks_code find_canon(ks_store *s, const char *hash, const char *params,
                          int64_t *id, ks_err *err) {
  *id = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_CAND_FIND, &st, err);
  if (c)
    return c;
  ks_st_bind_text(st, 1, hash);
  ks_st_bind_text(st, 2, params);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64(st, 0);
  else if (rc != SQLITE_DONE)
    c = ks_st_fail(s, rc, "looking up a candidate", err);
  ks_st_done(st);
  return c;
}

ks_code ks_store_find_candidate(ks_store *s, const char *hash,
                                const char *params_json, int64_t *id,
                                ks_err *err) {
  *id = 0;
  char *params = NULL;
  ks_code c;
  if (!(c = ks_st_need(hash, "candidate hash", err)) &&
      !(c = ks_st_canon_json(s, params_json, "{}", true, "candidate params",
                             &params, err)))
    c = find_canon(s, hash, params, id, err);
  free(params);
  return c;
}

ks_code ks_store_add_candidate(ks_store *s, const char *node_id,
                               const char *source, const char *params_json,
                               const char *hash, int64_t *id, bool *is_new,
                               ks_err *err) {
  *id = 0;
  if (is_new)
    *is_new = false;
  char *params = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = ks_st_need(source, "candidate source", err)) ||
      (c = ks_st_need(hash, "candidate hash", err)) ||
      (c = ks_st_canon_json(s, params_json, "{}", true, "candidate params",
                            &params, err)) ||
      (c = ks_st_prep(s, ST_CAND_INSERT, &st, err)))
    goto out;
  ks_st_bind_text(st, 1, node_id);
  ks_st_bind_text(st, 2, source);
  ks_st_bind_text(st, 3, params);
  ks_st_bind_text(st, 4, hash);
  sqlite3_bind_double(st, 5, ks_wall_now());
  if ((c = ks_st_run(s, st, "saving a candidate", err)))
    goto out;
  /* ON CONFLICT DO NOTHING: no change means an identical one is there. */
  if (sqlite3_changes(s->db) == 1) {
    *id = sqlite3_last_insert_rowid(s->db);
    if (is_new)
      *is_new = true;
  } else if (!(c = find_canon(s, hash, params, id, err)) && *id == 0) {
    c = ks_err_set(err, KS_ERR_INTERNAL,
                   "%s: candidate %s was neither inserted nor found", s->path,
                   hash);
  }
out:
  free(params);
  return c;
}

ks_code ks_store_get_candidate(ks_store *s, int64_t id, ks_store_candidate *out,
                               ks_err *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_CAND_GET, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, id);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    out->id = sqlite3_column_int64(st, 0);
    out->node_id = ks_st_col_dup(st, 1, &oom);
    out->source = ks_st_col_dup(st, 2, &oom);
    out->params_json = ks_st_col_dup(st, 3, &oom);
    out->hash = ks_st_col_dup(st, 4, &oom);
    out->created = sqlite3_column_double(st, 5);
    if (oom) {
      ks_store_candidate_free(out);
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
    }
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INTERNAL, "%s holds no candidate %lld", s->path,
                   (long long)id);
  } else {
    c = ks_st_fail(s, rc, "reading a candidate", err);
  }
  ks_st_done(st);
  return c;
}

/* ---------------------------------------------------------------- builds */

ks_code ks_store_add_build(ks_store *s, int64_t candidate_id, bool ok,
                           double seconds, const char *log,
                           const char *artifact, int64_t *id, ks_err *err) {
  if (id)
    *id = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_BUILD_INSERT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, candidate_id);
  sqlite3_bind_int(st, 2, ok ? 1 : 0);
  sqlite3_bind_double(st, 3, isfinite(seconds) ? seconds : 0.0);
  ks_st_bind_text(st, 4, log ? log : "");
  ks_st_bind_text(st, 5, artifact);
  sqlite3_bind_double(st, 6, ks_wall_now());
  if (!(c = ks_st_run(s, st, "saving a build", err)) && id)
    *id = sqlite3_last_insert_rowid(s->db);
  return c;
}

/* ---------------------------------------------------------------- evaluations
 */

ks_code ks_store_begin_evaluation(ks_store *s, int64_t candidate_id,
                                  const char *node_id, int64_t *eval_id,
                                  ks_err *err) {
  *eval_id = 0;
  if (node_id && strlen(node_id) >= KS_STORE_NODE_ID_MAX)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: node id '%.40s...' is longer than %d bytes", s->path,
                      node_id, KS_STORE_NODE_ID_MAX - 1);
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_EVAL_BEGIN, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, candidate_id);
  ks_st_bind_text(st, 2, node_id);
  sqlite3_bind_double(st, 3, ks_wall_now());
  if (!(c = ks_st_run(s, st, "starting an evaluation", err)))
    *eval_id = sqlite3_last_insert_rowid(s->db);
  return c;
}

static ks_code put_measurement(ks_store *s, int64_t eval_id,
                               const ks_store_measurement *m, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_MEAS_INSERT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  sqlite3_bind_int(st, 2, m->workload);
  ks_st_bind_text(st, 3, m->axes_json[0] ? m->axes_json : "{}");
  ks_st_bind_real(st, 4, m->time_ns_median);
  ks_st_bind_real(st, 5, m->time_ns_iqr);
  ks_st_bind_real(st, 6, m->gbps);
  ks_st_bind_real(st, 7, m->roofline_fraction);
  ks_st_bind_real(st, 8, m->speedup);
  return ks_st_run(s, st, "saving a measurement", err);
}

ks_code ks_store_finish_evaluation(ks_store *s, int64_t eval_id,
                                   const char *status, bool correct,
                                   double score, const char *result_json,
                                   const ks_store_measurement *m, size_t n_m,
                                   ks_err *err) {
  if (!status || !status[0] || strlen(status) >= KS_STORE_STATUS_MAX ||
      strcmp(status, "running") == 0 || strcmp(status, "interrupted") == 0)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: '%s' is not a status an evaluation can finish "
                      "with",
                      s->path, status ? status : "(null)");
  if (n_m && !m)
    return ks_st_need(m, "measurements", err);
  sqlite3_stmt *st = NULL;
  ks_code c;
  char doing[96];
  snprintf(doing, sizeof doing, "saving evaluation %lld", (long long)eval_id);
  if ((c = ks_st_prep(s, ST_EVAL_FINISH, &st, err)) ||
      (c = ks_st_begin(s, doing, err)))
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  ks_st_bind_text(st, 2, status);
  sqlite3_bind_int(st, 3, correct ? 1 : 0);
  ks_st_bind_real(st, 4, score);
  ks_st_bind_text(st, 5, result_json);
  sqlite3_bind_double(st, 6, ks_wall_now());
  if ((c = ks_st_run(s, st, doing, err)))
    goto out;
  if (sqlite3_changes(s->db) != 1) {
    c = ks_err_set(err, KS_ERR_INTERNAL,
                   "%s: evaluation %lld is not running (never begun, already "
                   "finished or interrupted)",
                   s->path, (long long)eval_id);
    goto out;
  }
  for (size_t i = 0; i < n_m; i++)
    if ((c = put_measurement(s, eval_id, &m[i], err)))
      goto out;
  c = ks_st_commit(s, doing, err);
out:
  if (c)
    ks_st_rollback(s);
  return c;
}

ks_code ks_store_abandon_running(ks_store *s, int64_t **candidate_ids,
                                 size_t *n, ks_err *err) {
  if (candidate_ids)
    *candidate_ids = NULL;
  *n = 0;
  int64_t *ids = NULL;
  size_t count = 0, cap = 0;
  sqlite3_stmt *sel, *upd;
  ks_code c;
  if ((c = ks_st_prep(s, ST_EVAL_RUNNING, &sel, err)) ||
      (c = ks_st_prep(s, ST_EVAL_ABANDON, &upd, err)) ||
      (c = ks_st_begin(s, "marking interrupted evaluations", err)))
    return c;
  int rc;
  while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 8;
      int64_t *grown = realloc(ids, cap * sizeof *ids);
      if (!grown) {
        c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
        break;
      }
      ids = grown;
    }
    ids[count++] = sqlite3_column_int64(sel, 0);
  }
  if (!c && rc != SQLITE_DONE)
    c = ks_st_fail(s, rc, "reading running evaluations", err);
  ks_st_done(sel);
  if (!c) {
    sqlite3_bind_double(upd, 1, ks_wall_now());
    c = ks_st_run(s, upd, "marking interrupted evaluations", err);
  }
  if (!c)
    c = ks_st_commit(s, "marking interrupted evaluations", err);
  if (c) {
    ks_st_rollback(s);
    free(ids);
    return c;
  }
  *n = count;
  if (candidate_ids)
    *candidate_ids = ids;
  else
    free(ids);
  return KS_OK;
}
