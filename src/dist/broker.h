/* broker.h — the Redis connection of distributed evaluation (DESIGN.md:
 * Workers). A run and its workers meet on a Redis server through hiredis:
 * jobs go on one stream per target, read by the consumer group of that
 * target's workers; results go back on one stream per run. This header owns
 * the broker URL, the connection (AUTH, SELECT, reconnection) and the stream
 * operations both sides use; job.h says what travels, worker.h runs jobs.
 *
 * Every call returns a ks_code: KS_ERR_IO when the connection broke (the
 * caller reconnects and retries: delivery is at least once and results are
 * deduplicated by job id), KS_ERR_INPUT for a refused password or bad URL,
 * KS_ERR_ENV for a broker that cannot be reached or answers an error. */
#ifndef KS_DIST_BROKER_H
#define KS_DIST_BROKER_H

#include "ksearch.h"

#include <jansson.h>

#define KS_DIST_GROUP "ksearch-workers"
#define KS_DIST_KEY_MAX 160

typedef struct ks_broker_url {
  bool tls; /* rediss:// */
  char host[256];
  int port; /* default 6379 */
  int db;   /* default 0 */
  char user[128], password[256];
} ks_broker_url;

/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or rediss://...; errors name
 * the part that is wrong and show the expected form. */
ks_code ks_broker_url_parse(const char *text, ks_broker_url *out, ks_err *err);
/* The URL with any password replaced by "***" (for messages and logs). */
void ks_broker_url_display(const ks_broker_url *u, char *out, size_t n);

typedef struct ks_broker ks_broker;

/* Connects, authenticates and selects the database. A refused password is
 * KS_ERR_INPUT; a server that cannot be reached KS_ERR_ENV. rediss:// goes
 * through the TLS tunnel of tls.h (certificate errors: KS_ERR_ENV; unusable
 * certificate files: KS_ERR_INPUT). */
ks_code ks_broker_connect(const ks_broker_url *u, ks_broker **out, ks_err *err);
void ks_broker_free(ks_broker *b);
/* Drops the connection and connects again (same URL). */
ks_code ks_broker_reconnect(ks_broker *b, ks_err *err);
/* Reconnects until it works, sleeping 0.1 s doubling to 2 s, until
 * *stop becomes non-zero or deadline (ks_now() seconds, 0 = none) passes. */
ks_code ks_broker_reconnect_wait(ks_broker *b, volatile int *stop,
                                 double deadline, ks_err *err);

/* ---- streams (stream.c). Field "j" of every entry holds the JSON text. */
/* Creates the consumer group (from the stream's start) and the stream;
 * an existing group is fine. */
ks_code ks_broker_ensure_group(ks_broker *b, const char *key, ks_err *err);
/* XADD key * j TEXT; entry_id (may be NULL) receives the entry id. */
ks_code ks_broker_add(ks_broker *b, const char *key, const char *json,
                      char entry_id[64], ks_err *err);
/* One new entry for this consumer (XREADGROUP ... BLOCK ms COUNT 1 >).
 * *json is NULL when none came within block_ms; else malloc'd. */
ks_code ks_broker_read_group(ks_broker *b, const char *key,
                             const char *consumer, int block_ms,
                             char entry_id[64], char **json, ks_err *err);
/* Takes over one entry that another consumer received and has not
 * acknowledged for at least min_idle_ms (XAUTOCLAIM), with the number of
 * times it was delivered, this one included. *json NULL when none. */
ks_code ks_broker_claim_idle(ks_broker *b, const char *key,
                             const char *consumer, int64_t min_idle_ms,
                             char entry_id[64], char **json,
                             int64_t *deliveries, ks_err *err);
/* Resets the idle time of our own pending entry (XCLAIM ... JUSTID): the
 * heartbeat that keeps a long evaluation from being claimed. */
ks_code ks_broker_touch(ks_broker *b, const char *key, const char *consumer,
                        const char *entry_id, ks_err *err);
/* XACK + XDEL: the job is done and its entry can go. */
ks_code ks_broker_ack(ks_broker *b, const char *key, const char *entry_id,
                      ks_err *err);
/* Whether the entry is still in the stream (XRANGE id id). */
ks_code ks_broker_exists(ks_broker *b, const char *key, const char *entry_id,
                         bool *exists, ks_err *err);
/* Plain reader (XREAD BLOCK ms COUNT max STREAMS key after): up to max
 * entries after `after`; ids[i] and texts[i] (malloc'd) for i < *n. */
ks_code ks_broker_read(ks_broker *b, const char *key, const char *after,
                       int block_ms, int max, char (*ids)[64], char **texts,
                       int *n, ks_err *err);
ks_code ks_broker_del(ks_broker *b, const char *key, const char *entry_id,
                      ks_err *err);

/* ---- keys and values */
ks_code ks_broker_set(ks_broker *b, const char *key, const char *value,
                      int ttl_s, ks_err *err);
ks_code ks_broker_del_key(ks_broker *b, const char *key, ks_err *err);
/* Every value of keys matching pattern (SCAN + GET), as a JSON array of
 * the values that parse as JSON objects. */
ks_code ks_broker_scan_json(ks_broker *b, const char *pattern, json_t **out,
                            ks_err *err);
/* PING round trip, for the benchmark and health checks. */
ks_code ks_broker_ping(ks_broker *b, ks_err *err);

#endif
