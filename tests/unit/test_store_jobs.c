/* test_store_jobs.c — the store's job ids (src/store/jobs.c): a job id is
 * unique, a finished job's result is recognised as a duplicate, running
 * evaluations are listed for a resumed run, and a version 1 database is
 * migrated to version 2 keeping its rows. */
#include "store/store.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256], g_db[300];

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ks_store_jobs_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/ksearch.db", g_dir);
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  cr_assert_eq(system(cmd), 0);
}

static int64_t one_candidate(ks_store *s) {
  int64_t id;
  ks_err err;
  cr_assert_eq(ks_store_add_candidate(s, "n1", "void f(void){}", "{}",
                                      "0011223344556677", &id, NULL, &err),
               KS_OK, "%s", err.msg);
  return id;
}

static int64_t query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

TestSuite(store_jobs, .init = setup, .fini = teardown);

Test(store_jobs, a_result_is_recorded_once_per_job) {
  ks_store *s;
  ks_err err;
  cr_assert_eq(ks_store_open(g_db, true, &s, &err), KS_OK, "%s", err.msg);
  int64_t c = one_candidate(s);
  ks_store_job j;
  cr_assert_eq(ks_store_begin_job(s, c, "n1", "run42", &j, &err), KS_OK, "%s",
               err.msg);
  char want[64];
  snprintf(want, sizeof want, "run42-%lld", (long long)j.eval_id);
  cr_assert_str_eq(j.job_id, want);
  ks_store_job k;
  ks_store_job_state st;
  cr_assert_eq(ks_store_job_lookup(s, j.job_id, &k, &st, &err), KS_OK);
  cr_assert_eq(st, KS_STORE_JOB_RUNNING);
  cr_assert_eq(k.eval_id, j.eval_id);
  cr_assert_eq(k.candidate_id, c);
  cr_assert_str_eq(k.node_id, "n1");
  cr_assert_eq(ks_store_finish_evaluation(s, j.eval_id, "ok", true, 2.0, "{}",
                                          NULL, 0, &err),
               KS_OK, "%s", err.msg);
  cr_assert_eq(ks_store_job_lookup(s, j.job_id, &k, &st, &err), KS_OK);
  cr_assert_eq(st, KS_STORE_JOB_DONE);
  /* the second delivery cannot finish it again */
  cr_assert_neq(ks_store_finish_evaluation(s, j.eval_id, "ok", true, 3.0, "{}",
                                           NULL, 0, &err),
                KS_OK);
  cr_assert_eq(ks_store_job_lookup(s, "run42-999", &k, &st, &err), KS_OK);
  cr_assert_eq(st, KS_STORE_JOB_UNKNOWN);
  /* job ids are unique in the table itself */
  char sql[256];
  snprintf(sql, sizeof sql,
           "INSERT INTO evaluations (candidate_id, status, started, job_id) "
           "VALUES (%lld, 'running', 0, '%s')",
           (long long)c, j.job_id);
  cr_assert_neq(sqlite3_exec(ks_store_handle(s), sql, NULL, NULL, NULL),
                SQLITE_OK);
  ks_store_close(s);
}

Test(store_jobs, running_evaluations_are_listed_with_job_ids) {
  ks_store *s;
  ks_err err;
  cr_assert_eq(ks_store_open(g_db, true, &s, &err), KS_OK, "%s", err.msg);
  int64_t c = one_candidate(s);
  int64_t local;
  cr_assert_eq(ks_store_begin_evaluation(s, c, "n2", &local, &err), KS_OK);
  ks_store_job j, done;
  cr_assert_eq(ks_store_begin_job(s, c, "n3", "r", &j, &err), KS_OK);
  cr_assert_eq(ks_store_begin_job(s, c, "n4", "r", &done, &err), KS_OK);
  cr_assert_eq(ks_store_finish_evaluation(s, done.eval_id, "crash", false, 0,
                                          "{}", NULL, 0, &err),
               KS_OK);
  ks_store_job *rows;
  size_t n;
  cr_assert_eq(ks_store_running_jobs(s, "r", &rows, &n, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(n, 2);
  char want[64];
  snprintf(want, sizeof want, "r-%lld", (long long)local);
  cr_assert_str_eq(rows[0].job_id, want); /* a local run's gets one */
  cr_assert_str_eq(rows[0].node_id, "n2");
  cr_assert_str_eq(rows[1].job_id, j.job_id);
  free(rows);
  ks_store_job k;
  ks_store_job_state st;
  cr_assert_eq(ks_store_job_lookup(s, want, &k, &st, &err), KS_OK);
  cr_assert_eq(st, KS_STORE_JOB_RUNNING);
  ks_store_close(s);
}

Test(store_jobs, version_1_database_is_migrated) {
  ks_store *s;
  ks_err err;
  cr_assert_eq(ks_store_open(g_db, true, &s, &err), KS_OK, "%s", err.msg);
  int64_t c = one_candidate(s);
  int64_t e;
  cr_assert_eq(ks_store_begin_evaluation(s, c, "n1", &e, &err), KS_OK);
  /* what ksearch with schema 1 wrote: no job_id column */
  cr_assert_eq(sqlite3_exec(ks_store_handle(s),
                            "DROP INDEX evaluations_job; ALTER TABLE "
                            "evaluations DROP COLUMN job_id; PRAGMA "
                            "user_version = 1;",
                            NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(ks_store_handle(s)));
  ks_store_close(s);
  cr_assert_eq(ks_store_open_readonly(g_db, &s, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(query_int(ks_store_handle(s), "PRAGMA user_version"), 1);
  ks_store_close(s);
  cr_assert_eq(ks_store_open(g_db, false, &s, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(query_int(ks_store_handle(s), "PRAGMA user_version"), 2);
  cr_assert_eq(
      query_int(ks_store_handle(s), "SELECT count(*) FROM evaluations"), 1);
  ks_store_job j;
  cr_assert_eq(ks_store_begin_job(s, c, "n1", "m", &j, &err), KS_OK, "%s",
               err.msg);
  ks_store_close(s);
}
