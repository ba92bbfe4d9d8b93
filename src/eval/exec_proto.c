/* exec_proto.c — the judge's strict reader of executor events (see
 * exec_proto.h). Every field of every event is checked for presence, type
 * and range; an unknown field is as wrong as a missing one, so an executor
 * cannot smuggle a verdict ("correct": true) into a message the judge
 * ignores today and reads tomorrow. */
#include "eval/exec_proto.h"
#include "util/util.h"

#include <jansson.h>
#include <string.h>

typedef struct ev_spec {
  const char *name;
  ks_exec_ev_kind kind;
  const char *required[3]; /* besides "ev" */
  const char *optional[2];
} ev_spec;

static const ev_spec k_specs[] = {
    {"ready", KS_EV_READY, {NULL}, {NULL}},
    {"loaded", KS_EV_LOADED, {NULL}, {NULL}},
    {"pong", KS_EV_PONG, {"id"}, {NULL}},
    {"prepped", KS_EV_PREPPED, {"id"}, {NULL}},
    {"ret", KS_EV_RET, {"id", "ns"}, {"dev_ns"}},
    {"collected", KS_EV_COLLECTED, {"id"}, {"fail"}},
    {"probed", KS_EV_PROBED, {"id", "ns"}, {"fl"}},
    {"error", KS_EV_ERROR, {"code", "message"}, {NULL}},
    {"alloc_failed", KS_EV_ALLOC, {"bytes"}, {NULL}},
    {"sigsys", KS_EV_SIGSYS, {"nr"}, {NULL}},
    {"fault", KS_EV_FAULT, {"sig", "what"}, {NULL}},
};

const char *ks_exec_ev_name(ks_exec_ev_kind k) {
  for (size_t i = 0; i < sizeof k_specs / sizeof *k_specs; i++)
    if (k_specs[i].kind == k)
      return k_specs[i].name;
  return "none";
}

static bool listed(const char *const *names, int n, const char *key) {
  for (int i = 0; i < n && names[i]; i++)
    if (!strcmp(names[i], key))
      return true;
  return false;
}

/* A non-negative integer that fits in int64 (jansson rejects larger). */
static bool get_count(json_t *o, const char *key, int64_t *out) {
  json_t *v = json_object_get(o, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return false;
  *out = (int64_t)json_integer_value(v);
  return true;
}

static bool get_text(json_t *o, const char *key, char *dst, size_t n) {
  json_t *v = json_object_get(o, key);
  if (!json_is_string(v))
    return false;
  ks_strlcpy(dst, json_string_value(v), n);
  return true;
}

bool ks_exec_parse_event(const char *line, size_t len, ks_exec_event *ev,
                         char *why, size_t n) {
  memset(ev, 0, sizeof *ev);
  ev->dev_ns = -1;
  if (len > KS_EXEC_MAX_LINE) {
    snprintf(why, n, "a line of %zu bytes (at most %d)", len, KS_EXEC_MAX_LINE);
    return false;
  }
  if (memchr(line, 0, len)) {
    snprintf(why, n, "a NUL byte in a line");
    return false;
  }
  json_error_t je;
  json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
  if (!json_is_object(o)) {
    snprintf(why, n, "not a JSON object: %.80s", o ? "other JSON" : je.text);
    json_decref(o);
    return false;
  }
  const char *name = json_string_value(json_object_get(o, "ev"));
  const ev_spec *sp = NULL;
  for (size_t i = 0; name && i < sizeof k_specs / sizeof *k_specs; i++)
    if (!strcmp(k_specs[i].name, name))
      sp = &k_specs[i];
  if (!sp) {
    snprintf(why, n, "unknown event %.40s%s%s", name ? "\"" : "",
             name ? name : "(no \"ev\" string)", name ? "\"" : "");
    json_decref(o);
    return false;
  }
  const char *key;
  json_t *val;
  json_object_foreach(o, key, val) {
    if (strcmp(key, "ev") && !listed(sp->required, 3, key) &&
        !listed(sp->optional, 2, key)) {
      snprintf(why, n, "unexpected field \"%.40s\" in %s", key, sp->name);
      json_decref(o);
      return false;
    }
  }
  bool ok = true;
  const char *bad = NULL;
  ev->kind = sp->kind;
  switch (sp->kind) {
  case KS_EV_PONG:
  case KS_EV_PREPPED:
    ok = get_count(o, "id", &ev->id) || (bad = "id", false);
    break;
  case KS_EV_RET:
    ok = (get_count(o, "id", &ev->id) || (bad = "id", false)) &&
         (get_count(o, "ns", &ev->ns) || (bad = "ns", false));
    if (ok && json_object_get(o, "dev_ns"))
      ok = get_count(o, "dev_ns", &ev->dev_ns) || (bad = "dev_ns", false);
    break;
  case KS_EV_PROBED:
    ok = (get_count(o, "id", &ev->id) || (bad = "id", false)) &&
         (get_count(o, "ns", &ev->ns) || (bad = "ns", false));
    if (ok && json_object_get(o, "fl"))
      ok = get_count(o, "fl", &ev->value) || (bad = "fl", false);
    break;
  case KS_EV_COLLECTED:
    ok = get_count(o, "id", &ev->id) || (bad = "id", false);
    if (ok && json_object_get(o, "fail"))
      ok = get_text(o, "fail", ev->text, sizeof ev->text) ||
           (bad = "fail", false);
    break;
  case KS_EV_ERROR:
    ok = (get_count(o, "code", &ev->value) || (bad = "code", false)) &&
         (get_text(o, "message", ev->text, sizeof ev->text) ||
          (bad = "message", false));
    break;
  case KS_EV_ALLOC:
    ok = get_count(o, "bytes", &ev->value) || (bad = "bytes", false);
    break;
  case KS_EV_SIGSYS:
    ok = get_count(o, "nr", &ev->value) || (bad = "nr", false);
    break;
  case KS_EV_FAULT:
    ok = (get_count(o, "sig", &ev->value) || (bad = "sig", false)) &&
         (get_text(o, "what", ev->text, sizeof ev->text) ||
          (bad = "what", false));
    break;
  default: break;
  }
  json_decref(o);
  if (!ok) {
    snprintf(why, n, "%s: field \"%s\" missing or of the wrong type", sp->name,
             bad ? bad : "?");
    ev->kind = KS_EV_NONE;
  }
  return ok;
}
