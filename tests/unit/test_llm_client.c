/* test_llm_client.c — the LLM client against a tiny in-process HTTP server
 * on 127.0.0.1 (src/llm/client.c): a 429 with Retry-After is waited out and
 * retried, every try is recorded in the store, a 401 that echoes the key
 * leaves no key in the error, the store or the cache; the token budget stops
 * calls with its own code; the cache answers a repeated request without the
 * network. */
#include "llm/llm.h"
#include "store/store.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct canned {
  int status;
  const char *headers; /* extra header lines, each ending in \r\n */
  const char *body;
} canned;

static struct {
  canned c[8];
  int n, served;
  int fd, port;
  char last_request[8192];
  pthread_t th;
} srv;

static void *serve(void *arg) {
  (void)arg;
  while (srv.served < srv.n) {
    int cfd = accept(srv.fd, NULL, NULL);
    if (cfd < 0)
      break;
    char buf[8192];
    size_t got = 0;
    for (;;) {
      ssize_t r = read(cfd, buf + got, sizeof buf - 1 - got);
      if (r <= 0)
        break;
      got += (size_t)r;
      buf[got] = 0;
      char *end = strstr(buf, "\r\n\r\n");
      char *cl = strcasestr(buf, "content-length:");
      if (end && cl && got >= (size_t)(end + 4 - buf) + (size_t)atol(cl + 15))
        break;
    }
    memcpy(srv.last_request, buf, got + 1);
    const canned *c = &srv.c[srv.served++];
    char out[8192];
    int len = snprintf(out, sizeof out,
                       "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                       "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
                       c->status, strlen(c->body), c->headers ? c->headers : "",
                       c->body);
    if (write(cfd, out, (size_t)len) < 0)
      perror("write");
    close(cfd);
  }
  return NULL;
}

static void start(const canned *c, int n) {
  memset(&srv, 0, sizeof srv);
  memcpy(srv.c, c, sizeof *c * (size_t)n);
  srv.n = n;
  srv.fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert_eq(bind(srv.fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t al = sizeof a;
  getsockname(srv.fd, (struct sockaddr *)&a, &al);
  srv.port = ntohs(a.sin_port);
  listen(srv.fd, 4);
  pthread_create(&srv.th, NULL, serve, NULL);
}

static void stop(void) {
  shutdown(srv.fd, SHUT_RDWR);
  close(srv.fd);
  pthread_join(srv.th, NULL);
}

static void config(ks_llm_config *c) {
  ks_llm_config_default(c);
  snprintf(c->base_url, sizeof c->base_url, "http://127.0.0.1:%d/v1", srv.port);
  strcpy(c->model, "test-model");
  c->timeout_s = 5;
  c->backoff_base_s = 0.01;
  c->max_retries = 2;
}

#define OK_BODY(text, pt, ct)                                                  \
  "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","            \
  "\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"         \
  "\"prompt_tokens\":" #pt ",\"completion_tokens\":" #ct "}}"

static const ks_llm_msg k_msgs[] = {{"system", "be exact"},
                                    {"user", "(ksearch prompt: code) hi"}};

Test(llm_client, retry_after_is_honoured_and_tries_recorded) {
  canned c[] = {{429, "Retry-After: 1\r\n",
                 "{\"error\":{\"message\":\"slow "
                 "down\"}}"},
                {200, NULL, OK_BODY("hello", 7, 3)}};
  start(c, 2);
  char dir[] = "/tmp/ksearch-llm-client.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char db[256];
  snprintf(db, sizeof db, "%s/ksearch.db", dir);
  ks_store *st;
  ks_err err;
  cr_assert_eq(ks_store_open(db, true, &st, &err), KS_OK, "%s", err.msg);
  ks_llm_config cfg;
  config(&cfg);
  ks_llm *llm;
  cr_assert_eq(ks_llm_new(&cfg, st, &llm, &err), KS_OK);
  ks_llm_reply r;
  double t0 = ks_now();
  cr_assert_eq(ks_llm_chat(llm, "code", true, k_msgs, 2, &r, &err), KS_OK, "%s",
               err.msg);
  double took = ks_now() - t0;
  cr_assert_geq(took, 0.95, "waited %.2f s, Retry-After said 1 s", took);
  cr_assert_str_eq(r.text, "hello");
  cr_assert_eq(r.outcome, KS_LLM_ANSWER);
  cr_assert_eq(r.tries, 2);
  cr_assert_eq(ks_llm_tokens_used(llm), 10);
  ks_llm_reply_free(&r);
  stop();
  sqlite3_stmt *q;
  sqlite3_prepare_v2(ks_store_handle(st),
                     "SELECT group_concat(status), count(*) FROM llm_calls", -1,
                     &q, NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "http_429,ok");
  sqlite3_finalize(q);
  ks_llm_free(llm);
  ks_store_close(st);
  ks_rm_rf(dir);
}

Test(llm_client, unauthorized_names_the_variable_and_hides_the_key) {
  const char *key = "sk-test-0123456789abcdefSECRET";
  setenv("KSEARCH_API_KEY", key, 1);
  canned c[] = {{401, NULL,
                 "{\"error\":{\"message\":\"Incorrect API key provided: "
                 "sk-test-0123456789abcdefSECRET\"}}"}};
  start(c, 1);
  char dir[] = "/tmp/ksearch-llm-client.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char db[256];
  snprintf(db, sizeof db, "%s/ksearch.db", dir);
  ks_store *st;
  ks_err err;
  cr_assert_eq(ks_store_open(db, true, &st, &err), KS_OK, "%s", err.msg);
  ks_llm_config cfg;
  config(&cfg);
  ks_llm *llm;
  cr_assert_eq(ks_llm_new(&cfg, st, &llm, &err), KS_OK);
  ks_llm_reply r;
  cr_assert_eq(ks_llm_chat(llm, "init", false, k_msgs, 2, &r, &err),
               KS_ERR_ENV);
  stop();
  cr_assert(strstr(srv.last_request, "Authorization: Bearer sk-test-"),
            "the key is sent");
  cr_assert(strstr(err.msg, "401") && strstr(err.msg, "KSEARCH_API_KEY"), "%s",
            err.msg);
  cr_assert_null(strstr(err.msg, "SECRET"), "%s", err.msg);
  ks_llm_free(llm);
  ks_store_close(st);
  char *all = NULL;
  cr_assert_eq(ks_read_file(db, &all, NULL, &err), KS_OK);
  cr_assert_null(strstr(all, "SECRET"), "the key reached the store");
  free(all);
  ks_rm_rf(dir);
  unsetenv("KSEARCH_API_KEY");
}

Test(llm_client, token_budget_and_cache) {
  canned c[] = {{200, NULL, OK_BODY("first", 20, 10)}};
  start(c, 1);
  char dir[] = "/tmp/ksearch-llm-cache.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  ks_llm_config cfg;
  config(&cfg);
  snprintf(cfg.cache_dir, sizeof cfg.cache_dir, "%s", dir);
  cfg.token_budget = 25;
  ks_llm *llm;
  ks_err err;
  cr_assert_eq(ks_llm_new(&cfg, NULL, &llm, &err), KS_OK);
  ks_llm_reply r;
  cr_assert_eq(ks_llm_chat(llm, "code", true, k_msgs, 2, &r, &err), KS_OK, "%s",
               err.msg);
  cr_assert_not(r.from_cache);
  ks_llm_reply_free(&r);
  stop();
  cr_assert(ks_llm_budget_spent(llm));
  cr_assert_eq(ks_llm_chat(llm, "code", true, k_msgs, 2, &r, &err),
               KS_LLM_ERR_TOKEN_BUDGET);
  cr_assert(strstr(err.msg, "budget"), "%s", err.msg);
  ks_llm_free(llm);
  /* a new client with the same cache: answered from disk, server gone */
  cfg.token_budget = 0;
  cr_assert_eq(ks_llm_new(&cfg, NULL, &llm, &err), KS_OK);
  cr_assert_eq(ks_llm_chat(llm, "code", true, k_msgs, 2, &r, &err), KS_OK, "%s",
               err.msg);
  cr_assert(r.from_cache);
  cr_assert_str_eq(r.text, "first");
  cr_assert_eq(r.prompt_tokens, 20);
  ks_llm_reply_free(&r);
  ks_llm_free(llm);
  ks_rm_rf(dir);
}
