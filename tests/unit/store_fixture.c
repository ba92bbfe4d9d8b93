/* store_fixture.c — the store tests' shared fixture (store_fixture.h). */
#include "store_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void fx_init(fixture *f) {
  const char *t = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/ks_store_XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(f->dir));
  ks_err err;
  cr_assert_eq(ks_store_db_path(f->dir, f->db, sizeof f->db, &err), KS_OK);
}

void fx_done(fixture *f) {
  static const char *const suffix[] = {"", "-wal", "-shm", ".lock"};
  char p[700];
  for (size_t i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s%s", f->db, suffix[i]);
    unlink(p);
  }
  rmdir(f->dir);
}

ks_store *open_ok(const char *db, bool create) {
  ks_store *s = NULL;
  ks_err err = {0};
  ks_code c = ks_store_open(db, create, &s, &err);
  cr_assert_eq(c, KS_OK, "open %s: %s", db, err.msg);
  return s;
}

int64_t add_cand(ks_store *s, const char *hash, const char *params,
                 const char *source) {
  int64_t id = 0;
  ks_err err = {0};
  cr_assert_eq(
      ks_store_add_candidate(s, "n1", source, params, hash, &id, NULL, &err),
      KS_OK, "%s", err.msg);
  return id;
}

int64_t add_eval(ks_store *s, int64_t cand, const char *status, bool correct,
                 double score) {
  int64_t e = 0;
  ks_err err = {0};
  cr_assert_eq(ks_store_begin_evaluation(s, cand, "n1", &e, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(ks_store_finish_evaluation(s, e, status, correct, score,
                                          "{\"workloads\":[]}", NULL, 0, &err),
               KS_OK, "%s", err.msg);
  return e;
}

int64_t query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}
