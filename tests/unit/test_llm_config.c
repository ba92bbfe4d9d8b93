/* test_llm_config.c — the LLM planner's options (src/llm/config.c): flags
 * over defaults, environment fallbacks, and errors that say what to set. */
#include "llm/llm.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static ks_code load(const char *text, ks_llm_config *c, ks_err *err) {
  json_t *j = text ? json_loads(text, 0, NULL) : NULL;
  ks_code rc = ks_llm_config_from_json(j, c, err);
  json_decref(j);
  return rc;
}

Test(llm_config, flags_over_defaults) {
  unsetenv("KSEARCH_LLM_BASE_URL");
  unsetenv("KSEARCH_LLM_MODEL");
  ks_llm_config c;
  ks_err err;
  cr_assert_eq(load("{\"base_url\":\"http://127.0.0.1:8080/v1/\",\"model\":"
                    "\"m\",\"temperature\":0.2,\"max_tokens\":4096,"
                    "\"token_budget\":100000,\"stream\":true,\"cache\":"
                    "\"/tmp/c\",\"coder_model\":\"cm\",\"reasoning_effort\":"
                    "\"high\",\"timeout\":30,\"max_inflight\":2}",
                    &c, &err),
               KS_OK, "%s", err.msg);
  cr_assert_str_eq(c.base_url, "http://127.0.0.1:8080/v1", "slash trimmed");
  cr_assert_str_eq(c.model, "m");
  cr_assert_str_eq(c.coder_model, "cm");
  cr_assert_float_eq(c.temperature, 0.2, 1e-12);
  cr_assert_eq(c.max_tokens, 4096);
  cr_assert_eq(c.token_budget, 100000);
  cr_assert(c.stream);
  cr_assert_str_eq(c.cache_dir, "/tmp/c");
  cr_assert_str_eq(c.reasoning_effort, "high");
  cr_assert_eq(c.max_inflight, 2);
  cr_assert_eq(c.max_retries, 4, "default");
}

Test(llm_config, environment_and_missing_settings) {
  ks_llm_config c;
  ks_err err;
  unsetenv("KSEARCH_LLM_BASE_URL");
  unsetenv("KSEARCH_LLM_MODEL");
  cr_assert_eq(load(NULL, &c, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "--llm-base-url") &&
                strstr(err.msg, "KSEARCH_LLM_BASE_URL"),
            "%s", err.msg);
  setenv("KSEARCH_LLM_BASE_URL", "https://api.example.com/v1", 1);
  cr_assert_eq(load(NULL, &c, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "--llm-model"), "%s", err.msg);
  setenv("KSEARCH_LLM_MODEL", "envmodel", 1);
  cr_assert_eq(load("{}", &c, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(c.base_url, "https://api.example.com/v1");
  cr_assert_str_eq(c.model, "envmodel");
  cr_assert_lt(c.temperature, 0, "not sent unless given");
  unsetenv("KSEARCH_LLM_BASE_URL");
  unsetenv("KSEARCH_LLM_MODEL");
}

Test(llm_config, bad_values_are_named) {
  ks_llm_config c;
  ks_err err;
  cr_assert_eq(load("{\"base_url\":\"ftp://x\",\"model\":\"m\"}", &c, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "http"), "%s", err.msg);
  cr_assert_eq(load("{\"base_url\":\"http://x\",\"model\":\"m\","
                    "\"temperature\":5}",
                    &c, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "temperature"), "%s", err.msg);
  cr_assert_eq(
      load("{\"base_url\":\"http://x\",\"model\":\"m\",\"color\":1}", &c, &err),
      KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "color") && strstr(err.msg, "unknown"), "%s",
            err.msg);
}
