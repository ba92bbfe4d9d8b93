/* store.c — opening, checking and querying a run database (DESIGN.md: Store).
 *
 * The schema lives in schema.c; this file owns the connection: the run lock,
 * the checks that refuse foreign, corrupt or newer databases before anything
 * is written, WAL/foreign-key/busy settings, the cached prepared statements,
 * and the translation of SQLite failures into messages that name the file and
 * the fix. Writes that belong together (an evaluation and its measurements,
 * the node set) go in one BEGIN IMMEDIATE transaction; on any failure the
 * transaction is rolled back, so what was committed before stays intact.
 */
#include "store/store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Prepared once per store, on first use. */
enum {
  ST_BEGIN,
  ST_COMMIT,
  ST_RUN_GET,
  ST_RUN_PUT,
  ST_RUN_STOP,
  ST_SNAP_PUT,
  ST_SNAP_GET,
  ST_NODE_PUT,
  ST_NODE_CLEAR,
  ST_NODE_LIST,
  ST_CAND_INSERT,
  ST_CAND_FIND,
  ST_CAND_GET,
  ST_BUILD_INSERT,
  ST_EVAL_BEGIN,
  ST_EVAL_FINISH,
  ST_MEAS_INSERT,
  ST_EVAL_RUNNING,
  ST_EVAL_ABANDON,
  ST_COUNTS,
  ST_EVAL_LIST,
  ST_EVAL_TOP,
  ST_EVAL_RESULT,
  ST_MEAS_LIST,
  ST_LLM_INSERT,
  ST_EVENT_INSERT,
  ST_LLM_LIST,
  ST_EVENT_LIST,
  ST_COUNT
};

#define FINISHED "status NOT IN ('running', 'interrupted')"
#define EVAL_COLS                                                              \
  "id, candidate_id, node_id, status, correct, score, started, finished"

static const char *const SQL[ST_COUNT] = {
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

struct ks_store {
  sqlite3 *db;
  char path[4096];
  char dir[4096]; /* the run folder, for messages */
  int busy_ms;
  int lock_fd; /* -1 when read-only */
  sqlite3_stmt *st[ST_COUNT];
};

static double now_unix(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- errors */

/* Turns an SQLite failure into a message naming the file and the fix. Call
 * before resetting statements or rolling back (they overwrite errmsg). */
static ks_code fail(ks_store *s, int rc, const char *doing, ks_err *err) {
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

static void rollback(ks_store *s) {
  if (!sqlite3_get_autocommit(s->db))
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ------------------------------------------------------- statement helpers */

static ks_code prep(ks_store *s, int id, sqlite3_stmt **out, ks_err *err) {
  if (!s->st[id]) {
    int rc = sqlite3_prepare_v3(s->db, SQL[id], -1, SQLITE_PREPARE_PERSISTENT,
                                &s->st[id], NULL);
    if (rc != SQLITE_OK) {
      s->st[id] = NULL;
      return fail(s, rc, "preparing a query", err);
    }
  }
  *out = s->st[id];
  return KS_OK;
}

static void done(sqlite3_stmt *st) {
  if (st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
}

static void bind_text(sqlite3_stmt *st, int i, const char *v) {
  if (v)
    sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

/* NaN and infinities are not numbers SQL can keep; they become NULL. */
static void bind_real(sqlite3_stmt *st, int i, double v) {
  if (isfinite(v))
    sqlite3_bind_double(st, i, v);
  else
    sqlite3_bind_null(st, i);
}

static double col_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL
             ? NAN
             : sqlite3_column_double(st, i);
}

/* A malloc'd copy of a text column (NULL for NULL); *oom set on failure. */
static char *col_dup(sqlite3_stmt *st, int i, bool *oom) {
  const unsigned char *t = sqlite3_column_text(st, i);
  if (!t)
    return NULL;
  char *d = strdup((const char *)t);
  if (!d)
    *oom = true;
  return d;
}

static void col_copy(sqlite3_stmt *st, int i, char *out, size_t n) {
  const unsigned char *t = sqlite3_column_text(st, i);
  snprintf(out, n, "%s", t ? (const char *)t : "");
}

/* Runs a statement that returns no rows, then resets it. */
static ks_code run_stmt(ks_store *s, sqlite3_stmt *st, const char *doing,
                        ks_err *err) {
  int rc = sqlite3_step(st);
  ks_code c = KS_OK;
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    c = fail(s, rc, doing, err);
  done(st);
  return c;
}

static ks_code tx_begin(ks_store *s, const char *doing, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_BEGIN, &st, err);
  return c ? c : run_stmt(s, st, doing, err);
}

static ks_code tx_commit(ks_store *s, const char *doing, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_COMMIT, &st, err);
  if (!c)
    c = run_stmt(s, st, doing, err);
  if (c)
    rollback(s);
  return c;
}

static ks_code need(const void *p, const char *what, ks_err *err) {
  if (!p)
    return ks_err_set(err, KS_ERR_INTERNAL, "store: %s must not be NULL", what);
  return KS_OK;
}

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

static ks_code pragma_int(ks_store *s, const char *sql, int64_t *out,
                          ks_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  ks_code c = rc == SQLITE_OK ? KS_OK : fail(s, rc, "reading its header", err);
  sqlite3_finalize(st);
  return c;
}

/* PRAGMA quick_check: finds garbled or truncated pages now, before a search
 * starts writing into a broken file. */
static ks_code quick_check(ks_store *s, ks_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(3)", -1, &st, NULL);
  char msg[1024] = "";
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(st, 0);
      if (t && strcmp(t, "ok") != 0) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, "%s%s", l ? "; " : "", t);
      }
    }
  }
  ks_code c = KS_OK;
  if (rc != SQLITE_DONE)
    c = fail(s, rc, "checking its integrity", err);
  else if (msg[0])
    c = ks_err_set(err, KS_ERR_INPUT,
                   "%s is corrupt: %s; move it away (`sqlite3 %s .recover` "
                   "may save its results) or choose another --out",
                   s->path, msg, s->path);
  sqlite3_finalize(st);
  return c;
}

/* Decides from the header whether this is a ksearch database we can use,
 * an empty file to create one in, or something to refuse. Reads only. */
static ks_code check_header(ks_store *s, bool create, bool *fresh,
                            bool *migrate, ks_err *err) {
  int64_t app = 0, ver = 0, objects = 0;
  ks_code c;
  if ((c = pragma_int(s, "PRAGMA application_id", &app, err)) ||
      (c = pragma_int(s, "PRAGMA user_version", &ver, err)) ||
      (c = pragma_int(s, "SELECT count(*) FROM sqlite_schema", &objects, err)))
    return c;
  *fresh = false;
  if (app == 0 && ver == 0 && objects == 0) {
    if (!create)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s is empty, not a ksearch database; check the "
                        "folder given to --resume, or start a new run",
                        s->path);
    *fresh = true;
    return KS_OK;
  }
  if (app != KS_STORE_APPLICATION_ID)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s is not a ksearch database: it is an SQLite database "
                      "of another program (application_id %lld, %lld schema "
                      "objects); move it away or choose another --out",
                      s->path, (long long)app, (long long)objects);
  if (ver > KS_STORE_SCHEMA_VERSION)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s was written by a newer ksearch (schema version "
                      "%lld; this ksearch reads version %d); use that newer "
                      "ksearch, or choose another --out",
                      s->path, (long long)ver, KS_STORE_SCHEMA_VERSION);
  *migrate = ver == 1; /* version 1 lacks evaluations.job_id */
  if (ver < 1)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s has an unknown schema version %lld (this ksearch "
                      "reads version %d); move it away or choose another "
                      "--out",
                      s->path, (long long)ver, KS_STORE_SCHEMA_VERSION);
  return KS_OK;
}

/* Every table (its columns: name, type, not null, key) and index this
 * ksearch writes, compared with those of an empty database of the file's
 * schema version (the current schema, less what later migrations add:
 * ks_store_schema_v1_sql), then the foreign keys: a dropped or altered
 * table, or a row naming a candidate that is not there, is refused before
 * anything is written, instead of surfacing later as raw SQLite text or
 * silently missing counts. Columns, not CREATE text: a migrated table's
 * text (ALTER TABLE ADD COLUMN) differs from a fresh one's. Reads only. */
static ks_code check_schema(ks_store *s, bool v1, ks_err *err) {
  static const char q[] =
      "SELECT 'table ' || m.name || ': ' || (SELECT group_concat(d, ', ') FROM "
      "(SELECT p.name || ' ' || p.type || CASE WHEN p.\"notnull\" THEN ' not "
      "null' ELSE '' END || CASE WHEN p.pk THEN ' key' ELSE '' END AS d FROM "
      "pragma_table_info(m.name) p ORDER BY p.name)) FROM sqlite_schema m "
      "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' UNION ALL SELECT "
      "'index ' || name || ' on ' || tbl_name FROM sqlite_schema WHERE type = "
      "'index' AND name NOT LIKE 'sqlite_%' ORDER BY 1";
  sqlite3 *mem = NULL;
  sqlite3_stmt *want = NULL, *have = NULL;
  char what[512] = "";
  ks_code c = KS_OK;
  if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, NULL) !=
          SQLITE_OK ||
      sqlite3_exec(mem, ks_store_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
      (v1 && sqlite3_exec(mem, ks_store_schema_v1_sql, NULL, NULL, NULL) !=
                 SQLITE_OK) ||
      sqlite3_prepare_v2(mem, q, -1, &want, NULL) != SQLITE_OK) {
    c = ks_err_set(err, KS_ERR_INTERNAL, "store: cannot build the schema: %s",
                   mem ? sqlite3_errmsg(mem) : "out of memory");
    goto out;
  }
  int rc = sqlite3_prepare_v2(s->db, q, -1, &have, NULL);
  if (rc != SQLITE_OK) {
    c = fail(s, rc, "reading its schema", err);
    goto out;
  }
  for (;;) {
    int rw = sqlite3_step(want), rh = sqlite3_step(have);
    if (rh != SQLITE_ROW && rh != SQLITE_DONE) {
      c = fail(s, rh, "reading its schema", err);
      goto out;
    }
    if (rw != SQLITE_ROW && rh != SQLITE_ROW)
      break;
    const char *w =
        rw == SQLITE_ROW ? (const char *)sqlite3_column_text(want, 0) : NULL;
    const char *h =
        rh == SQLITE_ROW ? (const char *)sqlite3_column_text(have, 0) : NULL;
    if (w && h && !strcmp(w, h))
      continue;
    /* name the first difference by its "type name" part */
    const char *about = w && (!h || strcmp(w, h) < 0) ? w : h;
    const char *colon = strchr(about, ':');
    int len = colon ? (int)(colon - about) : (int)strlen(about);
    bool same = w && h && !strncmp(w, h, (size_t)len) &&
                (w[len] == ':' || !w[len]) && (h[len] == ':' || !h[len]);
    snprintf(what, sizeof what, "%s %.*s",
             same         ? "changed"
             : about == w ? "missing"
                          : "unexpected",
             len > 200 ? 200 : len, about);
    break;
  }
  if (!what[0]) {
    sqlite3_finalize(have);
    have = NULL;
    rc = sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &have, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(have)) == SQLITE_ROW)
      snprintf(what, sizeof what, "row %lld of %s names a missing row of %s",
               (long long)sqlite3_column_int64(have, 1),
               (const char *)sqlite3_column_text(have, 0),
               (const char *)sqlite3_column_text(have, 2));
    else if (rc != SQLITE_DONE && rc != SQLITE_OK) {
      c = fail(s, rc, "checking its references", err);
      goto out;
    }
  }
  if (what[0])
    c = ks_err_set(err, KS_ERR_INPUT,
                   "%s is damaged: %s; it was not changed. Move it away "
                   "(`sqlite3 %s .dump` shows what is left) and start a new "
                   "run, or choose another --out",
                   s->path, what, s->path);
out:
  sqlite3_finalize(want);
  sqlite3_finalize(have);
  sqlite3_close(mem);
  return c;
}

static ks_code exec_sql(ks_store *s, const char *sql, const char *doing,
                        ks_err *err) {
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    return KS_OK;
  ks_code c = fail(s, rc, doing, err);
  rollback(s);
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
    c = fail(s, rc, "opening it", err);
    goto out;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, s->busy_ms);

  bool fresh = false, migrate = false;
  if ((c = check_header(s, create && !readonly, &fresh, &migrate, err)))
    goto out;
  if (!fresh &&
      ((c = quick_check(s, err)) || (c = check_schema(s, migrate, err))))
    goto out;
  if (!readonly) {
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *mode = (const char *)sqlite3_column_text(st, 0);
      rc = mode && strcasecmp(mode, "wal") == 0 ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
      c = fail(s, rc, "switching to WAL mode", err);
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
    rollback(s);
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

/* ---------------------------------------------------------------- JSON */

/* Canonical text of a JSON value (sorted keys, compact) so equal values
 * compare equal in SQL; NULL text stands for dflt. */
static ks_code canon_json(ks_store *s, const char *text, const char *dflt,
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

static bool secret_key(const char *k) {
  static const char *const names[] = {"api_key",
                                      "apikey",
                                      "api-key",
                                      "x-api-key",
                                      "x-goog-api-key",
                                      "authorization",
                                      "proxy-authorization",
                                      "key",
                                      "secret",
                                      "client_secret",
                                      "access_token",
                                      "password"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(k, names[i]) == 0)
      return true;
  return false;
}

static bool secret_string(const char *v) {
  if (strncasecmp(v, "bearer ", 7) == 0)
    return true;
  if (strncmp(v, "sk-", 3) != 0 || strlen(v) < 20)
    return false;
  for (const char *p = v; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
      return false;
  return true;
}

/* Replaces credentials anywhere in a request with "[redacted]". */
static void redact(json_t *v) {
  if (json_is_object(v)) {
    const char *k;
    json_t *x;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, x) {
      if (secret_key(k) ||
          (json_is_string(x) && secret_string(json_string_value(x))))
        json_object_set_new(v, k, json_string("[redacted]"));
      else
        redact(x);
    }
  } else if (json_is_array(v)) {
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
      if (json_is_string(x) && secret_string(json_string_value(x)))
        json_array_set_new(v, i, json_string("[redacted]"));
      else
        redact(x);
    }
  }
}

/* ---------------------------------------------------------------- runs */

void ks_store_run_free(ks_store_run *r) {
  if (!r)
    return;
  free(r->task_name);
  free(r->task_hash);
  free(r->backend);
  free(r->config_json);
  free(r->stopped_because);
  memset(r, 0, sizeof *r);
}

ks_code ks_store_get_run(ks_store *s, ks_store_run *out, bool *found,
                         ks_err *err) {
  memset(out, 0, sizeof *out);
  *found = false;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_RUN_GET, &st, err);
  if (c)
    return c;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    out->task_name = col_dup(st, 0, &oom);
    out->task_hash = col_dup(st, 1, &oom);
    out->backend = col_dup(st, 2, &oom);
    out->seed = sqlite3_column_int64(st, 3);
    out->config_json = col_dup(st, 4, &oom);
    out->created = sqlite3_column_double(st, 5);
    out->updated = sqlite3_column_double(st, 6);
    out->stopped_because = col_dup(st, 7, &oom);
    *found = true;
    if (oom) {
      ks_store_run_free(out);
      *found = false;
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory reading the run",
                     s->path);
    }
  } else if (rc != SQLITE_DONE) {
    c = fail(s, rc, "reading the run", err);
  }
  done(st);
  return c;
}

ks_code ks_store_check_task(ks_store *s, const char *task_name,
                            const char *task_hash, ks_err *err) {
  ks_code c;
  if ((c = need(task_name, "task_name", err)) ||
      (c = need(task_hash, "task_hash", err)))
    return c;
  ks_store_run r;
  bool found;
  if ((c = ks_store_get_run(s, &r, &found, err)) || !found)
    return c;
  if (strcmp(r.task_name, task_name) != 0)
    c = ks_err_set(err, KS_ERR_INPUT,
                   "run folder %s holds a search of task '%s' (hash %s), not "
                   "of task '%s' (hash %s); choose another --out, or resume "
                   "it with task '%s'",
                   s->dir, r.task_name, r.task_hash, task_name, task_hash,
                   r.task_name);
  else if (strcmp(r.task_hash, task_hash) != 0)
    c = ks_err_set(err, KS_ERR_INPUT,
                   "run folder %s holds a search of task '%s' as it was "
                   "(hash %s), but task '%s' has changed since (hash %s: its "
                   "task.json or reference differs); restore the task, or "
                   "start a new run with another --out",
                   s->dir, r.task_name, r.task_hash, task_name, task_hash);
  ks_store_run_free(&r);
  return c;
}

ks_code ks_store_put_run(ks_store *s, const char *task_name,
                         const char *task_hash, const char *backend,
                         int64_t seed, const char *config_json, ks_err *err) {
  ks_code c;
  char *cfg = NULL;
  sqlite3_stmt *st = NULL;
  if ((c = need(backend, "backend", err)) ||
      (c = ks_store_check_task(s, task_name, task_hash, err)) ||
      (c = canon_json(s, config_json, "{}", true, "run config", &cfg, err)) ||
      (c = prep(s, ST_RUN_PUT, &st, err)))
    goto out;
  bind_text(st, 1, task_name);
  bind_text(st, 2, task_hash);
  bind_text(st, 3, backend);
  sqlite3_bind_int64(st, 4, seed);
  bind_text(st, 5, cfg);
  sqlite3_bind_double(st, 6, now_unix());
  c = run_stmt(s, st, "recording the run", err);
out:
  free(cfg);
  return c;
}

ks_code ks_store_set_stopped(ks_store *s, const char *reason, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_RUN_STOP, &st, err);
  if (c)
    return c;
  bind_text(st, 1, reason);
  sqlite3_bind_double(st, 2, now_unix());
  return run_stmt(s, st, "recording why the run stopped", err);
}

/* ---------------------------------------------------------------- snapshot */

ks_code ks_store_put_task_snapshot(ks_store *s, const char *task_json,
                                   const char *reference_source, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = need(task_json, "task_json", err)) ||
      (c = need(reference_source, "reference_source", err)) ||
      (c = prep(s, ST_SNAP_PUT, &st, err)))
    return c;
  bind_text(st, 1, task_json);
  bind_text(st, 2, reference_source);
  sqlite3_bind_double(st, 3, now_unix());
  return run_stmt(s, st, "saving the task snapshot", err);
}

ks_code ks_store_get_task_snapshot(ks_store *s, char **task_json,
                                   char **reference_source, ks_err *err) {
  if (task_json)
    *task_json = NULL;
  if (reference_source)
    *reference_source = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_SNAP_GET, &st, err);
  if (c)
    return c;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    char *a = col_dup(st, 0, &oom), *b = col_dup(st, 1, &oom);
    if (oom) {
      free(a);
      free(b);
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
    } else {
      if (task_json)
        *task_json = a;
      else
        free(a);
      if (reference_source)
        *reference_source = b;
      else
        free(b);
    }
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INPUT,
                   "%s holds no task snapshot; the run was never started "
                   "properly: start a new run with another --out",
                   s->path);
  } else {
    c = fail(s, rc, "reading the task snapshot", err);
  }
  done(st);
  return c;
}

/* ---------------------------------------------------------------- nodes */

static ks_code node_put(ks_store *s, const char *id, const char *json, double t,
                        ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = need(id, "node id", err)) || (c = need(json, "node json", err)) ||
      (c = prep(s, ST_NODE_PUT, &st, err)))
    return c;
  bind_text(st, 1, id);
  bind_text(st, 2, json);
  sqlite3_bind_double(st, 3, t);
  return run_stmt(s, st, "saving a world-model node", err);
}

ks_code ks_store_put_node(ks_store *s, const char *node_id,
                          const char *node_json, ks_err *err) {
  return node_put(s, node_id, node_json, now_unix(), err);
}

ks_code ks_store_replace_nodes(ks_store *s, const json_t *nodes, ks_err *err) {
  if (!json_is_array(nodes))
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: replace_nodes needs a JSON array", s->path);
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = prep(s, ST_NODE_CLEAR, &st, err)) ||
      (c = tx_begin(s, "saving the world model", err)))
    return c;
  if ((c = run_stmt(s, st, "saving the world model", err)))
    goto out;
  double t = now_unix();
  size_t i;
  json_t *n;
  json_array_foreach(nodes, i, n) {
    const char *id = json_string_value(json_object_get(n, "id"));
    if (!id) {
      c = ks_err_set(err, KS_ERR_INTERNAL,
                     "%s: world-model node %zu has no string \"id\"", s->path,
                     i);
      goto out;
    }
    char *text = json_dumps(n, JSON_COMPACT);
    if (!text) {
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
      goto out;
    }
    c = node_put(s, id, text, t, err);
    free(text);
    if (c)
      goto out;
  }
  c = tx_commit(s, "saving the world model", err);
out:
  if (c)
    rollback(s);
  return c;
}

ks_code ks_store_list_nodes(ks_store *s, json_t **out, ks_err *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_NODE_LIST, &st, err);
  if (c)
    return c;
  json_t *arr = json_array();
  int rc;
  while (arr && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_error_t je;
    const char *id = (const char *)sqlite3_column_text(st, 0);
    json_t *n = json_loads((const char *)sqlite3_column_text(st, 1), 0, &je);
    if (!n) {
      c = ks_err_set(err, KS_ERR_INPUT,
                     "%s is corrupt: node '%s' holds invalid JSON (%s); move "
                     "it away or choose another --out",
                     s->path, id ? id : "?", je.text);
      break;
    }
    json_array_append_new(arr, n);
  }
  if (!arr)
    c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
  else if (!c && rc != SQLITE_DONE)
    c = fail(s, rc, "reading the world model", err);
  done(st);
  if (c)
    json_decref(arr);
  else
    *out = arr;
  return c;
}

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
  ks_code c = prep(s, ST_CAND_FIND, &st, err);
  if (c)
    return c;
  bind_text(st, 1, hash);
  bind_text(st, 2, params);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64(st, 0);
  else if (rc != SQLITE_DONE)
    c = fail(s, rc, "looking up a candidate", err);
  done(st);
  return c;
}

ks_code ks_store_find_candidate(ks_store *s, const char *hash,
                                const char *params_json, int64_t *id,
                                ks_err *err) {
  *id = 0;
  char *params = NULL;
  ks_code c;
  if (!(c = need(hash, "candidate hash", err)) &&
      !(c = canon_json(s, params_json, "{}", true, "candidate params", &params,
                       err)))
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
  if ((c = need(source, "candidate source", err)) ||
      (c = need(hash, "candidate hash", err)) ||
      (c = canon_json(s, params_json, "{}", true, "candidate params", &params,
                      err)) ||
      (c = prep(s, ST_CAND_INSERT, &st, err)))
    goto out;
  bind_text(st, 1, node_id);
  bind_text(st, 2, source);
  bind_text(st, 3, params);
  bind_text(st, 4, hash);
  sqlite3_bind_double(st, 5, now_unix());
  if ((c = run_stmt(s, st, "saving a candidate", err)))
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
  ks_code c = prep(s, ST_CAND_GET, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, id);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    out->id = sqlite3_column_int64(st, 0);
    out->node_id = col_dup(st, 1, &oom);
    out->source = col_dup(st, 2, &oom);
    out->params_json = col_dup(st, 3, &oom);
    out->hash = col_dup(st, 4, &oom);
    out->created = sqlite3_column_double(st, 5);
    if (oom) {
      ks_store_candidate_free(out);
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
    }
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INTERNAL, "%s holds no candidate %lld", s->path,
                   (long long)id);
  } else {
    c = fail(s, rc, "reading a candidate", err);
  }
  done(st);
  return c;
}

/* ---------------------------------------------------------------- builds */

ks_code ks_store_add_build(ks_store *s, int64_t candidate_id, bool ok,
                           double seconds, const char *log,
                           const char *artifact, int64_t *id, ks_err *err) {
  if (id)
    *id = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_BUILD_INSERT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, candidate_id);
  sqlite3_bind_int(st, 2, ok ? 1 : 0);
  sqlite3_bind_double(st, 3, isfinite(seconds) ? seconds : 0.0);
  bind_text(st, 4, log ? log : "");
  bind_text(st, 5, artifact);
  sqlite3_bind_double(st, 6, now_unix());
  if (!(c = run_stmt(s, st, "saving a build", err)) && id)
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
  ks_code c = prep(s, ST_EVAL_BEGIN, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, candidate_id);
  bind_text(st, 2, node_id);
  sqlite3_bind_double(st, 3, now_unix());
  if (!(c = run_stmt(s, st, "starting an evaluation", err)))
    *eval_id = sqlite3_last_insert_rowid(s->db);
  return c;
}

static ks_code put_measurement(ks_store *s, int64_t eval_id,
                               const ks_store_measurement *m, ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_MEAS_INSERT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  sqlite3_bind_int(st, 2, m->workload);
  bind_text(st, 3, m->axes_json[0] ? m->axes_json : "{}");
  bind_real(st, 4, m->time_ns_median);
  bind_real(st, 5, m->time_ns_iqr);
  bind_real(st, 6, m->gbps);
  bind_real(st, 7, m->roofline_fraction);
  bind_real(st, 8, m->speedup);
  return run_stmt(s, st, "saving a measurement", err);
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
    return need(m, "measurements", err);
  sqlite3_stmt *st = NULL;
  ks_code c;
  char doing[96];
  snprintf(doing, sizeof doing, "saving evaluation %lld", (long long)eval_id);
  if ((c = prep(s, ST_EVAL_FINISH, &st, err)) || (c = tx_begin(s, doing, err)))
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  bind_text(st, 2, status);
  sqlite3_bind_int(st, 3, correct ? 1 : 0);
  bind_real(st, 4, score);
  bind_text(st, 5, result_json);
  sqlite3_bind_double(st, 6, now_unix());
  if ((c = run_stmt(s, st, doing, err)))
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
  c = tx_commit(s, doing, err);
out:
  if (c)
    rollback(s);
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
  if ((c = prep(s, ST_EVAL_RUNNING, &sel, err)) ||
      (c = prep(s, ST_EVAL_ABANDON, &upd, err)) ||
      (c = tx_begin(s, "marking interrupted evaluations", err)))
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
    c = fail(s, rc, "reading running evaluations", err);
  done(sel);
  if (!c) {
    sqlite3_bind_double(upd, 1, now_unix());
    c = run_stmt(s, upd, "marking interrupted evaluations", err);
  }
  if (!c)
    c = tx_commit(s, "marking interrupted evaluations", err);
  if (c) {
    rollback(s);
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

ks_code ks_store_counts_get(ks_store *s, ks_store_counts *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_COUNTS, &st, err);
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
    c = fail(s, rc, "counting evaluations", err);
  }
  done(st);
  return c;
}

static void read_eval(sqlite3_stmt *st, ks_store_eval *e) {
  e->id = sqlite3_column_int64(st, 0);
  e->candidate_id = sqlite3_column_int64(st, 1);
  col_copy(st, 2, e->node_id, sizeof e->node_id);
  col_copy(st, 3, e->status, sizeof e->status);
  e->correct = sqlite3_column_int(st, 4) != 0;
  e->score = col_real(st, 5);
  e->started = sqlite3_column_double(st, 6);
  e->finished = col_real(st, 7);
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
    c = fail(s, rc, doing, err);
  done(st);
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
  ks_code c = prep(s, ST_EVAL_LIST, &st, err);
  return c ? c : eval_rows(s, st, "listing evaluations", rows, n, err);
}

ks_code ks_store_top(ks_store *s, size_t limit, ks_store_eval **rows, size_t *n,
                     ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_EVAL_TOP, &st, err);
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
  ks_code c = prep(s, ST_EVAL_RESULT, &st, err);
  if (c)
    return c;
  sqlite3_bind_int64(st, 1, eval_id);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    bool oom = false;
    *out = col_dup(st, 0, &oom);
    if (oom)
      c = ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
  } else if (rc == SQLITE_DONE) {
    c = ks_err_set(err, KS_ERR_INTERNAL, "%s holds no evaluation %lld", s->path,
                   (long long)eval_id);
  } else {
    c = fail(s, rc, "reading an evaluation", err);
  }
  done(st);
  return c;
}

ks_code ks_store_list_measurements(ks_store *s, int64_t eval_id,
                                   ks_store_measurement **rows, size_t *n,
                                   ks_err *err) {
  *rows = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_MEAS_LIST, &st, err);
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
    col_copy(st, 1, m->axes_json, sizeof m->axes_json);
    m->time_ns_median = col_real(st, 2);
    m->time_ns_iqr = col_real(st, 3);
    m->gbps = col_real(st, 4);
    m->roofline_fraction = col_real(st, 5);
    m->speedup = col_real(st, 6);
  }
  if (!c && rc != SQLITE_DONE)
    c = fail(s, rc, "reading measurements", err);
  done(st);
  if (c) {
    free(v);
    return c;
  }
  *rows = v;
  *n = count;
  return KS_OK;
}

/* ---------------------------------------------------------------- llm, events
 */

ks_code ks_store_add_llm_call(ks_store *s, const ks_store_llm_call *call,
                              int64_t *id, ks_err *err) {
  if (id)
    *id = 0;
  ks_code c;
  if ((c = need(call, "llm call", err)) ||
      (c = need(call->role, "llm call role", err)) ||
      (c = need(call->model, "llm call model", err)) ||
      (c = need(call->status, "llm call status", err)))
    return c;
  json_error_t je;
  json_t *req =
      json_loads(call->request_json ? call->request_json : "{}", 0, &je);
  if (!req)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "%s: llm request is not valid JSON (%s)", s->path,
                      je.text);
  redact(req);
  char *text = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "%s: out of memory", s->path);
  sqlite3_stmt *st = NULL;
  if (!(c = prep(s, ST_LLM_INSERT, &st, err))) {
    bind_text(st, 1, call->role);
    bind_text(st, 2, call->model);
    bind_text(st, 3, text);
    bind_text(st, 4, call->response_text);
    if (call->prompt_tokens >= 0)
      sqlite3_bind_int64(st, 5, call->prompt_tokens);
    if (call->completion_tokens >= 0)
      sqlite3_bind_int64(st, 6, call->completion_tokens);
    bind_real(st, 7, call->latency_s);
    bind_text(st, 8, call->status);
    sqlite3_bind_double(st, 9, now_unix());
    if (!(c = run_stmt(s, st, "saving an LLM call", err)) && id)
      *id = sqlite3_last_insert_rowid(s->db);
  }
  free(text);
  return c;
}

ks_code ks_store_add_event(ks_store *s, const char *kind, const char *json,
                           ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = need(kind, "event kind", err)) ||
      (c = prep(s, ST_EVENT_INSERT, &st, err)))
    return c;
  sqlite3_bind_double(st, 1, now_unix());
  bind_text(st, 2, kind);
  bind_text(st, 3, json ? json : "{}");
  return run_stmt(s, st, "saving an event", err);
}

/* ------------------------------------------------------------ read-only lists
 * (report, show --json): rows as JSON so that the caller can hand them on. */

static json_t *col_json_int(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL
             ? json_null()
             : json_integer(sqlite3_column_int64(st, i));
}

static json_t *col_json_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL
             ? json_null()
             : json_real(sqlite3_column_double(st, i));
}

static json_t *col_json_text(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? json_string((const char *)t) : json_null();
}

ks_code ks_store_list_llm_calls(ks_store *s, json_t **out, ks_err *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_LLM_LIST, &st, err);
  if (c)
    return c;
  json_t *arr = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    json_object_set_new(o, "id", col_json_int(st, 0));
    json_object_set_new(o, "role", col_json_text(st, 1));
    json_object_set_new(o, "model", col_json_text(st, 2));
    json_object_set_new(o, "status", col_json_text(st, 3));
    json_object_set_new(o, "prompt_tokens", col_json_int(st, 4));
    json_object_set_new(o, "completion_tokens", col_json_int(st, 5));
    json_object_set_new(o, "latency_s", col_json_real(st, 6));
    json_object_set_new(o, "created", col_json_real(st, 7));
    json_array_append_new(arr, o);
  }
  if (rc != SQLITE_DONE)
    c = fail(s, rc, "listing LLM calls", err);
  done(st);
  if (c)
    json_decref(arr);
  else
    *out = arr;
  return c;
}

ks_code ks_store_list_events(ks_store *s, const char *kind, json_t **out,
                             ks_err *err) {
  *out = NULL;
  sqlite3_stmt *st = NULL;
  ks_code c = prep(s, ST_EVENT_LIST, &st, err);
  if (c)
    return c;
  bind_text(st, 1, kind);
  json_t *arr = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *text = (const char *)sqlite3_column_text(st, 3);
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    json_t *o = json_object();
    json_object_set_new(o, "id", col_json_int(st, 0));
    json_object_set_new(o, "time", col_json_real(st, 1));
    json_object_set_new(o, "kind", col_json_text(st, 2));
    json_object_set_new(o, "json", v ? v : json_null());
    json_array_append_new(arr, o);
  }
  if (rc != SQLITE_DONE)
    c = fail(s, rc, "listing events", err);
  done(st);
  if (c)
    json_decref(arr);
  else
    *out = arr;
  return c;
}
