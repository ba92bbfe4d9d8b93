/* client.c — one chat completion against an OpenAI-compatible endpoint, with
 * the retries, the in-flight gate, the token budget, the call cache and the
 * recording that llm.h promises. libcurl does the HTTP (one easy handle per
 * try: requests are seconds long, connection reuse buys nothing here). */
#include "llm/llm.h"
#include "store/store.h"
#include "util/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An error body worth keeping is short; an answer body is at most the answer
 * cap plus JSON escaping and the envelope. */
#define ERROR_BODY_MAX (64 * 1024)

struct ks_llm {
  ks_llm_config cfg;
  struct ks_store *store;
  char *key; /* NULL when the environment holds none */
  ks_llm_gate gate;
  pthread_mutex_t mu; /* tokens, rng, store */
  int64_t used;
  ks_rng rng;
  json_t *replayed; /* cache entries that answered (order-matched replay) */
};

static const char *const k_outcomes[] = {"answer", "empty", "truncated",
                                         "refused", "oversized"};

const char *ks_llm_outcome_name(ks_llm_outcome o) {
  return (unsigned)o < 5 ? k_outcomes[o] : "?";
}

bool ks_llm_outcome_parse(const char *name, ks_llm_outcome *out) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(name, k_outcomes[i])) {
      *out = (ks_llm_outcome)i;
      return true;
    }
  return false;
}

void ks_llm_reply_free(ks_llm_reply *r) {
  free(r->text);
  memset(r, 0, sizeof *r);
}

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

ks_code ks_llm_new(const ks_llm_config *cfg, struct ks_store *store,
                   ks_llm **out, ks_err *err) {
  (void)err;
  pthread_once(&g_curl_once, curl_init_once);
  ks_llm *c = ks_xcalloc(1, sizeof *c);
  c->cfg = *cfg;
  c->store = store;
  const char *k = getenv("KSEARCH_API_KEY");
  if (!k || !*k)
    k = getenv("OPENAI_API_KEY");
  if (k && *k)
    c->key = ks_strdup(k);
  ks_llm_gate_init(&c->gate, cfg->max_inflight);
  pthread_mutex_init(&c->mu, NULL);
  c->replayed = json_object();
  ks_rng_seed(&c->rng, (uint64_t)ks_now_ns(), 0x11a);
  *out = c;
  return KS_OK;
}

void ks_llm_free(ks_llm *c) {
  if (!c)
    return;
  if (c->key) {
    memset(c->key, 0, strlen(c->key));
    free(c->key);
  }
  ks_llm_gate_destroy(&c->gate);
  json_decref(c->replayed);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

const ks_llm_config *ks_llm_config_of(const ks_llm *c) { return &c->cfg; }

int64_t ks_llm_tokens_used(const ks_llm *c) { return c->used; }

bool ks_llm_budget_spent(const ks_llm *c) {
  return c->cfg.token_budget > 0 && c->used >= c->cfg.token_budget;
}

/* ---------------------------------------------------------------- transfer */

typedef struct xfer {
  CURL *h;
  bool stream;
  ks_buf body; /* non-streamed answer, or the body of an error */
  size_t body_cap;
  bool over; /* stopped: the answer passed the cap */
  ks_llm_sse sse;
  char retry_after[128];
} xfer;

static size_t on_header(char *data, size_t size, size_t n, void *user) {
  xfer *x = user;
  size_t len = size * n;
  if (len > 12 && !strncasecmp(data, "retry-after:", 12)) {
    size_t v = len - 12;
    if (v >= sizeof x->retry_after)
      v = sizeof x->retry_after - 1;
    memcpy(x->retry_after, data + 12, v);
    x->retry_after[v] = 0;
    char *e = x->retry_after + strlen(x->retry_after);
    while (e > x->retry_after && (e[-1] == '\r' || e[-1] == '\n'))
      *--e = 0;
  }
  return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *user) {
  xfer *x = user;
  size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
  if (x->stream && status == 200) {
    ks_llm_sse_feed(&x->sse, data, len);
    if (x->sse.oversized) {
      x->over = true;
      return 0; /* stop downloading: the rest would be dropped anyway */
    }
    return len;
  }
  size_t cap = status == 200 ? x->body_cap : ERROR_BODY_MAX;
  if (x->body.len + len > cap) {
    if (status == 200) {
      x->over = true;
      return 0;
    }
    len = cap > x->body.len ? cap - x->body.len : 0; /* keep the start */
    ks_buf_append(&x->body, data, len);
    return size * n;
  }
  ks_buf_append(&x->body, data, len);
  return len;
}

/* ---------------------------------------------------------------- helpers */

static int64_t estimate_tokens(size_t bytes) {
  return (int64_t)((bytes + 3) / 4);
}

static size_t messages_bytes(const ks_llm_msg *m, int n) {
  size_t b = 0;
  for (int i = 0; i < n; i++)
    b += strlen(m[i].content ? m[i].content : "");
  return b;
}

static bool blank(const char *s) {
  for (; s && *s; s++)
    if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t')
      return false;
  return true;
}

static void record(ks_llm *c, const char *purpose, const char *model,
                   const char *request, const char *response,
                   const char *status, int64_t pt, int64_t ct, double lat) {
  if (!c->store)
    return;
  char *red = ks_llm_redact(response ? response : "", c->key);
  ks_llm_utf8_repair(red, strlen(red)); /* error bodies may be any bytes */
  ks_store_llm_call call = {purpose, model, request, red, status, pt, ct, lat};
  ks_err e;
  pthread_mutex_lock(&c->mu);
  if (ks_store_add_llm_call(c->store, &call, NULL, &e))
    ks_log(KS_LOG_INFO, "llm: could not record a call: %s", e.msg);
  pthread_mutex_unlock(&c->mu);
  free(red);
}

static void sleep_s(double s) {
  if (s <= 0)
    return;
  struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}

/* The server's own words from an error body ({"error":{"message":...}} or
 * text), one line, at most n bytes. */
static void error_message(const char *body, char *out, size_t n) {
  json_t *j = json_loads(body ? body : "", 0, NULL);
  const char *m = NULL;
  json_t *e = json_object_get(j, "error");
  if (json_is_string(e))
    m = json_string_value(e);
  else
    m = json_string_value(json_object_get(e, "message"));
  if (!m)
    m = json_string_value(json_object_get(j, "message"));
  snprintf(out, n, "%s", m ? m : (body ? body : ""));
  json_decref(j);
  for (char *p = out; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  if (strlen(out) > 300)
    strcpy(out + 297, "...");
}

static const char *status_hint(long status) {
  switch (status) {
  case 401:
  case 403: return "check the API key in KSEARCH_API_KEY (or OPENAI_API_KEY)";
  case 404:
    return "check --llm-base-url (it ends before /chat/completions, e.g. "
           "https://api.openai.com/v1) and --llm-model";
  case 400:
  case 422:
    return "the server refused the request's options; check --llm-model, "
           "--llm-max-tokens, --llm-temperature and --llm-reasoning-effort";
  default: return "check the endpoint";
  }
}

/* Fills r from a complete non-streamed body; false when it is not a chat
 * completion (then *why says so). */
static bool parse_body(char *body, size_t len, ks_llm_reply *r, char *why,
                       size_t why_n) {
  r->utf8_repaired = ks_llm_utf8_repair(body, len) > 0;
  json_error_t je;
  json_t *j = json_loadb(body, len, 0, &je);
  if (!j) {
    snprintf(why, why_n, "the body is not JSON (%s)", je.text);
    return false;
  }
  json_t *ch = json_array_get(json_object_get(j, "choices"), 0);
  json_t *msg = json_object_get(ch, "message");
  if (!json_is_object(msg)) {
    snprintf(why, why_n, "no choices[0].message in the body");
    json_decref(j);
    return false;
  }
  json_t *content = json_object_get(msg, "content");
  const char *t = json_string_value(content);
  r->text = t ? ks_strdup(t) : ks_strdup("");
  const char *refusal = json_string_value(json_object_get(msg, "refusal"));
  const char *f = json_string_value(json_object_get(ch, "finish_reason"));
  ks_strlcpy(r->finish_reason, f ? f : "", sizeof r->finish_reason);
  if (refusal && *refusal) {
    r->outcome = KS_LLM_REFUSED;
    if (blank(r->text)) {
      free(r->text);
      r->text = ks_strdup(refusal);
    }
  }
  json_t *u = json_object_get(j, "usage");
  json_t *pt = json_object_get(u, "prompt_tokens");
  json_t *ct = json_object_get(u, "completion_tokens");
  r->prompt_tokens = json_is_integer(pt) ? json_integer_value(pt) : -1;
  r->completion_tokens = json_is_integer(ct) ? json_integer_value(ct) : -1;
  json_decref(j);
  return true;
}

static void classify(ks_llm_reply *r) {
  if (r->outcome == KS_LLM_OVERSIZED || r->outcome == KS_LLM_REFUSED)
    return;
  if (!strcmp(r->finish_reason, "content_filter"))
    r->outcome = KS_LLM_REFUSED;
  else if (!strcmp(r->finish_reason, "length"))
    r->outcome = KS_LLM_TRUNCATED;
  else if (blank(r->text))
    r->outcome = KS_LLM_EMPTY;
  else
    r->outcome = KS_LLM_ANSWER;
}

static json_t *build_request(const ks_llm *c, const char *model,
                             const ks_llm_msg *msgs, int n) {
  json_t *req = json_object();
  json_object_set_new(req, "model", json_string(model));
  json_t *arr = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(
        arr, json_pack("{s:s, s:s}", "role", msgs[i].role, "content",
                       msgs[i].content ? msgs[i].content : ""));
  json_object_set_new(req, "messages", arr);
  if (c->cfg.temperature >= 0)
    json_object_set_new(req, "temperature", json_real(c->cfg.temperature));
  if (c->cfg.max_tokens > 0)
    json_object_set_new(req, "max_tokens", json_integer(c->cfg.max_tokens));
  if (c->cfg.reasoning_effort[0])
    json_object_set_new(req, "reasoning_effort",
                        json_string(c->cfg.reasoning_effort));
  if (c->cfg.stream) {
    json_object_set_new(req, "stream", json_true());
    json_object_set_new(req, "stream_options",
                        json_pack("{s:b}", "include_usage", 1));
  }
  return req;
}

/* ---------------------------------------------------------------- one try */

typedef enum { TRY_DONE, TRY_RETRY, TRY_FATAL } try_result;

static try_result one_try(ks_llm *c, const char *purpose, const char *model,
                          const char *req_text, ks_llm_reply *r,
                          double *retry_after, char *why, size_t why_n,
                          char status_out[32]) {
  xfer x;
  memset(&x, 0, sizeof x);
  x.stream = c->cfg.stream;
  x.body_cap = c->cfg.max_answer_bytes + c->cfg.max_answer_bytes / 4 + 65536;
  ks_llm_sse_init(&x.sse, c->cfg.max_answer_bytes);
  x.h = curl_easy_init();
  if (!x.h) {
    snprintf(why, why_n, "libcurl could not start a transfer");
    snprintf(status_out, 32, "%s", "transport_error");
    ks_llm_sse_free(&x.sse);
    return TRY_FATAL;
  }
  char url[600];
  snprintf(url, sizeof url, "%s/chat/completions", c->cfg.base_url);
  struct curl_slist *hdr = NULL;
  hdr = curl_slist_append(hdr, "Content-Type: application/json");
  if (x.stream)
    hdr = curl_slist_append(hdr, "Accept: text/event-stream");
  if (c->key) {
    size_t n = strlen(c->key) + 32;
    char *auth = ks_xmalloc(n);
    snprintf(auth, n, "Authorization: Bearer %s", c->key);
    hdr = curl_slist_append(hdr, auth);
    memset(auth, 0, n);
    free(auth);
  }
  long timeout_ms = (long)(c->cfg.timeout_s * 1000);
  curl_easy_setopt(x.h, CURLOPT_URL, url);
  curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(x.h, CURLOPT_POSTFIELDS, req_text);
  curl_easy_setopt(x.h, CURLOPT_POSTFIELDSIZE_LARGE,
                   (curl_off_t)strlen(req_text));
  curl_easy_setopt(x.h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(x.h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(x.h, CURLOPT_CONNECTTIMEOUT_MS,
                   timeout_ms < 10000 ? timeout_ms : 10000L);
  /* a local server never goes through a proxy */
  curl_easy_setopt(x.h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  curl_easy_setopt(x.h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(x.h, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(x.h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(x.h, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(x.h, CURLOPT_USERAGENT, "ksearch");

  double t0 = ks_now();
  ks_llm_gate_enter(&c->gate);
  CURLcode cc = curl_easy_perform(x.h);
  ks_llm_gate_leave(&c->gate);
  r->latency_s = ks_now() - t0;
  long status = 0;
  curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(x.h);
  curl_slist_free_all(hdr);
  *retry_after = ks_llm_parse_retry_after(
      x.retry_after[0] ? x.retry_after : NULL, time(NULL));

  try_result res = TRY_DONE;
  const char *store_text = NULL;
  if (x.over) {
    /* our own cap stopped the transfer: an oversized answer, not a failure */
    r->outcome = KS_LLM_OVERSIZED;
    if (x.stream) {
      r->text = ks_strdup(x.sse.content ? x.sse.content : "");
    } else {
      /* the body is cut JSON: keep its start for the record only */
      size_t keep = x.body.len < 4096 ? x.body.len : 4096;
      r->text = ks_xmalloc(keep + 1);
      memcpy(r->text, x.body.data ? x.body.data : "", keep);
      r->text[keep] = 0;
      ks_llm_utf8_repair(r->text, keep);
    }
    snprintf(status_out, 32, "%s", "oversized");
    store_text = r->text;
  } else if (cc != CURLE_OK) {
    bool timeout = cc == CURLE_OPERATION_TIMEDOUT;
    snprintf(why, why_n, "%s after %.1f s (%s)",
             timeout ? "no complete answer" : "transfer failed", r->latency_s,
             curl_easy_strerror(cc));
    snprintf(status_out, 32, "%s", timeout ? "timeout" : "transport_error");
    /* a stream that delivered part of an answer and then stalled counts as
     * cut: worth another try */
    res = TRY_RETRY;
    if (cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL)
      res = TRY_FATAL;
    store_text = x.stream ? x.sse.content : x.body.data;
  } else if (status != 200) {
    char msg[400];
    error_message(x.body.data, msg, sizeof msg);
    snprintf(why, why_n, "HTTP %ld: %s", status, msg);
    snprintf(status_out, 32, "http_%ld", status);
    res = ks_llm_retryable_status(status) ? TRY_RETRY : TRY_FATAL;
    if (res == TRY_FATAL) {
      size_t l = strlen(why);
      snprintf(why + l, why_n - l, "; %s", status_hint(status));
    }
    store_text = x.body.data;
  } else if (x.stream) {
    ks_llm_sse_finish(&x.sse);
    r->text = ks_strdup(x.sse.content ? x.sse.content : "");
    r->utf8_repaired = x.sse.repaired > 0;
    ks_strlcpy(r->finish_reason, x.sse.finish_reason, sizeof r->finish_reason);
    r->prompt_tokens = x.sse.prompt_tokens;
    r->completion_tokens = x.sse.completion_tokens;
    if (x.sse.refusal[0]) {
      r->outcome = KS_LLM_REFUSED;
      if (blank(r->text)) {
        free(r->text);
        r->text = ks_strdup(x.sse.refusal);
      }
    }
    store_text = r->text;
    if (x.sse.error[0]) {
      snprintf(why, why_n, "error in the stream: %s", x.sse.error);
      snprintf(status_out, 32, "%s", "stream_error");
      res = TRY_RETRY;
    } else if (!x.sse.done && !x.sse.finish_reason[0]) {
      snprintf(why, why_n,
               "the stream ended after %zu bytes of answer without "
               "[DONE] or a finish_reason (cut)",
               x.sse.content_len);
      snprintf(status_out, 32, "%s", "stream_cut");
      r->outcome = KS_LLM_TRUNCATED; /* kept if no retry is left */
      res = TRY_RETRY;
    } else {
      classify(r);
      snprintf(status_out, 32, "%s",
               r->outcome == KS_LLM_ANSWER ? "ok"
                                           : ks_llm_outcome_name(r->outcome));
    }
  } else {
    char empty[1] = "";
    if (!parse_body(x.body.data ? x.body.data : empty, x.body.len, r, why,
                    why_n)) {
      snprintf(status_out, 32, "%s", "bad_body");
      store_text = x.body.data;
      res = TRY_RETRY;
    } else {
      classify(r);
      snprintf(status_out, 32, "%s",
               r->outcome == KS_LLM_ANSWER ? "ok"
                                           : ks_llm_outcome_name(r->outcome));
      store_text = r->text;
    }
  }
  record(c, purpose, model, req_text, store_text, status_out,
         res == TRY_DONE ? r->prompt_tokens : -1,
         res == TRY_DONE ? r->completion_tokens : -1, r->latency_s);
  if (res != TRY_DONE && strcmp(status_out, "stream_cut")) {
    free(r->text);
    r->text = NULL;
  }
  ks_buf_free(&x.body);
  ks_llm_sse_free(&x.sse);
  return res;
}

/* ---------------------------------------------------------------- chat */

ks_code ks_llm_chat(ks_llm *c, const char *purpose, bool coder,
                    const ks_llm_msg *msgs, int n_msgs, ks_llm_reply *out,
                    ks_err *err) {
  memset(out, 0, sizeof *out);
  if (ks_llm_budget_spent(c))
    return ks_err_set(err, KS_LLM_ERR_TOKEN_BUDGET,
                      "the LLM token budget is spent (%lld of %lld tokens)",
                      (long long)c->used, (long long)c->cfg.token_budget);
  const char *model =
      coder && c->cfg.coder_model[0] ? c->cfg.coder_model : c->cfg.model;
  json_t *req = build_request(c, model, msgs, n_msgs);
  char *req_text = json_dumps(req, JSON_COMPACT);
  char key[33] = "";
  ks_code rc = KS_OK;
  bool hit = false;
  if (c->cfg.cache_dir[0]) {
    ks_llm_cache_key(req, key);
    ks_llm_cache_get(c->cfg.cache_dir, key, &hit, out);
    if (hit) {
      record(c, purpose, model, req_text, out->text, "cache_hit",
             out->prompt_tokens, out->completion_tokens, 0);
      pthread_mutex_lock(&c->mu);
      json_object_set_new(c->replayed, key, json_true());
      pthread_mutex_unlock(&c->mu);
    } else if (c->cfg.cache_by_order) {
      char got[33];
      pthread_mutex_lock(&c->mu);
      ks_llm_cache_get_next(c->cfg.cache_dir, req, c->replayed, got, &hit, out);
      pthread_mutex_unlock(&c->mu);
      if (hit) {
        char kind[64];
        ks_llm_prompt_kind(req, kind, sizeof kind);
        ks_log(KS_LOG_INFO,
               "llm %s: no recorded request equals this %s prompt; "
               "answered by order with %s.json (--llm-cache-match order)",
               purpose, kind[0] ? kind : "unlabelled", got);
        record(c, purpose, model, req_text, out->text, "cache_order",
               out->prompt_tokens, out->completion_tokens, 0);
      }
    }
  }
  char why[1024] = "";
  for (int t = 0; !hit; t++) {
    double ra = -1;
    char status[32] = "";
    ks_llm_reply_free(out);
    out->tries = t + 1;
    try_result tr =
        one_try(c, purpose, model, req_text, out, &ra, why, sizeof why, status);
    if (tr == TRY_DONE)
      break;
    if (tr == TRY_RETRY && t >= c->cfg.max_retries && out->text) {
      /* a stream cut on every try: hand over what came, marked truncated */
      ks_log(KS_LOG_INFO,
             "llm %s: stream cut on every try; using the part "
             "that came (%zu bytes)",
             purpose, strlen(out->text));
      break;
    }
    char *safe = ks_llm_redact(why, c->key);
    if (tr == TRY_FATAL || t >= c->cfg.max_retries) {
      rc =
          ks_err_set(err, KS_ERR_ENV, "LLM endpoint %s (model %s) failed%s: %s",
                     c->cfg.base_url, model,
                     tr == TRY_FATAL ? "" : " after every retry", safe);
      free(safe);
      break;
    }
    pthread_mutex_lock(&c->mu);
    double u = ks_rng_uniform(&c->rng);
    pthread_mutex_unlock(&c->mu);
    double d =
        ks_llm_backoff_s(c->cfg.backoff_base_s, c->cfg.backoff_max_s, t, ra, u);
    ks_log(KS_LOG_INFO, "llm %s: %s; retry %d of %d in %.1f s%s", purpose, safe,
           t + 1, c->cfg.max_retries, d, ra >= 0 ? " (Retry-After)" : "");
    free(safe);
    sleep_s(d);
  }
  if (!rc) {
    if (out->prompt_tokens < 0)
      out->prompt_tokens = estimate_tokens(messages_bytes(msgs, n_msgs));
    if (out->completion_tokens < 0)
      out->completion_tokens = estimate_tokens(strlen(out->text));
    pthread_mutex_lock(&c->mu);
    c->used += out->prompt_tokens + out->completion_tokens;
    pthread_mutex_unlock(&c->mu);
    if (c->cfg.cache_dir[0] && !hit) {
      ks_llm_reply red = *out;
      red.text = ks_llm_redact(out->text, c->key);
      ks_err ce;
      if (ks_llm_cache_put(c->cfg.cache_dir, key, req, &red, &ce))
        ks_log(KS_LOG_INFO, "llm cache: %s", ce.msg);
      free(red.text);
    }
  }
  free(req_text);
  json_decref(req);
  return rc;
}
