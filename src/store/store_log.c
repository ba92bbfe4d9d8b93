/* store_log.c — LLM calls and events (store.h; DESIGN.md: Store, LLM).
 * A request is stored with every credential replaced by "[redacted]" (keys
 * named like secrets, bearer tokens, sk- keys), so a run folder can be
 * shared; the read-only lists give rows as JSON for report and show --json. */
#include "store/store_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* ---------------------------------------------------------------- llm, events
 */

ks_code ks_store_add_llm_call(ks_store *s, const ks_store_llm_call *call,
                              int64_t *id, ks_err *err) {
  if (id)
    *id = 0;
  ks_code c;
  if ((c = ks_st_need(call, "llm call", err)) ||
      (c = ks_st_need(call->role, "llm call role", err)) ||
      (c = ks_st_need(call->model, "llm call model", err)) ||
      (c = ks_st_need(call->status, "llm call status", err)))
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
  if (!(c = ks_st_prep(s, ST_LLM_INSERT, &st, err))) {
    ks_st_bind_text(st, 1, call->role);
    ks_st_bind_text(st, 2, call->model);
    ks_st_bind_text(st, 3, text);
    ks_st_bind_text(st, 4, call->response_text);
    if (call->prompt_tokens >= 0)
      sqlite3_bind_int64(st, 5, call->prompt_tokens);
    if (call->completion_tokens >= 0)
      sqlite3_bind_int64(st, 6, call->completion_tokens);
    ks_st_bind_real(st, 7, call->latency_s);
    ks_st_bind_text(st, 8, call->status);
    sqlite3_bind_double(st, 9, ks_wall_now());
    if (!(c = ks_st_run(s, st, "saving an LLM call", err)) && id)
      *id = sqlite3_last_insert_rowid(s->db);
  }
  free(text);
  return c;
}

ks_code ks_store_add_event(ks_store *s, const char *kind, const char *json,
                           ks_err *err) {
  sqlite3_stmt *st = NULL;
  ks_code c;
  if ((c = ks_st_need(kind, "event kind", err)) ||
      (c = ks_st_prep(s, ST_EVENT_INSERT, &st, err)))
    return c;
  sqlite3_bind_double(st, 1, ks_wall_now());
  ks_st_bind_text(st, 2, kind);
  ks_st_bind_text(st, 3, json ? json : "{}");
  return ks_st_run(s, st, "saving an event", err);
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
  ks_code c = ks_st_prep(s, ST_LLM_LIST, &st, err);
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
    c = ks_st_fail(s, rc, "listing LLM calls", err);
  ks_st_done(st);
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
  ks_code c = ks_st_prep(s, ST_EVENT_LIST, &st, err);
  if (c)
    return c;
  ks_st_bind_text(st, 1, kind);
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
    c = ks_st_fail(s, rc, "listing events", err);
  ks_st_done(st);
  if (c)
    json_decref(arr);
  else
    *out = arr;
  return c;
}
