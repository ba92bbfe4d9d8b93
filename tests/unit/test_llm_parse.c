/* test_llm_parse.c — reading model answers (src/llm/answer.c, text.c):
 * balanced braces that respect strings, JSON found in fences, prose or
 * nowhere, cut-off and invalid JSON reported for the re-ask, code taken from
 * the right fence or file tags, headers added, invalid UTF-8 repaired. */
#include "llm/answer.h"
#include "llm/llm.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(llm_parse, balanced_respects_strings_and_nesting) {
  const char *s = "{\"a\": \"}{\\\"]\", \"b\": [1, {\"c\": 2}]} tail";
  cr_assert_eq(ks_llm_balanced(s, strlen(s)), strlen(s) - 5);
  cr_assert_eq(ks_llm_balanced("[1, [2, 3]]x", 12), 11);
}

Test(llm_parse, balanced_refuses_cut_and_mismatched) {
  cr_assert_eq(ks_llm_balanced("{\"a\": [1, 2", 11), 0);
  cr_assert_eq(ks_llm_balanced("{\"a\": [1, 2}]", 13), 0);
  cr_assert_eq(ks_llm_balanced("{\"a\": \"}", 8), 0); /* inside a string */
  cr_assert_eq(ks_llm_balanced("x{}", 3), 0);
}

Test(llm_parse, json_from_a_fenced_block_first) {
  const char *t = "Plan: {not json}\n```json\n{\"ops\": [], \"reflection\": "
                  "\"r\"}\n```\nThanks {\"x\": 1}";
  json_t *j;
  char why[256];
  cr_assert_eq(ks_llm_extract_json(t, &j, why, sizeof why), KS_OK, "%s", why);
  cr_assert(json_is_array(json_object_get(j, "ops")));
  cr_assert_str_eq(json_string_value(json_object_get(j, "reflection")), "r");
  json_decref(j);
}

Test(llm_parse, json_from_prose_with_braces_in_strings) {
  const char *t = "Sure! Here it is: {\"reflection\": \"use {x} and }\", "
                  "\"ops\": [{\"op\": \"delete\", \"id\": \"n3\"}]} done.";
  json_t *j;
  char why[256];
  cr_assert_eq(ks_llm_extract_json(t, &j, why, sizeof why), KS_OK, "%s", why);
  cr_assert_str_eq(json_string_value(json_object_get(j, "reflection")),
                   "use {x} and }");
  json_decref(j);
}

Test(llm_parse, json_bare_array_of_ops_but_not_of_numbers) {
  json_t *j;
  char why[256];
  cr_assert_eq(ks_llm_extract_json("see [1] and [{\"op\": \"insert\"}]", &j,
                                   why, sizeof why),
               KS_OK, "%s", why);
  cr_assert(json_is_array(j));
  cr_assert(json_is_object(json_array_get(j, 0)));
  json_decref(j);
}

Test(llm_parse, json_cut_off_says_so) {
  json_t *j = NULL;
  char why[256];
  cr_assert_eq(ks_llm_extract_json("{\"reflection\": \"x\", \"ops\": [{\"op\"",
                                   &j, why, sizeof why),
               KS_ERR_INPUT);
  cr_assert_null(j);
  cr_assert(strstr(why, "cut off"), "%s", why);
  cr_assert_eq(
      ks_llm_extract_json("```json\n{\"ops\": [\n", &j, why, sizeof why),
      KS_ERR_INPUT);
  cr_assert(strstr(why, "not closed"), "%s", why);
}

Test(llm_parse, json_invalid_names_line_and_column) {
  json_t *j = NULL;
  char why[256];
  cr_assert_eq(
      ks_llm_extract_json("```json\n{\"ops\": [],}\n```", &j, why, sizeof why),
      KS_ERR_INPUT);
  cr_assert(strstr(why, "not valid JSON") && strstr(why, "line 1"), "%s", why);
  cr_assert_eq(ks_llm_extract_json("", &j, why, sizeof why), KS_ERR_INPUT);
  cr_assert(strstr(why, "empty"), "%s", why);
  cr_assert_eq(ks_llm_extract_json("no json here", &j, why, sizeof why),
               KS_ERR_INPUT);
  cr_assert(strstr(why, "no JSON"), "%s", why);
}

Test(llm_parse, code_longest_c_block_wins) {
  const char *t = "Example:\n```c\nint x;\n```\nThe file:\n```c\n"
                  "void softmax(void) {\n  return;\n}\n```\n```python\n"
                  "print('a much longer python block than both c blocks')\n"
                  "```\n";
  char why[256];
  char *c = ks_llm_extract_code(t, "c", why, sizeof why);
  cr_assert_not_null(c, "%s", why);
  cr_assert_str_eq(c, "void softmax(void) {\n  return;\n}\n");
  free(c);
}

Test(llm_parse, code_untagged_fence_and_file_tags) {
  char why[256];
  char *c = ks_llm_extract_code("```\nint a;\n```", "c", why, sizeof why);
  cr_assert_str_eq(c, "int a;\n");
  free(c);
  c = ks_llm_extract_code("<file name=\"k.c\">\nint b;\n</file>", "c", why,
                          sizeof why);
  cr_assert_str_eq(c, "int b;\n");
  free(c);
  c = ks_llm_extract_code("#include <math.h>\nvoid f(void) { g(); }\n", "c",
                          why, sizeof why);
  cr_assert_not_null(c, "plain code without fences is taken whole");
  free(c);
}

Test(llm_parse, code_problems_are_explained) {
  char why[256];
  cr_assert_null(
      ks_llm_extract_code("```c\nvoid f(void) {\n", "c", why, sizeof why));
  cr_assert(strstr(why, "not closed"), "%s", why);
  cr_assert_null(
      ks_llm_extract_code("```python\nprint(1)\n```", "c", why, sizeof why));
  cr_assert(strstr(why, "language"), "%s", why);
  cr_assert_null(ks_llm_extract_code("I think you should vectorize.", "c", why,
                                     sizeof why));
  cr_assert(strstr(why, "no code block"), "%s", why);
  cr_assert_null(ks_llm_extract_code("```c\n \n```", "c", why, sizeof why));
  cr_assert(strstr(why, "empty"), "%s", why);
}

Test(llm_parse, header_added_only_when_missing) {
  char *a = ks_llm_ensure_header("void softmax(void) {}", "c", "softmax");
  cr_assert_str_eq(a, "// ksearch: backend=c entry=softmax\nvoid softmax(void) "
                      "{}\n");
  free(a);
  const char *with = "// comment\n// ksearch: backend=c entry=k\nvoid k(){}\n";
  a = ks_llm_ensure_header(with, "c", "softmax");
  cr_assert_str_eq(a, with);
  free(a);
}

Test(llm_parse, utf8_repair_replaces_only_bad_bytes) {
  char s[] = "ok \xc3\xa9 \xff\xfe x \xe2\x82 end \xf0\x9f\x98\x80";
  size_t n = ks_llm_utf8_repair(s, strlen(s));
  cr_assert_eq(n, 4); /* ff, fe, and the two bytes of the cut e2 82 */
  cr_assert_str_eq(s, "ok \xc3\xa9 ?? x ?? end \xf0\x9f\x98\x80");
  char surrogate[] = "\xed\xa0\x80";
  cr_assert_eq(ks_llm_utf8_repair(surrogate, 3), 3);
}
