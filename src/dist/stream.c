/* stream.c — the Redis Streams operations of broker.h: consumer group,
 * add, group read, claim of idle entries, heartbeat touch, ack, plain read.
 * Every entry has one field "j" holding a JSON text (job.h). */
#include "dist/broker_internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static ks_code bad_reply(const char *what, ks_err *err) {
  return ks_err_set(err, KS_ERR_ENV,
                    "broker: unexpected reply to %s (is it Redis >= 6.2?)",
                    what);
}

ks_code ks_broker_ensure_group(ks_broker *b, const char *key, ks_err *err) {
  const char *a[] = {"XGROUP", "CREATE", key, KS_DIST_GROUP, "0", "MKSTREAM"};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 6, a, &r, err);
  freeReplyObject(r);
  if (rc == KS_ERR_ENV && strstr(err->msg, "BUSYGROUP"))
    return KS_OK;
  return rc;
}

ks_code ks_broker_add(ks_broker *b, const char *key, const char *json,
                      char entry_id[64], ks_err *err) {
  const char *a[] = {"XADD", key, "*", "j", json};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 5, a, &r, err);
  if (!rc && entry_id) {
    if (r->type == REDIS_REPLY_STRING)
      ks_strlcpy(entry_id, r->str, 64);
    else
      rc = bad_reply("XADD", err);
  }
  freeReplyObject(r);
  return rc;
}

/* [id, [field, value, ...]] -> id and the value of "j" (NULL if absent). */
static void entry_of(const redisReply *e, char id[64], char **json) {
  *json = NULL;
  id[0] = '\0';
  if (!e || e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
      e->element[0]->type != REDIS_REPLY_STRING)
    return;
  ks_strlcpy(id, e->element[0]->str, 64);
  const redisReply *f = e->element[1];
  if (f->type != REDIS_REPLY_ARRAY)
    return;
  for (size_t i = 0; i + 1 < f->elements; i += 2)
    if (f->element[i]->type == REDIS_REPLY_STRING &&
        !strcmp(f->element[i]->str, "j") &&
        f->element[i + 1]->type == REDIS_REPLY_STRING) {
      *json = ks_xmalloc(f->element[i + 1]->len + 1);
      memcpy(*json, f->element[i + 1]->str, f->element[i + 1]->len);
      (*json)[f->element[i + 1]->len] = '\0';
      return;
    }
}

/* The reply of XREAD / XREADGROUP: nil, or [[key, [entries...]]]. */
static const redisReply *entries_of(const redisReply *r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
    return NULL;
  const redisReply *s = r->element[0];
  if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 ||
      s->element[1]->type != REDIS_REPLY_ARRAY)
    return NULL;
  return s->element[1];
}

ks_code ks_broker_read_group(ks_broker *b, const char *key,
                             const char *consumer, int block_ms,
                             char entry_id[64], char **json, ks_err *err) {
  *json = NULL;
  entry_id[0] = '\0';
  char ms[16];
  snprintf(ms, sizeof ms, "%d", block_ms);
  const char *a[] = {
      "XREADGROUP", "GROUP", KS_DIST_GROUP, consumer, "COUNT", "1",
      "BLOCK",      ms,      "STREAMS",     key,      ">"};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 11, a, &r, err);
  if (rc)
    return rc;
  const redisReply *es = entries_of(r);
  if (es && es->elements > 0)
    entry_of(es->element[0], entry_id, json);
  freeReplyObject(r);
  return KS_OK;
}

static ks_code deliveries_of(ks_broker *b, const char *key, const char *id,
                             int64_t *out, ks_err *err) {
  const char *a[] = {"XPENDING", key, KS_DIST_GROUP, id, id, "1"};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 6, a, &r, err);
  if (rc)
    return rc;
  *out = 1;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
      r->element[0]->type == REDIS_REPLY_ARRAY &&
      r->element[0]->elements == 4 &&
      r->element[0]->element[3]->type == REDIS_REPLY_INTEGER)
    *out = r->element[0]->element[3]->integer;
  freeReplyObject(r);
  return KS_OK;
}

ks_code ks_broker_claim_idle(ks_broker *b, const char *key,
                             const char *consumer, int64_t min_idle_ms,
                             char entry_id[64], char **json,
                             int64_t *deliveries, ks_err *err) {
  *json = NULL;
  entry_id[0] = '\0';
  *deliveries = 0;
  char idle[32], cursor[64] = "0-0";
  snprintf(idle, sizeof idle, "%lld", (long long)min_idle_ms);
  /* a few pages of the pending list; each scans up to 10 entries */
  for (int page = 0; page < 8; page++) {
    const char *a[] = {"XAUTOCLAIM", key,    KS_DIST_GROUP, consumer,
                       idle,         cursor, "COUNT",       "1"};
    redisReply *r;
    ks_code rc = ks_broker_cmd(b, 8, a, &r, err);
    if (rc)
      return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_ARRAY) {
      freeReplyObject(r);
      return bad_reply("XAUTOCLAIM", err);
    }
    ks_strlcpy(cursor, r->element[0]->str, sizeof cursor);
    if (r->element[1]->elements > 0)
      entry_of(r->element[1]->element[0], entry_id, json);
    freeReplyObject(r);
    if (entry_id[0])
      return deliveries_of(b, key, entry_id, deliveries, err);
    if (!strcmp(cursor, "0-0"))
      break;
  }
  return KS_OK;
}

ks_code ks_broker_touch(ks_broker *b, const char *key, const char *consumer,
                        const char *entry_id, ks_err *err) {
  const char *a[] = {"XCLAIM", key,      KS_DIST_GROUP, consumer,
                     "0",      entry_id, "JUSTID"};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 7, a, &r, err);
  freeReplyObject(r);
  return rc;
}

ks_code ks_broker_ack(ks_broker *b, const char *key, const char *entry_id,
                      ks_err *err) {
  const char *a[] = {"XACK", key, KS_DIST_GROUP, entry_id};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 4, a, &r, err);
  freeReplyObject(r);
  if (!rc)
    rc = ks_broker_del(b, key, entry_id, err);
  return rc;
}

ks_code ks_broker_del(ks_broker *b, const char *key, const char *entry_id,
                      ks_err *err) {
  const char *a[] = {"XDEL", key, entry_id};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 3, a, &r, err);
  freeReplyObject(r);
  return rc;
}

ks_code ks_broker_exists(ks_broker *b, const char *key, const char *entry_id,
                         bool *exists, ks_err *err) {
  const char *a[] = {"XRANGE", key, entry_id, entry_id};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 4, a, &r, err);
  if (rc)
    return rc;
  *exists = r->type == REDIS_REPLY_ARRAY && r->elements > 0;
  freeReplyObject(r);
  return KS_OK;
}

ks_code ks_broker_read(ks_broker *b, const char *key, const char *after,
                       int block_ms, int max, char (*ids)[64], char **texts,
                       int *n, ks_err *err) {
  *n = 0;
  char ms[16], count[16];
  snprintf(ms, sizeof ms, "%d", block_ms);
  snprintf(count, sizeof count, "%d", max);
  const char *a[] = {"XREAD", "COUNT",   count, "BLOCK",
                     ms,      "STREAMS", key,   after};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 8, a, &r, err);
  if (rc)
    return rc;
  const redisReply *es = entries_of(r);
  for (size_t i = 0; es && i < es->elements && *n < max; i++) {
    entry_of(es->element[i], ids[*n], &texts[*n]);
    if (ids[*n][0])
      (*n)++;
  }
  freeReplyObject(r);
  return KS_OK;
}
