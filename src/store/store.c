/* store.c — opening and closing a run database (DESIGN.md: Store).
 *
 * The schema lives in schema.c, the statements in store_stmt.c, the checks in
 * store_check.c; this file owns the connection: the run lock, the order in
 * which a file is checked (header, integrity, schema) before anything is
 * written, WAL/synchronous/foreign-key/busy settings, creating the tables of
 * a new file and migrating an old one. Writes that belong together (an
 * evaluation and its measurements, the node set) go in one BEGIN IMMEDIATE
 * transaction (store_eval.c, store_run.c); on any failure the transaction is
 * rolled back, so what was committed before stays intact.
 */
#include "store/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- open */

ks_code ks_store_db_path(const char *run_dir, char *out, size_t n,
                         ks_err *err) {
  int w = snprintf(out, n, "%s/%s", run_dir, KS_STORE_FILE);
  if (w < 0 || (size_t)w >= n)
    return ks_err_set(err, KS_ERR_INPUT,
                      "run folder path %s is too long; choose a shorter --out",
                      run_dir);
  return KS_OK;
}

/* flock on "<db>.lock": held while the store is open, released by the kernel
 * when the process dies, so a crashed run never leaves a stale lock. */
static ks_code take_lock(ks_store *s, ks_err *err) {
  char lp[4200];
  snprintf(lp, sizeof lp, "%s.lock", s->path);
  int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return ks_err_set(err, KS_ERR_IO,
                      "cannot create the lock file %s: %s; check that the "
                      "run folder %s exists and is writable",
                      lp, strerror(errno), s->dir);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char pid[32] = "";
    ssize_t r = pread(fd, pid, sizeof pid - 1, 0);
    pid[r > 0 ? r : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    close(fd);
    if (e == EWOULDBLOCK)
      return ks_err_set(err, KS_ERR_INPUT,
                        "another ksearch%s%s%s is using the run folder %s "
                        "(%s is locked); wait for it to finish or choose "
                        "another --out",
                        pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", s->dir,
                        lp);
    return ks_err_set(err, KS_ERR_IO, "cannot lock %s: %s", lp, strerror(e));
  }
  char pid[32];
  int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
    /* The pid is only for messages; the lock itself is held. */
  }
  s->lock_fd = fd;
  return KS_OK;
}

static ks_code exec_sql(ks_store *s, const char *sql, const char *doing,
                        ks_err *err) {
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    return KS_OK;
  ks_code c = ks_st_fail(s, rc, doing, err);
  ks_st_rollback(s);
  return c;
}

static ks_code create_schema(ks_store *s, ks_err *err) {
  char pragmas[128];
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA application_id = %d; PRAGMA user_version = %d; COMMIT;",
           KS_STORE_APPLICATION_ID, KS_STORE_SCHEMA_VERSION);
  ks_code c;
  if ((c = exec_sql(s, "BEGIN IMMEDIATE", "creating the tables", err)) ||
      (c = exec_sql(s, ks_store_schema_sql, "creating the tables", err)) ||
      (c = exec_sql(s, pragmas, "creating the tables", err)))
    return c;
  return KS_OK;
}

static ks_code open_store(const char *db_path, bool create, bool readonly,
                          ks_store **out, ks_err *err) {
  *out = NULL;
  if (!db_path || !db_path[0])
    return ks_err_set(err, KS_ERR_INTERNAL, "store: empty database path");
  if (strlen(db_path) >= sizeof((ks_store *)0)->path)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: path too long; choose a shorter --out", db_path);
  struct stat sb;
  bool exists = stat(db_path, &sb) == 0;
  if (exists && S_ISDIR(sb.st_mode))
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s is a folder, not a ksearch database; give the run "
                      "folder that holds %s",
                      db_path, KS_STORE_FILE);
  if (!exists && (!create || readonly))
    return ks_err_set(err, KS_ERR_INPUT,
                      "no ksearch database at %s; check the folder given "
                      "(it should hold %s from an earlier ksearch run)",
                      db_path, KS_STORE_FILE);

  ks_store *s = calloc(1, sizeof *s);
  if (!s)
    return ks_err_set(err, KS_ERR_NOMEM, "out of memory opening %s", db_path);
  s->lock_fd = -1;
  s->busy_ms = KS_STORE_BUSY_MS;
  snprintf(s->path, sizeof s->path, "%s", db_path);
  snprintf(s->dir, sizeof s->dir, "%s", db_path);
  char *slash = strrchr(s->dir, '/');
  if (!slash)
    snprintf(s->dir, sizeof s->dir, ".");
  else if (slash == s->dir)
    slash[1] = '\0';
  else
    *slash = '\0';

  ks_code c = KS_OK;
  if (!readonly && (c = take_lock(s, err)))
    goto out;

  int flags = readonly
                  ? SQLITE_OPEN_READONLY
                  : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(db_path, &s->db, flags, NULL);
  if (rc != SQLITE_OK) {
    c = ks_st_fail(s, rc, "opening it", err);
    goto out;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, s->busy_ms);

  bool fresh = false, migrate = false;
  if ((c = ks_st_check_header(s, create && !readonly, &fresh, &migrate, err)))
    goto out;
  if (!fresh && ((c = ks_st_quick_check(s, err)) ||
                 (c = ks_st_check_schema(s, migrate, err))))
    goto out;
  if (!readonly) {
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *mode = (const char *)sqlite3_column_text(st, 0);
      rc = mode && strcasecmp(mode, "wal") == 0 ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
      c = ks_st_fail(s, rc, "switching to WAL mode", err);
    sqlite3_finalize(st);
    if (c)
      goto out;
    /* FULL: a committed evaluation survives power loss too; commits are
     * one per evaluation, so the fsync is cheap. */
    if ((c = exec_sql(s, "PRAGMA synchronous = FULL", "configuring", err)))
      goto out;
  }
  if ((c = exec_sql(s, "PRAGMA foreign_keys = ON", "configuring", err)))
    goto out;
  if (fresh && (c = create_schema(s, err)))
    goto out;
  if (migrate && !readonly &&
      ((c = exec_sql(s, "BEGIN IMMEDIATE", "migrating to schema 2", err)) ||
       (c = exec_sql(s, ks_store_migrate_v2_sql, "migrating to schema 2",
                     err)) ||
       (c = exec_sql(s, "COMMIT", "migrating to schema 2", err))))
    goto out;
out:
  if (c) {
    ks_store_close(s);
    return c;
  }
  *out = s;
  return KS_OK;
}

ks_code ks_store_open(const char *db_path, bool create, ks_store **out,
                      ks_err *err) {
  return open_store(db_path, create, false, out, err);
}

ks_code ks_store_open_readonly(const char *db_path, ks_store **out,
                               ks_err *err) {
  return open_store(db_path, false, true, out, err);
}

void ks_store_close(ks_store *s) {
  if (!s)
    return;
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(s->st[i]);
  if (s->db) {
    ks_st_rollback(s);
    sqlite3_close_v2(s->db);
  }
  /* Only after SQLite has closed the file: the lock guards the whole run. */
  if (s->lock_fd >= 0)
    close(s->lock_fd);
  free(s);
}

const char *ks_store_path(const ks_store *s) { return s->path; }

void ks_store_set_busy_timeout(ks_store *s, int ms) {
  s->busy_ms = ms;
  sqlite3_busy_timeout(s->db, ms);
}

sqlite3 *ks_store_handle(ks_store *s) { return s->db; }
