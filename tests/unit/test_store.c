/* test_store.c — the run database (src/store): schema and settings, STRICT
 * types, candidate de-duplication, crash safety under SIGKILL, resume, and
 * the faults a user meets (corrupt file, locked run, disk full, wrong task).
 */
#include "store/store.h"

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

typedef struct fixture {
  char dir[512];
  char db[600];
} fixture;

static void fx_init(fixture *f) {
  const char *t = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/ks_store_XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(f->dir));
  ks_err err;
  cr_assert_eq(ks_store_db_path(f->dir, f->db, sizeof f->db, &err), KS_OK);
}

static void fx_done(fixture *f) {
  static const char *const suffix[] = {"", "-wal", "-shm", ".lock"};
  char p[700];
  for (size_t i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s%s", f->db, suffix[i]);
    unlink(p);
  }
  rmdir(f->dir);
}

static ks_store *open_ok(const char *db, bool create) {
  ks_store *s = NULL;
  ks_err err = {0};
  ks_code c = ks_store_open(db, create, &s, &err);
  cr_assert_eq(c, KS_OK, "open %s: %s", db, err.msg);
  return s;
}

static int64_t add_cand(ks_store *s, const char *hash, const char *params,
                        const char *source) {
  int64_t id = 0;
  ks_err err = {0};
  cr_assert_eq(
      ks_store_add_candidate(s, "n1", source, params, hash, &id, NULL, &err),
      KS_OK, "%s", err.msg);
  return id;
}

static int64_t add_eval(ks_store *s, int64_t cand, const char *status,
                        bool correct, double score) {
  int64_t e = 0;
  ks_err err = {0};
  cr_assert_eq(ks_store_begin_evaluation(s, cand, "n1", &e, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(ks_store_finish_evaluation(s, e, status, correct, score,
                                          "{\"workloads\":[]}", NULL, 0, &err),
               KS_OK, "%s", err.msg);
  return e;
}

static int64_t query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static char *read_text(const char *path) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = '\0';
  fclose(fp);
  return buf;
}

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

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp);
  fputs(text, fp);
  fclose(fp);
}

Test(store, text_file_is_not_a_ksearch_database) {
  fixture f;
  fx_init(&f);
  const char *text = "these are my notes, not a database\n";
  write_file(f.db, text);
  ks_store *s = (ks_store *)1;
  ks_err err = {0};
  cr_assert_eq(ks_store_open(f.db, true, &s, &err), KS_ERR_INPUT);
  cr_assert_null(s);
  cr_assert(strstr(err.msg, f.db) != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "not a ksearch database") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "move it away or choose another --out") != NULL,
            "%s", err.msg);
  cr_assert_str_eq(read_text(f.db), text, "the file is left as it was");
  cr_assert_eq(ks_store_open_readonly(f.db, &s, &err), KS_ERR_INPUT);
  fx_done(&f);
}

/* A database with enough rows to span many pages. */
static void make_filled_db(const char *db) {
  ks_store *s = open_ok(db, true);
  char *big = malloc(40000);
  memset(big, 'x', 39999);
  big[39999] = '\0';
  for (int i = 0; i < 6; i++) {
    char h[16];
    snprintf(h, sizeof h, "h%d", i);
    big[0] = (char)('a' + i);
    add_eval(s, add_cand(s, h, "{}", big), "ok", true, 1.0 + i);
  }
  free(big);
  ks_store_close(s); /* checkpoints the WAL into the file */
}

Test(store, garbled_database_is_reported_corrupt) {
  fixture f;
  fx_init(&f);
  make_filled_db(f.db);
  FILE *fp = fopen(f.db, "r+b");
  cr_assert_not_null(fp);
  char junk[4096];
  memset(junk, 0xa5, sizeof junk);
  for (long page = 1; page < 6; page++) { /* pages 2..6: table roots */
    fseek(fp, page * 4096, SEEK_SET);
    fwrite(junk, 1, sizeof junk, fp);
  }
  fclose(fp);
  ks_store *s;
  ks_err err = {0};
  cr_assert_eq(ks_store_open(f.db, false, &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "corrupt") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "choose another --out") != NULL, "%s", err.msg);
  fx_done(&f);
}

Test(store, truncated_database_is_reported_corrupt) {
  fixture f;
  fx_init(&f);
  make_filled_db(f.db);
  struct stat sb;
  cr_assert_eq(stat(f.db, &sb), 0);
  cr_assert_gt(sb.st_size, 20 * 4096);
  cr_assert_eq(truncate(f.db, sb.st_size / 3), 0);
  ks_store *s;
  ks_err err = {0};
  cr_assert_eq(ks_store_open(f.db, false, &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "corrupt") != NULL, "%s", err.msg);
  fx_done(&f);
}

Test(store, foreign_or_newer_database_is_refused) {
  fixture f;
  fx_init(&f);
  sqlite3 *raw;
  cr_assert_eq(sqlite3_open(f.db, &raw), SQLITE_OK);
  cr_assert_eq(
      sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", NULL, NULL, NULL),
      SQLITE_OK);
  sqlite3_close(raw);
  ks_store *s;
  ks_err err = {0};
  cr_assert_eq(ks_store_open(f.db, true, &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "not a ksearch database") != NULL, "%s", err.msg);
  fx_done(&f);

  fx_init(&f);
  s = open_ok(f.db, true);
  cr_assert_eq(sqlite3_exec(ks_store_handle(s), "PRAGMA user_version = 99",
                            NULL, NULL, NULL),
               SQLITE_OK);
  ks_store_close(s);
  cr_assert_eq(ks_store_open(f.db, false, &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "newer ksearch") != NULL, "%s", err.msg);
  fx_done(&f);

  fx_init(&f);
  cr_assert_eq(ks_store_open(f.db, false, &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "no ksearch database") != NULL, "%s", err.msg);
  fx_done(&f);
}

Test(store, locked_database_names_the_other_ksearch) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  int64_t c = add_cand(s, "h", "{}", "src"), e;
  ks_store_set_busy_timeout(s, 100);

  /* A second writer on the same run is refused at once (the run lock). */
  ks_store *s2 = (ks_store *)1;
  cr_assert_eq(ks_store_open(f.db, false, &s2, &err), KS_ERR_INPUT);
  cr_assert_null(s2);
  cr_assert(strstr(err.msg, "another ksearch") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "is using the run folder") != NULL, "%s", err.msg);

  /* Another connection holding the write lock beyond the busy timeout. */
  sqlite3 *raw;
  cr_assert_eq(sqlite3_open(f.db, &raw), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(raw,
                            "BEGIN EXCLUSIVE; INSERT INTO events (time, kind, "
                            "json) VALUES (1.0, 'x', '{}')",
                            NULL, NULL, NULL),
               SQLITE_OK);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cr_assert_eq(ks_store_begin_evaluation(s, c, NULL, &e, &err), KS_ERR_INPUT);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double waited = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  cr_assert_geq(waited, 0.09, "it waited for the busy timeout");
  cr_assert(strstr(err.msg, "another ksearch is using the run folder") != NULL,
            "%s", err.msg);
  cr_assert(strstr(err.msg, f.dir) != NULL, "%s", err.msg);

  /* Readers (report, show) still work while the run is busy. */
  ks_store *ro;
  cr_assert_eq(ks_store_open_readonly(f.db, &ro, &err), KS_OK, "%s", err.msg);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(ro, &k, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(k.candidates, 1);
  ks_store_close(ro);

  cr_assert_eq(sqlite3_exec(raw, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  cr_assert_eq(ks_store_begin_evaluation(s, c, NULL, &e, &err), KS_OK, "%s",
               err.msg);
  ks_store_close(s);
  /* Closed: the run folder is free again. */
  s = open_ok(f.db, false);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, disk_full_is_an_io_error_and_keeps_committed_data) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  int64_t c = add_cand(s, "h0", "{\"V\":1}", "kept source");
  add_eval(s, c, "ok", true, 1.5);
  int64_t running;
  cr_assert_eq(ks_store_begin_evaluation(s, c, NULL, &running, &err), KS_OK);
  sqlite3 *db = ks_store_handle(s);
  int64_t pages = query_int(db, "PRAGMA page_count");
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)pages);
  cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);

  size_t big_n = 200000;
  char *big = malloc(big_n + 16);
  memset(big, 'y', big_n);
  big[big_n] = '\0';
  int64_t id;
  cr_assert_eq(
      ks_store_add_candidate(s, NULL, big, "{}", "h1", &id, NULL, &err),
      KS_ERR_IO);
  cr_assert(strstr(err.msg, "disk full") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, f.db) != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "--resume") != NULL, "%s", err.msg);

  /* A big result that does not fit: the evaluation stays 'running'. */
  snprintf(big, big_n + 16, "{\"log\":\"");
  memset(big + 8, 'z', big_n - 10);
  snprintf(big + big_n - 2, 16, "\"}");
  cr_assert_eq(ks_store_finish_evaluation(s, running, "ok", true, 9.0, big,
                                          NULL, 0, &err),
               KS_ERR_IO, "%s", err.msg);
  cr_assert(strstr(err.msg, "disk full") != NULL, "%s", err.msg);
  free(big);
  ks_store_close(s);

  s = open_ok(f.db, false);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.candidates, 1);
  cr_assert_eq(k.finished, 1);
  cr_assert_eq(k.running, 1);
  ks_store_candidate cand;
  cr_assert_eq(ks_store_get_candidate(s, c, &cand, &err), KS_OK);
  cr_assert_str_eq(cand.source, "kept source");
  ks_store_candidate_free(&cand);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, run_folder_of_another_task_is_refused) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  cr_assert_eq(ks_store_check_task(s, "rmsnorm", "aaaa", &err), KS_OK,
               "nothing recorded yet");
  cr_assert_eq(
      ks_store_put_run(s, "rmsnorm", "aaaa", "c", 7, "{\"budget\":10}", &err),
      KS_OK, "%s", err.msg);
  cr_assert_eq(ks_store_check_task(s, "rmsnorm", "aaaa", &err), KS_OK);
  cr_assert_eq(ks_store_check_task(s, "softmax", "bbbb", &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "'rmsnorm'") && strstr(err.msg, "'softmax'"), "%s",
            err.msg);
  cr_assert(strstr(err.msg, f.dir) != NULL, "%s", err.msg);
  cr_assert_eq(ks_store_check_task(s, "rmsnorm", "cccc", &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "changed") != NULL, "%s", err.msg);
  cr_assert_eq(ks_store_put_run(s, "softmax", "bbbb", "c", 7, NULL, &err),
               KS_ERR_INPUT);

  cr_assert_eq(
      ks_store_put_run(s, "rmsnorm", "aaaa", "c", 8, "{\"budget\":20}", &err),
      KS_OK);
  cr_assert_eq(ks_store_set_stopped(s, "budget", &err), KS_OK);
  ks_store_run r;
  bool found;
  cr_assert_eq(ks_store_get_run(s, &r, &found, &err), KS_OK);
  cr_assert(found);
  cr_assert_str_eq(r.task_name, "rmsnorm");
  cr_assert_str_eq(r.backend, "c");
  cr_assert_eq(r.seed, 8);
  cr_assert_str_eq(r.config_json, "{\"budget\":20}");
  cr_assert_str_eq(r.stopped_because, "budget");
  cr_assert_leq(r.created, r.updated);
  ks_store_run_free(&r);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, best_and_top_rank_correct_evaluations) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  ks_store_eval best;
  ks_store_candidate cand;
  bool found = true;
  cr_assert_eq(ks_store_best(s, &best, &cand, &found, &err), KS_OK);
  cr_assert_not(found);
  int64_t c1 = add_cand(s, "h1", "{}", "one");
  int64_t c2 = add_cand(s, "h2", "{}", "two");
  int64_t c3 = add_cand(s, "h3", "{}", "three");
  add_eval(s, c1, "ok", true, 1.5);
  int64_t e2 = add_eval(s, c2, "ok", true, 3.0);
  add_eval(s, c3, "wrong", false, 5.0); /* fast but wrong: never best */
  add_eval(s, c1, "ok", true, 2.0);     /* c1 measured again */
  int64_t running;
  cr_assert_eq(ks_store_begin_evaluation(s, c3, NULL, &running, &err), KS_OK);

  cr_assert_eq(ks_store_best(s, &best, &cand, &found, &err), KS_OK, "%s",
               err.msg);
  cr_assert(found);
  cr_assert_eq(best.id, e2);
  cr_assert_eq(best.candidate_id, c2);
  cr_assert_float_eq(best.score, 3.0, 1e-12);
  cr_assert_str_eq(cand.source, "two");
  ks_store_candidate_free(&cand);

  ks_store_eval *rows;
  size_t n;
  cr_assert_eq(ks_store_top(s, 10, &rows, &n, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(n, 2, "one row per candidate, correct ones only");
  cr_assert_eq(rows[0].candidate_id, c2);
  cr_assert_eq(rows[1].candidate_id, c1);
  cr_assert_float_eq(rows[1].score, 2.0, 1e-12);
  free(rows);
  cr_assert_eq(ks_store_top(s, 1, &rows, &n, &err), KS_OK);
  cr_assert_eq(n, 1);
  free(rows);

  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.finished, 4);
  cr_assert_eq(k.correct, 3);
  cr_assert_eq(k.running, 1);
  cr_assert_eq(ks_store_list_evaluations(s, &rows, &n, &err), KS_OK);
  cr_assert_eq(n, 4);
  for (size_t i = 1; i < n; i++)
    cr_assert_lt(rows[i - 1].id, rows[i].id, "in the order they ran");
  cr_assert_str_eq(rows[2].status, "wrong");
  cr_assert_not(rows[2].correct);
  free(rows);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, nodes_snapshot_events_and_llm_calls) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  cr_assert_eq(ks_store_put_node(s, "root", "{\"id\":\"root\"}", &err), KS_OK);
  cr_assert_eq(ks_store_put_node(s, "n1", "{\"id\":\"n1\",\"p\":1}", &err),
               KS_OK);
  cr_assert_eq(ks_store_put_node(s, "n1", "{\"id\":\"n1\",\"p\":2}", &err),
               KS_OK);
  json_t *nodes;
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  cr_assert_eq(
      json_integer_value(json_object_get(json_array_get(nodes, 1), "p")), 2);
  json_decref(nodes);
  json_t *repl =
      json_pack("[{s:s},{s:s,s:i}]", "id", "root", "id", "n2", "p", 5);
  cr_assert_eq(ks_store_replace_nodes(s, repl, &err), KS_OK, "%s", err.msg);
  json_decref(repl);
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  cr_assert_str_eq(
      json_string_value(json_object_get(json_array_get(nodes, 1), "id")), "n2");
  json_decref(nodes);
  repl = json_pack("[{s:i}]", "p", 1); /* no id: refused, old set kept */
  cr_assert_eq(ks_store_replace_nodes(s, repl, &err), KS_ERR_INTERNAL);
  json_decref(repl);
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  json_decref(nodes);

  char *tj, *ref;
  cr_assert_eq(ks_store_get_task_snapshot(s, &tj, &ref, &err), KS_ERR_INPUT);
  cr_assert_eq(
      ks_store_put_task_snapshot(s, "{\"name\":\"t\"}", "void f(){}", &err),
      KS_OK);
  cr_assert_eq(ks_store_get_task_snapshot(s, &tj, &ref, &err), KS_OK);
  cr_assert_str_eq(tj, "{\"name\":\"t\"}");
  cr_assert_str_eq(ref, "void f(){}");
  free(tj);
  free(ref);

  cr_assert_eq(ks_store_add_event(s, "start", "{\"budget\":3}", &err), KS_OK);
  cr_assert_eq(ks_store_add_event(s, "stop", NULL, &err), KS_OK);
  cr_assert_eq(ks_store_add_event(s, "bad", "{oops", &err), KS_ERR_INTERNAL);

  ks_store_llm_call call = {
      .role = "coder",
      .model = "m",
      .request_json =
          "{\"api_key\":\"abc123\",\"headers\":{\"Authorization\":\"Bearer "
          "tok\"},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
          "\"extra\":[\"sk-abcdefghijklmnopqrstuvwxyz\"],\"max_tokens\":9}",
      .response_text = "hello",
      .status = "ok",
      .prompt_tokens = 10,
      .completion_tokens = -1,
      .latency_s = 0.25};
  int64_t id;
  cr_assert_eq(ks_store_add_llm_call(s, &call, &id, &err), KS_OK, "%s",
               err.msg);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(ks_store_handle(s),
                                  "SELECT request_json, completion_tokens "
                                  "FROM llm_calls WHERE id = ?",
                                  -1, &st, NULL),
               SQLITE_OK);
  sqlite3_bind_int64(st, 1, id);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  const char *stored = (const char *)sqlite3_column_text(st, 0);
  cr_assert_null(strstr(stored, "abc123"), "%s", stored);
  cr_assert_null(strstr(stored, "Bearer"), "%s", stored);
  cr_assert_null(strstr(stored, "sk-abc"), "%s", stored);
  cr_assert(strstr(stored, "\"content\":\"hi\"") != NULL, "%s", stored);
  cr_assert(strstr(stored, "\"max_tokens\":9") != NULL, "%s", stored);
  cr_assert_eq(sqlite3_column_type(st, 1), SQLITE_NULL);
  sqlite3_finalize(st);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.llm_calls, 1);
  ks_store_close(s);
  fx_done(&f);
}

/* ---------------------------------------------- issue 13: damaged schemas */

static char *file_bytes(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp);
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *b = malloc((size_t)len + 1);
  cr_assert_eq(fread(b, 1, (size_t)len, fp), (size_t)len);
  fclose(fp);
  *n = (size_t)len;
  return b;
}

/* Builds a good store, damages it with sql, and expects every open to refuse
 * it (exit 2) naming want, with the file's bytes unchanged. */
static void refuse_damaged(const char *sql, const char *want) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  int64_t c = add_cand(s, "h1", "{}", "void k(void) {}");
  add_eval(s, c, "ok", true, 2.0);
  ks_store_close(s);
  sqlite3 *raw;
  cr_assert_eq(sqlite3_open(f.db, &raw), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s",
               sql, sqlite3_errmsg(raw));
  cr_assert_eq(
      sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
      SQLITE_OK);
  sqlite3_close(raw);
  size_t n0, n1;
  char *before = file_bytes(f.db, &n0);
  ks_err err = {0};
  cr_expect_eq(ks_store_open(f.db, false, &s, &err), KS_ERR_INPUT, "%s", sql);
  cr_expect_eq(ks_exit_code(err.code), 2);
  cr_expect(strstr(err.msg, "damaged") != NULL, "%s: %s", sql, err.msg);
  cr_expect(strstr(err.msg, want) != NULL, "want %s in: %s", want, err.msg);
  cr_expect(strstr(err.msg, f.db) != NULL, "names the file: %s", err.msg);
  memset(&err, 0, sizeof err);
  cr_expect_eq(ks_store_open_readonly(f.db, &s, &err), KS_ERR_INPUT, "%s", sql);
  char *after = file_bytes(f.db, &n1);
  cr_expect(n0 == n1 && !memcmp(before, after, n0), "file untouched: %s", sql);
  free(before);
  free(after);
  fx_done(&f);
}

Test(store, dropped_tables_are_refused_untouched) {
  refuse_damaged("DROP TABLE llm_calls", "missing table llm_calls");
  refuse_damaged("PRAGMA foreign_keys=OFF; DROP TABLE runs", "runs");
  refuse_damaged("PRAGMA foreign_keys=OFF; DROP TABLE candidates",
                 "candidates");
  refuse_damaged("DROP INDEX evaluations_status", "evaluations_status");
}

Test(store, altered_or_extra_tables_are_refused) {
  refuse_damaged("ALTER TABLE events ADD COLUMN extra TEXT",
                 "changed table events");
  refuse_damaged("CREATE TABLE photos (id INTEGER)", "unexpected table photos");
}

Test(store, dangling_candidate_id_is_refused) {
  refuse_damaged("PRAGMA foreign_keys=OFF; UPDATE evaluations SET "
                 "candidate_id = 999",
                 "evaluations");
}

/* A version-1 file is checked against the version-1 form, and once migrated
 * (ALTER TABLE rewrites the stored CREATE text) it still passes the check on
 * every later open: the check compares columns, not text. */
Test(store, migrated_version_1_database_reopens) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  add_eval(s, add_cand(s, "h1", "{}", "void k(void) {}"), "ok", true, 2.0);
  cr_assert_eq(sqlite3_exec(ks_store_handle(s),
                            "DROP INDEX evaluations_job; ALTER TABLE "
                            "evaluations DROP COLUMN job_id; PRAGMA "
                            "user_version = 1;",
                            NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(ks_store_handle(s)));
  ks_store_close(s);
  ks_err err = {0};
  cr_assert_eq(ks_store_open_readonly(f.db, &s, &err), KS_OK, "v1: %s",
               err.msg);
  ks_store_close(s);
  s = open_ok(f.db, false); /* migrates */
  cr_assert_eq(query_int(ks_store_handle(s), "PRAGMA user_version"),
               KS_STORE_SCHEMA_VERSION);
  ks_store_close(s);
  s = open_ok(f.db, false); /* the migrated text passes too */
  ks_store_close(s);
  cr_assert_eq(ks_store_open_readonly(f.db, &s, &err), KS_OK, "%s", err.msg);
  ks_store_close(s);
  fx_done(&f);
}
