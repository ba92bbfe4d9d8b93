/* config.c — the LLM client's settings (llm.h): defaults, and the planner
 * options `ksearch run` collects from its --llm-* flags (cli/run.c), checked
 * once here so every later use can trust them. */
#include "llm/llm.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ks_llm_config_default(ks_llm_config *c) {
  memset(c, 0, sizeof *c);
  c->temperature = -1;
  c->timeout_s = 300;
  c->max_inflight = 1;
  c->max_retries = 4;
  c->backoff_base_s = 0.5;
  c->backoff_max_s = 30;
  c->max_answer_bytes = (size_t)1 << 20;
}

static ks_code num(const json_t *v, const char *key, double lo, double hi,
                   double *out, ks_err *err) {
  if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
      json_number_value(v) < lo || json_number_value(v) > hi)
    return ks_err_set(err, KS_ERR_INPUT,
                      "llm option %s: expected a number in [%g, %g]", key, lo,
                      hi);
  *out = json_number_value(v);
  return KS_OK;
}

static ks_code str(const json_t *v, const char *key, char *out, size_t n,
                   ks_err *err) {
  const char *s = json_string_value(v);
  if (!s || strlen(s) >= n)
    return ks_err_set(err, KS_ERR_INPUT,
                      "llm option %s: expected a string of fewer than %zu "
                      "characters",
                      key, n);
  ks_strlcpy(out, s, n);
  return KS_OK;
}

ks_code ks_llm_config_from_json(const json_t *opts, ks_llm_config *c,
                                ks_err *err) {
  ks_llm_config_default(c);
  if (opts && !json_is_object(opts))
    return ks_err_set(err, KS_ERR_INPUT, "llm options: expected an object");
  const char *key;
  json_t *v;
  ks_code rc = KS_OK;
  double d;
  json_object_foreach((json_t *)opts, key, v) {
    if (!strcmp(key, "base_url"))
      rc = str(v, key, c->base_url, sizeof c->base_url, err);
    else if (!strcmp(key, "model"))
      rc = str(v, key, c->model, sizeof c->model, err);
    else if (!strcmp(key, "coder_model"))
      rc = str(v, key, c->coder_model, sizeof c->coder_model, err);
    else if (!strcmp(key, "reasoning_effort"))
      rc = str(v, key, c->reasoning_effort, sizeof c->reasoning_effort, err);
    else if (!strcmp(key, "cache"))
      rc = str(v, key, c->cache_dir, sizeof c->cache_dir, err);
    else if (!strcmp(key, "cache_match")) {
      const char *m = json_string_value(v);
      if (!m || (strcmp(m, "exact") && strcmp(m, "order")))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "llm option cache_match: expected \"exact\" (a "
                        "recorded answer for an equal request only) or "
                        "\"order\" (else the next recorded answer of the "
                        "same prompt kind)");
      else
        c->cache_by_order = !strcmp(m, "order");
    } else if (!strcmp(key, "temperature")) {
      if (!(rc = num(v, key, 0, 2, &d, err)))
        c->temperature = d;
    } else if (!strcmp(key, "max_tokens")) {
      if (!(rc = num(v, key, 1, 1e7, &d, err)))
        c->max_tokens = (int)d;
    } else if (!strcmp(key, "timeout")) {
      if (!(rc = num(v, key, 0.1, 86400, &d, err)))
        c->timeout_s = d;
    } else if (!strcmp(key, "max_inflight")) {
      if (!(rc = num(v, key, 1, 256, &d, err)))
        c->max_inflight = (int)d;
    } else if (!strcmp(key, "token_budget")) {
      if (!(rc = num(v, key, 0, 1e15, &d, err)))
        c->token_budget = (int64_t)d;
    } else if (!strcmp(key, "retries")) {
      if (!(rc = num(v, key, 0, 20, &d, err)))
        c->max_retries = (int)d;
    } else if (!strcmp(key, "backoff_base")) {
      if (!(rc = num(v, key, 0, 600, &d, err)))
        c->backoff_base_s = d;
    } else if (!strcmp(key, "backoff_max")) {
      if (!(rc = num(v, key, 0, 3600, &d, err)))
        c->backoff_max_s = d;
    } else if (!strcmp(key, "max_answer_bytes")) {
      if (!(rc = num(v, key, 1024, 1 << 30, &d, err)))
        c->max_answer_bytes = (size_t)d;
    } else if (!strcmp(key, "stream")) {
      if (!json_is_boolean(v))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "llm option stream: expected true or false");
      else
        c->stream = json_is_true(v);
    } else {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "llm option %s: unknown; known options are base_url, "
                      "model, coder_model, temperature, max_tokens, "
                      "reasoning_effort, timeout, max_inflight, token_budget, "
                      "cache, cache_match, stream, retries, backoff_base, "
                      "backoff_max, max_answer_bytes",
                      key);
    }
    if (rc)
      return rc;
  }
  const char *env = getenv("KSEARCH_LLM_BASE_URL");
  if (!c->base_url[0] && env && *env)
    ks_strlcpy(c->base_url, env, sizeof c->base_url);
  env = getenv("KSEARCH_LLM_MODEL");
  if (!c->model[0] && env && *env)
    ks_strlcpy(c->model, env, sizeof c->model);
  if (!c->base_url[0])
    return ks_err_set(err, KS_ERR_INPUT,
                      "the LLM planner needs an endpoint: give --llm-base-url "
                      "URL (e.g. https://api.openai.com/v1 or "
                      "http://127.0.0.1:8000/v1) or set KSEARCH_LLM_BASE_URL");
  if (strncmp(c->base_url, "http://", 7) && strncmp(c->base_url, "https://", 8))
    return ks_err_set(err, KS_ERR_INPUT,
                      "--llm-base-url %s: expected an http:// or https:// URL "
                      "ending before /chat/completions (e.g. "
                      "https://api.openai.com/v1)",
                      c->base_url);
  size_t l = strlen(c->base_url);
  while (l && c->base_url[l - 1] == '/')
    c->base_url[--l] = 0;
  if (!c->model[0])
    return ks_err_set(err, KS_ERR_INPUT,
                      "the LLM planner needs a model name: give --llm-model "
                      "NAME (e.g. gpt-4.1) or set KSEARCH_LLM_MODEL");
  return KS_OK;
}
