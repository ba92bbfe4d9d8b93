/* test_store_refuse.c — the faults a user meets with a run database
 * (src/store/store.c, store_check.c): a text file, a garbled, truncated,
 * foreign or newer database, a run another ksearch holds, a full disk, a run
 * folder of another task, and (issue 13) damaged schemas, all refused with a
 * message naming the file and the fix and, where it matters, untouched; a
 * version 1 database is migrated. Fixture: store_fixture.h. */
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

static char *read_text(const char *path) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = '\0';
  fclose(fp);
  return buf;
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
