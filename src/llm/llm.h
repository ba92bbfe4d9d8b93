/* llm.h — the client of an OpenAI-compatible chat endpoint (DESIGN.md:
 * planner / coder "llm"; issue 4). `POST {base_url}/chat/completions`, plain
 * or streamed (SSE), through libcurl; jansson for the bodies.
 *
 * What the client guarantees to the LLM planner (search/planner_llm.c):
 * - retries with exponential backoff and jitter on 429, 408, 5xx, timeouts and
 *   dropped connections, waiting what a Retry-After header asks;
 * - at most max_inflight requests in flight (a counting gate), so a planner
 *   that asks from several threads never floods a rate-limited endpoint;
 * - every request and response (retries included) recorded in the run's
 *   store with tokens, latency and a status; the API key (KSEARCH_API_KEY,
 *   else OPENAI_API_KEY) goes only into the Authorization header, never into
 *   a log line, an error message, the store or the cache;
 * - a budget on total tokens: once spent, every call returns
 *   KS_LLM_ERR_TOKEN_BUDGET, which the search loop turns into
 *   stopped_because "token budget" (a clean end, exit 0);
 * - `--llm-cache DIR`: a request equal to an earlier one (same model,
 *   sampling options and messages, decimal numbers aside: measured timings
 *   differ between two runs of the same search) is answered from disk, so a
 *   run replays offline.
 * Answers come back as text with an outcome (answer, empty, truncated,
 *   refused, oversized); invalid UTF-8 is repaired. What the text means is
 *   answer.h's job. */
#ifndef KS_LLM_H
#define KS_LLM_H

#include "ksearch.h"

#include <jansson.h>
#include <pthread.h>
#include <time.h>

struct ks_store;

/* Returned by ks_llm_chat (and passed up by the LLM planner) when the token
 * budget is spent. Outside the ks_code values of ksearch.h on purpose: the
 * search loop recognises it and ends the run cleanly; it never reaches
 * ks_exit_code. */
#define KS_LLM_ERR_TOKEN_BUDGET ((ks_code)64)

typedef struct ks_llm_config {
  char base_url[512];        /* e.g. https://api.openai.com/v1 */
  char model[128];           /* planner model (world model edits) */
  char coder_model[128];     /* writes code; "" = model */
  double temperature;        /* < 0: not sent (server default) */
  int max_tokens;            /* 0: not sent */
  char reasoning_effort[16]; /* "" not sent; else passed through */
  double timeout_s;          /* one request, connect to last byte */
  int max_inflight;          /* requests in flight at once, >= 1 */
  int64_t token_budget;      /* prompt + completion tokens; 0 = none */
  char cache_dir[1024];      /* "" = no call cache */
  bool cache_by_order;       /* a miss takes the next recorded answer of
                                the same prompt kind (cache_match "order") */
  bool stream;               /* SSE streaming */
  int max_retries;           /* retries after the first try */
  double backoff_base_s, backoff_max_s;
  size_t max_answer_bytes; /* a longer answer is "oversized" */
} ks_llm_config;

/* Defaults: temperature unset, timeout 300 s, 1 in flight, no budget, no
 * cache, no streaming, 4 retries, backoff 0.5 s doubling up to 30 s, answers
 * up to 1 MiB. base_url and model empty. */
void ks_llm_config_default(ks_llm_config *c);
/* Reads the planner options of `ksearch run` (keys: base_url, model,
 * coder_model, temperature, max_tokens, reasoning_effort, timeout,
 * max_inflight, token_budget, cache, stream, retries, backoff_base,
 * backoff_max, max_answer_bytes) over the defaults; KSEARCH_LLM_BASE_URL and
 * KSEARCH_LLM_MODEL fill what the options leave out. KS_ERR_INPUT names a bad
 * or unknown key, or a missing base_url/model and how to give it. */
ks_code ks_llm_config_from_json(const json_t *opts, ks_llm_config *out,
                                ks_err *err);

/* ---- the client (client.c) */
typedef struct ks_llm ks_llm;

typedef struct ks_llm_msg {
  const char *role; /* "system", "user", "assistant" */
  const char *content;
} ks_llm_msg;

typedef enum ks_llm_outcome {
  KS_LLM_ANSWER,    /* some text came back */
  KS_LLM_EMPTY,     /* no text */
  KS_LLM_TRUNCATED, /* cut at max_tokens, or the stream ended early */
  KS_LLM_REFUSED,   /* a refusal or a content filter */
  KS_LLM_OVERSIZED  /* longer than max_answer_bytes; text holds the start */
} ks_llm_outcome;
const char *ks_llm_outcome_name(ks_llm_outcome o);
bool ks_llm_outcome_parse(const char *name, ks_llm_outcome *out);

typedef struct ks_llm_reply {
  char *text; /* never NULL after ks_llm_chat returns KS_OK; valid UTF-8 */
  ks_llm_outcome outcome;
  char finish_reason[32];
  int64_t prompt_tokens, completion_tokens; /* estimated when not reported */
  bool from_cache, utf8_repaired;
  double latency_s;
  int tries;
} ks_llm_reply;
void ks_llm_reply_free(ks_llm_reply *r);

/* store may be NULL (no recording). The key is read from the environment. */
ks_code ks_llm_new(const ks_llm_config *cfg, struct ks_store *store,
                   ks_llm **out, ks_err *err);
void ks_llm_free(ks_llm *c);
const ks_llm_config *ks_llm_config_of(const ks_llm *c);
/* One chat completion. `purpose` (e.g. "init", "code") becomes the store's
 * role column; `coder` picks coder_model. KS_OK when an answer of any outcome
 * came back; KS_LLM_ERR_TOKEN_BUDGET when the budget is spent; KS_ERR_ENV
 * when the endpoint refused the request (4xx) or failed after every retry,
 * with the server's message (credentials redacted) and what to check. */
ks_code ks_llm_chat(ks_llm *c, const char *purpose, bool coder,
                    const ks_llm_msg *msgs, int n_msgs, ks_llm_reply *out,
                    ks_err *err);
int64_t ks_llm_tokens_used(const ks_llm *c);
bool ks_llm_budget_spent(const ks_llm *c);

/* ---- retries (retry.c): pure functions, unit-tested */
/* Whether an HTTP status is worth retrying: 408, 409, 425, 429 and 5xx. */
bool ks_llm_retryable_status(long status);
/* Seconds a Retry-After value asks for: delta-seconds ("2", "1.5") or an
 * HTTP-date relative to `now`; -1 when absent or unreadable; never < 0
 * otherwise (a date in the past is 0). */
double ks_llm_parse_retry_after(const char *value, time_t now);
/* Delay before retry number `retry` (0 = the first retry): "equal jitter"
 * d = min(max, base * 2^retry), delay = d/2 + u*d/2 with u in [0,1); when
 * the server sent Retry-After (>= 0) the delay is that plus up to 10% jitter
 * (u), capped at max(backoff_max, 120 s). */
double ks_llm_backoff_s(double base_s, double max_s, int retry,
                        double retry_after_s, double u);

/* ---- the in-flight gate (retry.c) */
typedef struct ks_llm_gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int in_flight, max, peak;
} ks_llm_gate;
void ks_llm_gate_init(ks_llm_gate *g, int max);
void ks_llm_gate_destroy(ks_llm_gate *g);
void ks_llm_gate_enter(ks_llm_gate *g);
void ks_llm_gate_leave(ks_llm_gate *g);

/* ---- credentials (redact.c) */
/* A copy of text with the key (when given, >= 4 chars), "Bearer <token>",
 * "sk-..." tokens and `"api_key": "..."`-style values replaced by
 * "[redacted]". Malloc'd. */
char *ks_llm_redact(const char *text, const char *key);

/* ---- text helpers (text.c) */
/* Replaces each byte that does not start a valid UTF-8 sequence by '?', in
 * place; returns how many were replaced. */
size_t ks_llm_utf8_repair(char *s, size_t len);
/* A copy where every decimal number ("1.85", "-0.5e-3", "12.") reads "#":
 * the cache key's view of a prompt, so measured values do not defeat a
 * replay. Integers (ids, sizes) stay. Malloc'd. */
char *ks_llm_mask_decimals(const char *s);
/* A copy where the lines that describe this machine ("device: ..." and
 * "measured on this device (NAME): ...") read as their first words and
 * "#": the cache key's view, so that a cache recorded on one machine
 * replays on another (a PoCL device named after its CPU, a thread count).
 * Malloc'd. */
char *ks_llm_mask_machine(const char *s);

/* ---- the call cache (cache.c) */
/* 32 hex digits naming a request: model, temperature, max_tokens,
 * reasoning_effort and messages (contents with decimals masked), in
 * canonical JSON; stream flags and the endpoint do not count. */
void ks_llm_cache_key(const json_t *request, char out[33]);
/* *hit and *out (text, outcome, finish reason, tokens; from_cache set) when
 * dir/<key>.json exists and reads; a missing or unreadable entry is a miss
 * (logged), never an error. */
void ks_llm_cache_get(const char *dir, const char *key, bool *hit,
                      ks_llm_reply *out);
/* Order-matched replay (`--llm-cache-match order`): a request that no
 * recorded one equals takes the earliest recorded answer of the same prompt
 * kind ("(ksearch prompt: KIND)" in the last user message) that has not
 * answered yet, by recording time (the entry's recorded_ns, else its file's
 * mtime). used: an object whose keys are the entries that answered already
 * (exact hits are added by the caller). *hit, *out and key_out (the entry's
 * key) as ks_llm_cache_get. For a recording replayed on another machine,
 * whose prompts quote that machine's measurements, so differ. */
void ks_llm_cache_get_next(const char *dir, const json_t *request, json_t *used,
                           char key_out[33], bool *hit, ks_llm_reply *out);
/* The prompt kind of a request ("init", "refine", ...; "" when none). */
void ks_llm_prompt_kind(const json_t *request, char *out, size_t n);
/* Writes dir/<key>.json atomically: the request and the answer (its text
 * redacted by the caller), with the time it was recorded. */
ks_code ks_llm_cache_put(const char *dir, const char *key,
                         const json_t *request, const ks_llm_reply *r,
                         ks_err *err);

/* ---- server-sent events (sse.c): the streamed form of an answer */
typedef struct ks_llm_sse {
  char *line; /* the incomplete line carried between feeds */
  size_t line_len, line_cap;
  char *content; /* accumulated delta.content */
  size_t content_len, content_cap, max_bytes;
  char finish_reason[32];
  char refusal[256];
  char error[512]; /* an "error" object in the stream */
  int64_t prompt_tokens, completion_tokens; /* -1 until a usage chunk */
  bool done;                                /* "data: [DONE]" seen */
  bool oversized;  /* content exceeded max_bytes (the rest dropped) */
  int bad_chunks;  /* data lines that were not JSON */
  size_t repaired; /* invalid UTF-8 bytes replaced */
} ks_llm_sse;
void ks_llm_sse_init(ks_llm_sse *s, size_t max_bytes);
void ks_llm_sse_free(ks_llm_sse *s);
/* Feeds raw bytes; lines may be split anywhere between feeds. */
void ks_llm_sse_feed(ks_llm_sse *s, const char *data, size_t n);
/* Processes a last line left without its newline. */
void ks_llm_sse_finish(ks_llm_sse *s);

#endif
