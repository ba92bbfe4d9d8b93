/* store_query.c — reading evaluations back (store.h; DESIGN.md: Store):
 * counts, the finished evaluations in order, the ranking of the best correct
 * evaluation per candidate (top, best), a result's JSON and its per-workload
 * measurements. Used by the search loop, --resume, show and the report. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

ks_code ks_store_counts_get(ks_store *s, ks_store_counts *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_COUNTS, &st, err);
  if (c)
    return c;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    out->candidates = sqlite3_column_int64(st, 0);
    out->finished = sqlite3_column_int64(st, 1);
    out->correct = sqlite3_column_int64(st, 2);
    out->running = sqlite3_column_int64(st, 3);
    out->interrupted = sqlite3_column_int64(st, 4);
    out->llm_calls = sqlite3_column_int64(st, 5);
  } else {
    c = ks_st_fail(s, rc, "counting evaluations", err);
  }
  ks_st_done(st);
  return c;
}

static void read_eval(sqlite3_stmt *st, ks_store_eval *e) {
  e->id = sqlite3_column_int64(st, 0);
  e->candidate_id = sqlite3_column_int64(st, 1);
  ks_st_col_copy(st, 2, e->node_id, sizeof e->node_id);
  ks_st_col_copy(st, 3, e->status, sizeof e->status);
  e->correct = sqlite3_column_int(st, 4) != 0;
  e->score = ks_st_col_real(st, 5);
  e->started = sqlite3_column_double(st, 6);
  e->finished = ks_st_col_real(st, 7);
}

/* Collects every row of a prepared, bound statement of EVAL_COLS. */
static ks_code eval_rows(ks_store *s, sqlite3_stmt *st, const char *doing,
                         ks_store_eval **rows, size_t *n, ks_err *err) {
  ks_store_eval *v = NULL;
  size_t count = 0, cap = 0;
  ks_code c = KS_OK;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      ks_store_eval *grown = realloc(v, cap * sizeof *v);
      if (!grown) {
        c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
        break;
      }
      v = grown;
    }
    read_eval(st, &v[count++]);
  }
  if (!c && rc != SQLITE_DONE)
    c = ks_st_fail(s, rc, doing, err);
  ks_st_done(st);
  if (c) {
    free(v);
    return c;
  }
  *rows = v;
  *n = count;
  return KS_OK;
}

ks_code ks_store_list_evaluations(ks_store *s, ks_store_eval **rows, size_t *n,
                                  ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_EVAL_LIST, &st, err);
  return c ? c : eval_rows(s, st, "listing evaluations", rows, n, err);
}

ks_code ks_store_top(ks_store *s, size_t limit, ks_store_eval **rows, size_t *n,
                     ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_EVAL_TOP, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, limit > INT64_MAX ? INT64_MAX : (int64_t)limit);
  return eval_rows(s, st, "ranking candidates", rows, n, err);
}

ks_code ks_store_best(ks_store *s, ks_store_eval *eval,
                      ks_store_candidate *cand, bool *found, ks_err *err) {
  *found = false;
  memset(eval, 0, sizeof *eval);
  if (cand)
    memset(cand, 0, sizeof *cand);
  ks_store_eval *rows;
  size_t n;
  ks_code c = ks_store_top(s, 1, &rows, &n, err);
  if (c || n == 0) {
    free(rows);
    return c;
  }
  *eval = rows[0];
  free(rows);
  if (cand && (c = ks_store_get_candidate(s, eval->candidate_id, cand, err)))
    return c;
  *found = true;
  return KS_OK;
}

ks_code ks_store_get_result_json(ks_store *s, int64_t eval_id, char **out,
                                 ks_err *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_EVAL_RESULT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    *out = ks_st_col_dup(st, 0, &oom);
    if (oom)
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INTERNAL, "%s holds no evaluation %lld", s->path,
                   (long long)eval_id);
  } else {
    c = ks_st_fail(s, rc, "reading an evaluation", err);
  }
  ks_st_done(st);
  return c;
}

ks_code ks_store_list_measurements(ks_store *s, int64_t eval_id,
                                   ks_store_measurement **rows, size_t *n,
                                   ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = ks_st_prep(s, ST_MEAS_LIST, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  ks_store_measurement *v = NULL;
  size_t count = 0, cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 8;
      ks_store_measurement *grown = realloc(v, cap * sizeof *v);
      if (!grown) {
        c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
        break;
      }
      v = grown;
    }
    ks_store_measurement *m = &v[count++];
    m->workload = sqlite3_column_int(st, 0);
    ks_st_col_copy(st, 1, m->axes_json, sizeof m->axes_json);
    m->time_ns_median = ks_st_col_real(st, 2);
    m->time_ns_iqr = ks_st_col_real(st, 3);
    m->gbps = ks_st_col_real(st, 4);
    m->roofline_fraction = ks_st_col_real(st, 5);
    m->speedup = ks_st_col_real(st, 6);
  }
  if (!c && rc != SQLITE_DONE)
    c = ks_st_fail(s, rc, "reading measurements", err);
  ks_st_done(st);
  if (c) {
    free(v);
    return c;
  }
  *rows = v;
  *n = count;
  return KS_OK;
}
