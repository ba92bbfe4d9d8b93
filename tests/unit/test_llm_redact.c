/* test_llm_redact.c — credentials never reach logs, errors, the store's
 * response column or the cache (src/llm/redact.c). */
#include "llm/llm.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void expect(const char *in, const char *key, const char *want) {
  char *out = ks_llm_redact(in, key);
  cr_assert_str_eq(out, want, "in: %s", in);
  free(out);
}

Test(llm_redact, the_key_itself_anywhere) {
  expect("Incorrect API key provided: my-local-key-123. Try again",
         "my-local-key-123",
         "Incorrect API key provided: [redacted]. Try again");
  expect("k=abcd and abcd", "abcd", "k=[redacted] and [redacted]");
  /* a key too short to be a credential is not hunted (it would eat text) */
  expect("a b c", "a", "a b c");
}

Test(llm_redact, bearer_tokens_and_known_shapes) {
  expect("Authorization: Bearer abc.def-123", NULL,
         "Authorization: Bearer [redacted]");
  expect("got sk-proj-0123456789abcdefghijKLMN here", NULL,
         "got [redacted] here");
  expect("google AIzaSyA-0123456789abcdefghijklmnop", NULL,
         "google [redacted]");
  expect("{\"api_key\": \"s3cr3tvalue\", \"x\": 1}", NULL,
         "{\"api_key\": \"[redacted]\", \"x\": 1}");
  expect("password=hunter22", NULL, "password=[redacted]");
}

Test(llm_redact, ordinary_text_is_left_alone) {
  const char *t = "task-sk-short; bearer of news; sk- alone; a risk-aware "
                  "plan; key: 12; score 1.5x";
  char *out = ks_llm_redact(t, NULL);
  cr_assert_str_eq(out, t);
  free(out);
  out = ks_llm_redact(NULL, NULL);
  cr_assert_str_eq(out, "");
  free(out);
}

Test(llm_redact, redacting_twice_changes_nothing_more) {
  char *a = ks_llm_redact("Bearer sk-0123456789abcdefghijk", NULL);
  char *b = ks_llm_redact(a, NULL);
  cr_assert_str_eq(a, b);
  cr_assert_null(strstr(a, "0123456789"));
  free(a);
  free(b);
}
