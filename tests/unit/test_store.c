/* test_store.c — the run database (src/store): schema and settings, STRICT
 * types, candidate de-duplication, crash safety under SIGKILL, resume, an
 * evaluation and its measurements committed together. The faults a user
 * meets: test_store_refuse.c; reading back: test_store_query.c; fixture:
 * store_fixture.h.
 */
#include "store/store.h"
#include "store_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

Test(store, schema_created_wal_strict_fk) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  sqlite3 *db = ks_store_handle(s);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL),
               SQLITE_OK);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  cr_assert_eq(query_int(db, "PRAGMA user_version"), KS_STORE_SCHEMA_VERSION);
  cr_assert_eq(query_int(db, "PRAGMA application_id"), KS_STORE_APPLICATION_ID);
  cr_assert_eq(query_int(db, "PRAGMA foreign_keys"), 1);
  const char *tables[] = {"runs",         "task_snapshot", "nodes",
                          "candidates",   "builds",        "evaluations",
                          "measurements", "llm_calls",     "events"};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT strict FROM pragma_table_list WHERE schema = 'main' AND "
             "name = '%s'",
             tables[i]);
    cr_assert_eq(query_int(db, sql), 1, "table %s missing or not STRICT",
                 tables[i]);
  }
  ks_store_close(s);
  /* Reopening an existing database keeps its contents and settings. */
  s = open_ok(f.db, false);
  cr_assert_eq(query_int(ks_store_handle(s), "PRAGMA user_version"),
               KS_STORE_SCHEMA_VERSION);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, strict_rejects_wrong_types_and_dangling_keys) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  sqlite3 *db = ks_store_handle(s);
  int rc = sqlite3_exec(db,
                        "INSERT INTO candidates (source, params_json, hash, "
                        "created) VALUES ('x', '{}', 'h', 'yesterday')",
                        NULL, NULL, NULL);
  cr_assert_eq(rc, SQLITE_CONSTRAINT_DATATYPE, "rc %d: %s", rc,
               sqlite3_errmsg(db));
  rc = sqlite3_exec(db,
                    "INSERT INTO evaluations (candidate_id, status, started) "
                    "VALUES ('abc', 'ok', 1.0)",
                    NULL, NULL, NULL);
  cr_assert_eq(rc, SQLITE_CONSTRAINT_DATATYPE, "rc %d", rc);
  /* A JSON column refuses text that is not JSON. */
  rc = sqlite3_exec(db,
                    "INSERT INTO events (time, kind, json) VALUES (1.0, 'k', "
                    "'{not json')",
                    NULL, NULL, NULL);
  cr_assert_eq(rc & 0xff, SQLITE_CONSTRAINT);
  /* Foreign keys are on: an evaluation of no candidate is refused. */
  int64_t e;
  ks_err err = {0};
  cr_assert_eq(ks_store_begin_evaluation(s, 999, NULL, &e, &err),
               KS_ERR_INTERNAL);
  cr_assert(strstr(err.msg, "FOREIGN KEY") != NULL, "%s", err.msg);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, candidates_are_never_stored_twice) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  int64_t a, b, c, found;
  bool is_new;
  cr_assert_eq(ks_store_add_candidate(s, "n1", "src", "{\"VEC\":8,\"R\":2}",
                                      "h1", &a, &is_new, &err),
               KS_OK, "%s", err.msg);
  cr_assert(is_new);
  cr_assert_gt(a, 0);
  /* Same source hash, same params written differently: the same candidate. */
  cr_assert_eq(ks_store_add_candidate(s, "n2", "src",
                                      "{ \"R\": 2, \"VEC\": 8 }", "h1", &b,
                                      &is_new, &err),
               KS_OK, "%s", err.msg);
  cr_assert_not(is_new);
  cr_assert_eq(b, a);
  cr_assert_eq(
      ks_store_find_candidate(s, "h1", "{\"R\":2,\"VEC\":8}", &found, &err),
      KS_OK);
  cr_assert_eq(found, a);
  cr_assert_eq(ks_store_find_candidate(s, "h1", "{\"VEC\":4}", &found, &err),
               KS_OK);
  cr_assert_eq(found, 0);
  cr_assert_eq(ks_store_add_candidate(s, "n1", "src", "{\"VEC\":4}", "h1", &c,
                                      &is_new, &err),
               KS_OK);
  cr_assert(is_new);
  cr_assert_neq(c, a);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.candidates, 2);
  ks_store_candidate cand;
  cr_assert_eq(ks_store_get_candidate(s, a, &cand, &err), KS_OK);
  cr_assert_str_eq(cand.source, "src");
  cr_assert_str_eq(cand.params_json, "{\"R\":2,\"VEC\":8}");
  cr_assert_str_eq(cand.node_id, "n1");
  ks_store_candidate_free(&cand);
  /* The table itself refuses a duplicate, whatever the caller does. */
  int rc = sqlite3_exec(ks_store_handle(s),
                        "INSERT INTO candidates (source, params_json, hash, "
                        "created) VALUES ('src', '{\"R\":2,\"VEC\":8}', 'h1', "
                        "1.0)",
                        NULL, NULL, NULL);
  cr_assert_eq(rc, SQLITE_CONSTRAINT_UNIQUE);
  cr_assert_eq(
      ks_store_add_candidate(s, NULL, "src", "[1]", "h2", &c, NULL, &err),
      KS_ERR_INTERNAL);
  ks_store_close(s);
  fx_done(&f);
}

static ks_store_measurement meas(int w, double t, double speedup) {
  ks_store_measurement m;
  memset(&m, 0, sizeof m);
  m.workload = w;
  snprintf(m.axes_json, sizeof m.axes_json, "{\"rows\":%d}", w + 1);
  m.time_ns_median = t;
  m.time_ns_iqr = t / 10;
  m.gbps = NAN;
  m.roofline_fraction = 0.5;
  m.speedup = speedup;
  return m;
}

/* Child of the SIGKILL tests: writes, then dies without closing anything.
 * Exit codes other than death by SIGKILL mean the child itself failed. */
static void child_then_kill(const char *db, bool leave_running) {
  ks_store *s;
  ks_err err;
  if (ks_store_open(db, true, &s, &err) != KS_OK)
    _exit(10);
  int64_t c1, c2, e;
  if (ks_store_add_candidate(s, "n1", "a", "{}", "ha", &c1, NULL, &err) ||
      ks_store_add_candidate(s, "n2", "b", "{}", "hb", &c2, NULL, &err))
    _exit(11);
  ks_store_measurement m[2] = {meas(0, 100, 2.0), meas(1, 200, 3.0)};
  if (ks_store_begin_evaluation(s, c1, "n1", &e, &err) ||
      ks_store_finish_evaluation(s, e, "ok", true, 2.449, "{\"w\":[1,2]}", m, 2,
                                 &err))
    _exit(12);
  if (leave_running && ks_store_begin_evaluation(s, c2, "n2", &e, &err))
    _exit(13);
  kill(getpid(), SIGKILL);
  _exit(14);
}

static void run_killed_child(const char *db, bool leave_running) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0)
    child_then_kill(db, leave_running);
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
            "child did not die by SIGKILL (exit %d)",
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

Test(store, finished_evaluation_survives_sigkill) {
  fixture f;
  fx_init(&f);
  run_killed_child(f.db, false);
  /* The dead child's lock is gone with it; its commit is in the WAL. */
  ks_store *s = open_ok(f.db, false);
  ks_err err = {0};
  ks_store_eval *rows;
  size_t n;
  cr_assert_eq(ks_store_list_evaluations(s, &rows, &n, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(rows[0].status, "ok");
  cr_assert(rows[0].correct);
  cr_assert_float_eq(rows[0].score, 2.449, 1e-12);
  cr_assert_str_eq(rows[0].node_id, "n1");
  ks_store_measurement *m;
  size_t nm;
  cr_assert_eq(ks_store_list_measurements(s, rows[0].id, &m, &nm, &err), KS_OK);
  cr_assert_eq(nm, 2);
  cr_assert_float_eq(m[1].time_ns_median, 200, 1e-9);
  cr_assert_float_eq(m[1].speedup, 3.0, 1e-12);
  cr_assert(isnan(m[1].gbps));
  cr_assert_str_eq(m[1].axes_json, "{\"rows\":2}");
  char *res;
  cr_assert_eq(ks_store_get_result_json(s, rows[0].id, &res, &err), KS_OK);
  cr_assert_str_eq(res, "{\"w\":[1,2]}");
  free(res);
  free(m);
  free(rows);
  int64_t *ids;
  cr_assert_eq(ks_store_abandon_running(s, &ids, &n, &err), KS_OK);
  cr_assert_eq(n, 0);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, running_evaluation_of_killed_run_is_interrupted_on_resume) {
  fixture f;
  fx_init(&f);
  run_killed_child(f.db, true);
  ks_store *s = open_ok(f.db, false);
  ks_err err = {0};
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.running, 1);
  cr_assert_eq(k.finished, 1);
  int64_t *ids;
  size_t n;
  cr_assert_eq(ks_store_abandon_running(s, &ids, &n, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(n, 1);
  int64_t cb;
  cr_assert_eq(ks_store_find_candidate(s, "hb", "{}", &cb, &err), KS_OK);
  cr_assert_eq(ids[0], cb, "the interrupted candidate is the one to redo");
  free(ids);
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.running, 0);
  cr_assert_eq(k.interrupted, 1);
  cr_assert_eq(k.finished, 1, "finished evaluations are kept");
  cr_assert_eq(k.correct, 1);
  ks_store_eval *rows;
  cr_assert_eq(ks_store_list_evaluations(s, &rows, &n, &err), KS_OK);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(rows[0].status, "ok");
  free(rows);
  cr_assert_eq(ks_store_abandon_running(s, NULL, &n, &err), KS_OK);
  cr_assert_eq(n, 0);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, evaluation_and_measurements_commit_together) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  int64_t c = add_cand(s, "h", "{}", "src"), e;
  cr_assert_eq(ks_store_begin_evaluation(s, c, NULL, &e, &err), KS_OK);
  ks_store_measurement m[2] = {meas(0, 10, 1), meas(1, 20, 1)};
  snprintf(m[1].axes_json, sizeof m[1].axes_json, "{broken");
  cr_assert_eq(
      ks_store_finish_evaluation(s, e, "ok", true, 1.0, "{}", m, 2, &err),
      KS_ERR_INTERNAL);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.running, 1, "a failed finish leaves the evaluation running");
  cr_assert_eq(
      query_int(ks_store_handle(s), "SELECT count(*) FROM measurements"), 0,
      "no half-saved measurements");
  snprintf(m[1].axes_json, sizeof m[1].axes_json, "{}");
  cr_assert_eq(
      ks_store_finish_evaluation(s, e, "ok", true, 1.0, "{}", m, 2, &err),
      KS_OK, "%s", err.msg);
  cr_assert_eq(
      query_int(ks_store_handle(s), "SELECT count(*) FROM measurements"), 2);
  /* A finished evaluation cannot be finished again, nor with 'running'. */
  cr_assert_eq(
      ks_store_finish_evaluation(s, e, "wrong", false, 0, "{}", NULL, 0, &err),
      KS_ERR_INTERNAL);
  cr_assert_eq(ks_store_finish_evaluation(s, e, "running", false, 0, NULL, NULL,
                                          0, &err),
               KS_ERR_INTERNAL);
  ks_store_close(s);
  fx_done(&f);
}
