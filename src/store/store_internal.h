/* store_internal.h — what the files of src/store/ share (DESIGN.md: Store):
 * the connection struct, the ids of its cached prepared statements, and the
 * helpers every query file uses (errors, binding, columns, transactions).
 * Not for use outside src/store/; everyone else goes through store.h. */
#ifndef KS_STORE_INTERNAL_H
#define KS_STORE_INTERNAL_H

#include "store/store.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>

/* Prepared once per store, on first use (SQL text: store_stmt.c). */
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

struct ks_store {
  sqlite3 *db;
  char path[4096];
  char dir[4096]; /* the run folder, for messages */
  int busy_ms;
  int lock_fd; /* -1 when read-only */
  sqlite3_stmt *st[ST_COUNT];
};

/* ---- store_stmt.c */
extern const char *const ks_st_sql[ST_COUNT];
/* Turns an SQLite failure into a message naming the file and the fix. Call
 * before resetting statements or rolling back (they overwrite errmsg). */
ks_code ks_st_fail(ks_store *s, int rc, const char *doing, ks_err *err);
void ks_st_rollback(ks_store *s);
/* The cached statement id, prepared on first use. */
ks_code ks_st_prep(ks_store *s, int id, sqlite3_stmt **out, ks_err *err);
/* Resets a statement and clears its bindings (NULL: nothing). */
void ks_st_done(sqlite3_stmt *st);
/* NULL binds NULL. */
void ks_st_bind_text(sqlite3_stmt *st, int i, const char *v);
/* NaN and infinities are not numbers SQL can keep; they become NULL. */
void ks_st_bind_real(sqlite3_stmt *st, int i, double v);
/* A real column; NULL reads as NaN. */
double ks_st_col_real(sqlite3_stmt *st, int i);
/* A malloc'd copy of a text column (NULL for NULL); *oom set on failure. */
char *ks_st_col_dup(sqlite3_stmt *st, int i, bool *oom);
/* A text column into a fixed buffer ("" for NULL), truncated to fit. */
void ks_st_col_copy(sqlite3_stmt *st, int i, char *out, size_t n);
/* Runs a statement that returns no rows, then resets it. */
ks_code ks_st_run(ks_store *s, sqlite3_stmt *st, const char *doing,
                  ks_err *err);
/* BEGIN IMMEDIATE / COMMIT (a failed commit is rolled back). */
ks_code ks_st_begin(ks_store *s, const char *doing, ks_err *err);
ks_code ks_st_commit(ks_store *s, const char *doing, ks_err *err);
/* KS_ERR_INTERNAL naming what when p is NULL: a caller's bug, not input. */
ks_code ks_st_need(const void *p, const char *what, ks_err *err);
/* Canonical text of a JSON value (sorted keys, compact) so equal values
 * compare equal in SQL; NULL text stands for dflt. */
ks_code ks_st_canon_json(ks_store *s, const char *text, const char *dflt,
                         bool need_object, const char *what, char **out,
                         ks_err *err);

/* ---- store_check.c: refusing a file before anything is written */
/* From the header: a ksearch database we can use (*migrate: of version 1),
 * an empty file to create one in (*fresh), or something to refuse. */
ks_code ks_st_check_header(ks_store *s, bool create, bool *fresh, bool *migrate,
                           ks_err *err);
/* PRAGMA quick_check: garbled or truncated pages. */
ks_code ks_st_quick_check(ks_store *s, ks_err *err);
/* Tables, columns, indexes and foreign keys against an empty database of
 * the file's version (v1: version 1). */
ks_code ks_st_check_schema(ks_store *s, bool v1, ks_err *err);

#endif
