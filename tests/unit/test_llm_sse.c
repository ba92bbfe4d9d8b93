/* test_llm_sse.c — streamed answers (src/llm/sse.c): chunks split anywhere,
 * [DONE] and usage, a stream cut mid-answer, a cap on the answer, invalid
 * UTF-8, an error event. */
#include "llm/llm.h"

#include <criterion/criterion.h>
#include <string.h>

static const char k_stream[] =
    ": keep-alive comment\n\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"ops\\\": \"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"[]}\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,"
    "\"completion_tokens\":5}}\n\n"
    "data: [DONE]\n\n";

Test(llm_sse, any_split_gives_the_same_answer) {
  size_t n = strlen(k_stream);
  for (size_t step = 1; step <= n; step += (step < 8 ? 1 : 37)) {
    ks_llm_sse s;
    ks_llm_sse_init(&s, 1024);
    for (size_t i = 0; i < n; i += step)
      ks_llm_sse_feed(&s, k_stream + i, i + step <= n ? step : n - i);
    ks_llm_sse_finish(&s);
    cr_assert_str_eq(s.content, "{\"ops\": []}", "step %zu", step);
    cr_assert(s.done);
    cr_assert_str_eq(s.finish_reason, "stop");
    cr_assert_eq(s.prompt_tokens, 11);
    cr_assert_eq(s.completion_tokens, 5);
    cr_assert_eq(s.bad_chunks, 0);
    ks_llm_sse_free(&s);
  }
}

Test(llm_sse, cut_stream_has_neither_done_nor_finish_reason) {
  ks_llm_sse s;
  ks_llm_sse_init(&s, 1024);
  const char *cut =
      "data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"re\"}}]}"
      "\n\ndata: {\"choices\":[{\"del";
  ks_llm_sse_feed(&s, cut, strlen(cut));
  ks_llm_sse_finish(&s);
  cr_assert_str_eq(s.content, "{\"re");
  cr_assert_not(s.done);
  cr_assert_str_eq(s.finish_reason, "");
  cr_assert_eq(s.bad_chunks, 1);
  cr_assert_eq(s.prompt_tokens, -1);
  ks_llm_sse_free(&s);
}

Test(llm_sse, answer_cap_marks_oversized) {
  ks_llm_sse s;
  ks_llm_sse_init(&s, 10);
  const char *d =
      "data: {\"choices\":[{\"delta\":{\"content\":\"0123456\"}}]}\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"789abc\"}}]}\n";
  ks_llm_sse_feed(&s, d, strlen(d));
  cr_assert(s.oversized);
  cr_assert_eq(s.content_len, 10);
  cr_assert_str_eq(s.content, "0123456789");
  ks_llm_sse_free(&s);
}

Test(llm_sse, invalid_utf8_and_errors) {
  ks_llm_sse s;
  ks_llm_sse_init(&s, 1024);
  const char *d = "data: {\"choices\":[{\"delta\":{\"content\":\"a\xff"
                  "b\"}}]}\n"
                  "data: {\"error\":{\"message\":\"overloaded\"}}\n";
  ks_llm_sse_feed(&s, d, strlen(d));
  cr_assert_str_eq(s.content, "a?b");
  cr_assert_eq(s.repaired, 1);
  cr_assert_str_eq(s.error, "overloaded");
  ks_llm_sse_free(&s);
}
