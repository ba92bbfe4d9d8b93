/* broker.c — broker URL, connection and commands (see broker.h; DESIGN.md:
 * Workers). One hiredis context per ks_broker; a worker's heartbeat thread
 * opens its own, since a context is not shared between threads. */
#include "dist/broker_internal.h"
#include "dist/tls.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define URL_FORM "redis://[:PASSWORD@]HOST[:PORT][/DB] (or rediss://)"

static int hexval(int c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes src[0..n) into out; false on a bad escape or overflow. */
static bool decode(const char *src, size_t n, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int ch = (unsigned char)src[i];
    if (ch == '%') {
      if (i + 2 >= n)
        return false;
      int hi = hexval(src[i + 1]), lo = hexval(src[i + 2]);
      if (hi < 0 || lo < 0)
        return false;
      ch = hi * 16 + lo;
      i += 2;
    }
    if (o + 1 >= cap)
      return false;
    out[o++] = (char)ch;
  }
  out[o] = '\0';
  return true;
}

ks_code ks_broker_url_parse(const char *text, ks_broker_url *u, ks_err *err) {
  memset(u, 0, sizeof *u);
  u->port = 6379;
  if (!text || !*text)
    return ks_err_set(err, KS_ERR_INPUT,
                      "--broker: empty URL; expected " URL_FORM);
  const char *p;
  if (!strncmp(text, "redis://", 8)) {
    p = text + 8;
  } else if (!strncmp(text, "rediss://", 9)) {
    u->tls = true;
    p = text + 9;
  } else {
    return ks_err_set(err, KS_ERR_INPUT,
                      "--broker: the URL must start with redis:// or "
                      "rediss://; expected " URL_FORM);
  }
  const char *at = strrchr(p, '@');
  if (at) {
    const char *colon = memchr(p, ':', (size_t)(at - p));
    if (!colon)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--broker: the part before '@' must be "
                        "[USER]:PASSWORD; write redis://:PASSWORD@HOST for a "
                        "password alone");
    if (!decode(p, (size_t)(colon - p), u->user, sizeof u->user) ||
        !decode(colon + 1, (size_t)(at - colon - 1), u->password,
                sizeof u->password))
      return ks_err_set(err, KS_ERR_INPUT,
                        "--broker: the user or password is too long or has a "
                        "bad %%XX escape");
    if (!u->password[0])
      return ks_err_set(err, KS_ERR_INPUT,
                        "--broker: empty password after ':'; leave out "
                        "'[USER]:PASSWORD@' for a broker without one");
    p = at + 1;
  }
  const char *host_end;
  if (*p == '[') { /* [IPv6] */
    host_end = strchr(p, ']');
    if (!host_end)
      return ks_err_set(err, KS_ERR_INPUT, "--broker: '[' without ']'");
    if ((size_t)(host_end - p - 1) >= sizeof u->host)
      return ks_err_set(err, KS_ERR_INPUT, "--broker: host too long");
    memcpy(u->host, p + 1, (size_t)(host_end - p - 1));
    host_end++;
  } else {
    host_end = p + strcspn(p, ":/");
    if ((size_t)(host_end - p) >= sizeof u->host)
      return ks_err_set(err, KS_ERR_INPUT, "--broker: host too long");
    memcpy(u->host, p, (size_t)(host_end - p));
  }
  if (!u->host[0])
    return ks_err_set(err, KS_ERR_INPUT,
                      "--broker: no host; expected " URL_FORM);
  p = host_end;
  if (*p == ':') {
    char *end;
    errno = 0;
    long port = strtol(p + 1, &end, 10);
    if (end == p + 1 || errno || port < 1 || port > 65535 ||
        (*end && *end != '/'))
      return ks_err_set(err, KS_ERR_INPUT,
                        "--broker: port \"%.*s\" is not a number in 1..65535",
                        (int)strcspn(p + 1, "/"), p + 1);
    u->port = (int)port;
    p = end;
  }
  if (*p == '/' && p[1]) {
    char *end;
    errno = 0;
    long db = strtol(p + 1, &end, 10);
    if (end == p + 1 || *end || errno || db < 0 || db > 9999)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--broker: database \"%s\" is not a number in "
                        "0..9999",
                        p + 1);
    u->db = (int)db;
  } else if (*p && strcmp(p, "/")) {
    return ks_err_set(
        err, KS_ERR_INPUT,
        "--broker: unexpected \"%s\" after the host; expected " URL_FORM, p);
  }
  return KS_OK;
}

void ks_broker_url_display(const ks_broker_url *u, char *out, size_t n) {
  snprintf(out, n, "%s://%s%s%s%s:%d/%d", u->tls ? "rediss" : "redis", u->user,
           u->password[0] ? ":***" : "",
           u->password[0] || u->user[0] ? "@" : "", u->host, u->port, u->db);
}

ks_code ks_broker_cmd(ks_broker *b, int argc, const char **argv,
                      redisReply **out, ks_err *err) {
  *out = NULL;
  if (!b->c || b->c->err)
    return ks_err_set(err, KS_ERR_IO, "broker %s:%d: connection lost%s%s",
                      b->url.host, b->url.port, b->c ? ": " : "",
                      b->c ? b->c->errstr : "");
  size_t lens[16];
  if (argc > 16)
    return ks_err_set(err, KS_ERR_INTERNAL, "broker: too many arguments");
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  redisReply *r = redisCommandArgv(b->c, argc, argv, lens);
  if (!r)
    return ks_err_set(err, KS_ERR_IO, "broker %s:%d: connection lost: %s",
                      b->url.host, b->url.port,
                      b->c->errstr[0] ? b->c->errstr : "no reply");
  if (r->type == REDIS_REPLY_ERROR) {
    ks_code c =
        ks_err_set(err, KS_ERR_ENV, "broker %s:%d: %s: %.*s", b->url.host,
                   b->url.port, argv[0], (int)r->len, r->str);
    /* a restarted broker that is still loading its log answers LOADING */
    if (!strncmp(r->str, "LOADING", 7))
      c = err->code = KS_ERR_IO;
    freeReplyObject(r);
    return c;
  }
  *out = r;
  return KS_OK;
}

static ks_code open_ctx(ks_broker *b, ks_err *err) {
  const ks_broker_url *u = &b->url;
  redisContext *c;
  if (u->tls) { /* hiredis 0.14 has no TLS: it talks through a tunnel */
    int fd;
    ks_code rc = ks_tls_tunnel(u->host, u->port, 5, &fd, err);
    if (rc)
      return rc;
    c = redisConnectFd(fd);
    if (!c)
      close(fd);
  } else {
    struct timeval tv = {5, 0};
    c = redisConnectWithTimeout(u->host, u->port, tv);
  }
  if (!c)
    return ks_err_set(err, KS_ERR_NOMEM, "broker: out of memory");
  if (c->err) {
    ks_code rc = ks_err_set(err, KS_ERR_ENV,
                            "cannot reach the broker at %s:%d: %s; start "
                            "redis-server there or fix --broker",
                            u->host, u->port, c->errstr);
    redisFree(c);
    return rc;
  }
  /* a broker that stops answering must not hang a worker forever */
  struct timeval rt = {60, 0};
  redisSetTimeout(c, rt);
  b->c = c;
  redisReply *r = NULL;
  ks_code rc = KS_OK;
  if (u->password[0]) {
    const char *a3[] = {"AUTH", u->user, u->password};
    const char *a2[] = {"AUTH", u->password};
    rc = u->user[0] ? ks_broker_cmd(b, 3, a3, &r, err)
                    : ks_broker_cmd(b, 2, a2, &r, err);
    freeReplyObject(r);
    if (rc == KS_ERR_ENV) /* never echo the password: the server does not */
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "broker %s:%d refused the password (%s); check "
                      "the password in --broker redis://:PASSWORD@HOST",
                      u->host, u->port,
                      strstr(err->msg, "WRONGPASS") ? "WRONGPASS" : "AUTH");
  }
  if (!rc && u->db) {
    char db[16];
    snprintf(db, sizeof db, "%d", u->db);
    const char *a[] = {"SELECT", db};
    rc = ks_broker_cmd(b, 2, a, &r, err);
    freeReplyObject(r);
  }
  if (!rc) {
    rc = ks_broker_ping(b, err);
    if (rc == KS_ERR_ENV && strstr(err->msg, "NOAUTH"))
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "broker %s:%d needs a password; give --broker "
                      "redis://:PASSWORD@%s:%d",
                      u->host, u->port, u->host, u->port);
  }
  /* TLS 1.3: a broker that wants a client certificate says so only by
   * closing the connection after the handshake */
  if (rc == KS_ERR_IO && u->tls)
    rc = ks_err_set(err, KS_ERR_ENV,
                    "broker %s:%d closed the TLS connection before "
                    "answering; if it asks for client certificates "
                    "(redis-server tls-auth-clients, on by default), give "
                    "one in KSEARCH_BROKER_CERT and KSEARCH_BROKER_KEY",
                    u->host, u->port);
  if (rc) {
    redisFree(b->c);
    b->c = NULL;
  }
  return rc;
}

ks_code ks_broker_connect(const ks_broker_url *u, ks_broker **out,
                          ks_err *err) {
  *out = NULL;
  ks_broker *b = ks_xcalloc(1, sizeof *b);
  b->url = *u;
  ks_code rc = open_ctx(b, err);
  if (rc) {
    free(b);
    return rc;
  }
  *out = b;
  return KS_OK;
}

void ks_broker_free(ks_broker *b) {
  if (!b)
    return;
  if (b->c)
    redisFree(b->c);
  /* the password lived here */
  memset(&b->url, 0, sizeof b->url);
  free(b);
}

ks_code ks_broker_reconnect(ks_broker *b, ks_err *err) {
  if (b->c)
    redisFree(b->c);
  b->c = NULL;
  return open_ctx(b, err);
}

ks_code ks_broker_reconnect_wait(ks_broker *b, volatile int *stop,
                                 double deadline, ks_err *err) {
  double delay = 0.1, next_log = ks_now();
  for (;;) {
    ks_code rc = ks_broker_reconnect(b, err);
    if (rc == KS_OK || rc == KS_ERR_INPUT)
      return rc;
    if ((stop && *stop) || (deadline > 0 && ks_now() >= deadline))
      return rc;
    if (ks_now() >= next_log) {
      ks_log(KS_LOG_INFO, "%s; retrying", err->msg);
      next_log = ks_now() + 10;
    }
    struct timespec ts = {(time_t)delay,
                          (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&ts, NULL);
    delay = delay * 2 > 2 ? 2 : delay * 2;
  }
}

ks_code ks_broker_ping(ks_broker *b, ks_err *err) {
  const char *a[] = {"PING"};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 1, a, &r, err);
  freeReplyObject(r);
  return rc;
}

ks_code ks_broker_set(ks_broker *b, const char *key, const char *value,
                      int ttl_s, ks_err *err) {
  char ttl[16];
  snprintf(ttl, sizeof ttl, "%d", ttl_s);
  const char *a[] = {"SET", key, value, "EX", ttl};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, ttl_s > 0 ? 5 : 3, a, &r, err);
  freeReplyObject(r);
  return rc;
}

ks_code ks_broker_del_key(ks_broker *b, const char *key, ks_err *err) {
  const char *a[] = {"DEL", key};
  redisReply *r;
  ks_code rc = ks_broker_cmd(b, 2, a, &r, err);
  freeReplyObject(r);
  return rc;
}

ks_code ks_broker_scan_json(ks_broker *b, const char *pattern, json_t **out,
                            ks_err *err) {
  *out = json_array();
  char cursor[32] = "0";
  do {
    const char *a[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    redisReply *r;
    ks_code rc = ks_broker_cmd(b, 6, a, &r, err);
    if (rc) {
      json_decref(*out);
      *out = NULL;
      return rc;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      freeReplyObject(r);
      json_decref(*out);
      *out = NULL;
      return ks_err_set(err, KS_ERR_ENV, "broker: unexpected SCAN reply");
    }
    ks_strlcpy(cursor, r->element[0]->str ? r->element[0]->str : "0",
               sizeof cursor);
    redisReply *keys = r->element[1];
    for (size_t i = 0; i < keys->elements; i++) {
      const char *g[] = {"GET", keys->element[i]->str};
      redisReply *v;
      if (ks_broker_cmd(b, 2, g, &v, err) == KS_OK) {
        if (v->type == REDIS_REPLY_STRING) {
          json_t *j = json_loadb(v->str, v->len, 0, NULL);
          if (json_is_object(j))
            json_array_append_new(*out, j);
          else
            json_decref(j);
        }
        freeReplyObject(v);
      }
    }
    freeReplyObject(r);
  } while (strcmp(cursor, "0"));
  return KS_OK;
}
