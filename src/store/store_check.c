/* store_check.c — refusing a run database before anything is written
 * (DESIGN.md: Store): a foreign, newer, empty or unknown header; garbled
 * pages (quick_check); dropped or altered tables, indexes and dangling
 * references, compared with an empty database of the file's own schema
 * version. store.c calls these in that order; every check reads only. */
#include "store/store_internal.h"

#include <string.h>

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
  ks_code c =
      rc == SQLITE_OK ? KS_OK : ks_st_fail(s, rc, "reading its header", err);
  sqlite3_finalize(st);
  return c;
}

/* PRAGMA quick_check: finds garbled or truncated pages now, before a search
 * starts writing into a broken file. */
ks_code ks_st_quick_check(ks_store *s, ks_err *err) {
  sqlite3_stmt *st = NULL;
  int rc =
      sqlite3_prepare_v2(s->db, "PRAGMA ks_st_quick_check(3)", -1, &st, NULL);
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
    c = ks_st_fail(s, rc, "checking its integrity", err);
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
ks_code ks_st_check_header(ks_store *s, bool create, bool *fresh, bool *migrate,
                           ks_err *err) {
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
ks_code ks_st_check_schema(ks_store *s, bool v1, ks_err *err) {
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
    c = ks_st_fail(s, rc, "reading its schema", err);
    goto out;
  }
  for (;;) {
    int rw = sqlite3_step(want), rh = sqlite3_step(have);
    if (rh != SQLITE_ROW && rh != SQLITE_DONE) {
      c = ks_st_fail(s, rh, "reading its schema", err);
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
      c = ks_st_fail(s, rc, "checking its references", err);
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
