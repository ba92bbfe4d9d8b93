/* jobs.c — the store's side of distributed evaluation (store.h: jobs;
 * DESIGN.md: Store, Workers). An evaluation sent to a worker carries a job
 * id, unique in the table, so that at-least-once delivery becomes exactly
 * once in the store: the run looks a result's job up before finishing the
 * evaluation and drops it when the job is already done. */
#include "store/store.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static ks_code sql_fail(ks_store *s, const char *doing, ks_err *err) {
  return ks_err_set(err, KS_ERR_IO, "%s: %s: %s", ks_store_path(s), doing,
                    sqlite3_errmsg(ks_store_handle(s)));
}

static void job_name(const char *prefix, int64_t id, char *out) {
  snprintf(out, KS_STORE_JOB_ID_MAX, "%s-%lld", prefix, (long long)id);
}

ks_code ks_store_begin_job(ks_store *s, int64_t candidate_id,
                           const char *node_id, const char *prefix,
                           ks_store_job *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  sqlite3 *db = ks_store_handle(s);
  if (strlen(prefix) > KS_STORE_JOB_ID_MAX - 24 ||
      (node_id && strlen(node_id) >= KS_STORE_NODE_ID_MAX))
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "store: job prefix or node id "
                      "too long");
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return sql_fail(s, "starting a job", err);
  sqlite3_stmt *ins = NULL, *upd = NULL;
  ks_code rc = KS_OK;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO evaluations (candidate_id, node_id, "
                         "status, started) VALUES (?1, ?2, 'running', ?3)",
                         -1, &ins, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "UPDATE evaluations SET job_id = ?2 WHERE id = ?1",
                         -1, &upd, NULL) != SQLITE_OK) {
    rc = sql_fail(s, "starting a job", err);
    goto out;
  }
  sqlite3_bind_int64(ins, 1, candidate_id);
  if (node_id)
    sqlite3_bind_text(ins, 2, node_id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(ins, 3, ks_wall_now());
  if (sqlite3_step(ins) != SQLITE_DONE) {
    rc = sql_fail(s, "starting a job", err);
    goto out;
  }
  out->eval_id = sqlite3_last_insert_rowid(db);
  out->candidate_id = candidate_id;
  ks_strlcpy(out->node_id, node_id ? node_id : "", sizeof out->node_id);
  job_name(prefix, out->eval_id, out->job_id);
  sqlite3_bind_int64(upd, 1, out->eval_id);
  sqlite3_bind_text(upd, 2, out->job_id, -1, SQLITE_TRANSIENT);
  if (sqlite3_step(upd) != SQLITE_DONE)
    rc = sql_fail(s, "naming a job", err);
out:
  sqlite3_finalize(ins);
  sqlite3_finalize(upd);
  if (!rc && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    rc = sql_fail(s, "committing a job", err);
  if (rc)
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static void read_job(sqlite3_stmt *st, ks_store_job *j) {
  j->eval_id = sqlite3_column_int64(st, 0);
  j->candidate_id = sqlite3_column_int64(st, 1);
  const char *n = (const char *)sqlite3_column_text(st, 2);
  ks_strlcpy(j->node_id, n ? n : "", sizeof j->node_id);
  const char *id = (const char *)sqlite3_column_text(st, 3);
  ks_strlcpy(j->job_id, id ? id : "", sizeof j->job_id);
}

ks_code ks_store_job_lookup(ks_store *s, const char *job_id, ks_store_job *out,
                            ks_store_job_state *state, ks_err *err) {
  memset(out, 0, sizeof *out);
  *state = KS_STORE_JOB_UNKNOWN;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(ks_store_handle(s),
                         "SELECT id, candidate_id, node_id, job_id, status "
                         "FROM evaluations WHERE job_id = ?1",
                         -1, &st, NULL) != SQLITE_OK)
    return sql_fail(s, "looking a job up", err);
  sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
  ks_code rc = KS_OK;
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) {
    read_job(st, out);
    const char *status = (const char *)sqlite3_column_text(st, 4);
    *state = status && !strcmp(status, "running") ? KS_STORE_JOB_RUNNING
                                                  : KS_STORE_JOB_DONE;
  } else if (r != SQLITE_DONE) {
    rc = sql_fail(s, "looking a job up", err);
  }
  sqlite3_finalize(st);
  return rc;
}

ks_code ks_store_running_jobs(ks_store *s, const char *prefix,
                              ks_store_job **rows, size_t *n, ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3 *db = ks_store_handle(s);
  sqlite3_stmt *st = NULL, *upd = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT id, candidate_id, node_id, job_id FROM "
                         "evaluations WHERE status = 'running' ORDER BY id",
                         -1, &st, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "UPDATE evaluations SET job_id = ?2 WHERE id = ?1",
                         -1, &upd, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return sql_fail(s, "listing running jobs", err);
  }
  ks_store_job *v = NULL;
  size_t count = 0, cap = 0;
  ks_code rc = KS_OK;
  int r;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 8;
      v = realloc(v, cap * sizeof *v);
      if (!v) {
        rc = ks_err_set(err, KS_ERR_NOMEM, "store: out of memory");
        break;
      }
    }
    read_job(st, &v[count]);
    count++;
  }
  if (!rc && r != SQLITE_DONE)
    rc = sql_fail(s, "listing running jobs", err);
  for (size_t i = 0; !rc && i < count; i++) {
    if (v[i].job_id[0])
      continue;
    job_name(prefix, v[i].eval_id, v[i].job_id);
    sqlite3_reset(upd);
    sqlite3_bind_int64(upd, 1, v[i].eval_id);
    sqlite3_bind_text(upd, 2, v[i].job_id, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(upd) != SQLITE_DONE)
      rc = sql_fail(s, "naming a job", err);
  }
  sqlite3_finalize(st);
  sqlite3_finalize(upd);
  if (rc) {
    free(v);
    return rc;
  }
  *rows = v;
  *n = count;
  return KS_OK;
}
