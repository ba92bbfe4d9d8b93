/* test_llm_prompts.c — the prompt files and their rendering
 * (src/llm/prompts.c, the .txt files of src/llm/prompts): placeholders replaced
 * once and verbatim, a missing value named, and every shipped prompt using only
 * the placeholders the LLM planner gives it. */
#include "llm/prompts.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(llm_prompts, render_replaces_verbatim_once) {
  ks_prompt_var v[] = {{"a", "A {{b}}"}, {"b", "B"}};
  char *out;
  ks_err err;
  cr_assert_eq(
      ks_prompt_render("x {{a}} y {{b}} {{a}}", "t.txt", v, 2, &out, &err),
      KS_OK, "%s", err.msg);
  cr_assert_str_eq(out, "x A {{b}} y B A {{b}}");
  free(out);
}

Test(llm_prompts, literal_braces_pass_and_missing_values_fail) {
  char *out;
  ks_err err;
  cr_assert_eq(ks_prompt_render("{\"ops\": [{ }]} {{ not a name }} {{}}",
                                "t.txt", NULL, 0, &out, &err),
               KS_OK, "%s", err.msg);
  cr_assert_str_eq(out, "{\"ops\": [{ }]} {{ not a name }} {{}}");
  free(out);
  cr_assert_eq(
      ks_prompt_render("see {{nope}}", "code.txt", NULL, 0, &out, &err),
      KS_ERR_INTERNAL);
  cr_assert(strstr(err.msg, "code.txt") && strstr(err.msg, "{{nope}}"), "%s",
            err.msg);
}

/* The placeholders planner_llm.c gives each prompt. */
static const struct {
  const char *name;
  const char *vars[12];
} k_expected[] = {
    {"system", {"backend", "build"}},
    {"edit_ops", {NULL}},
    {"init",
     {"task", "spec", "analysis", "templates", "edit_ops", "max_nodes"}},
    {"propose", {"task_short", "world_model", "best", "edit_ops"}},
    {"code",
     {"task", "spec", "world_model", "action", "concepts", "parent_code",
      "header", "backend", "fence"}},
    {"debug",
     {"task", "spec", "action", "status", "failure", "compiler_errors", "code",
      "header", "backend", "fence"}},
    {"improve",
     {"task", "spec", "world_model", "action", "timings", "parent_timings",
      "code", "header", "backend", "fence"}},
    {"refine",
     {"task_short", "node", "outcome", "evidence", "world_model", "edit_ops"}},
    {"too_hard",
     {"task_short", "node", "evidence", "world_model", "edit_ops", "priority"}},
};

Test(llm_prompts, shipped_prompts_render_with_the_planner_vars) {
  const char *src = getenv("KSEARCH_SRC");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/src/llm/prompts", src ? src : ".");
  setenv("KSEARCH_PROMPTS_DIR", dir, 1);
  for (size_t i = 0; i < sizeof k_expected / sizeof *k_expected; i++) {
    char *text = NULL;
    ks_err err;
    cr_assert_eq(ks_prompt_load(k_expected[i].name, &text, &err), KS_OK, "%s",
                 err.msg);
    ks_prompt_var v[12];
    int n = 0;
    for (; n < 12 && k_expected[i].vars[n]; n++)
      v[n] = (ks_prompt_var){k_expected[i].vars[n], "<value>"};
    char *out = NULL;
    cr_assert_eq(ks_prompt_render(text, k_expected[i].name, v, n, &out, &err),
                 KS_OK, "%s", err.msg);
    /* each var is used, and world-model prompts name their kind for the
     * fake server and humans reading a log */
    for (int k = 0; k < n; k++) {
      char ph[64];
      snprintf(ph, sizeof ph, "{{%s}}", v[k].name);
      cr_assert(strstr(text, ph), "%s.txt does not use %s", k_expected[i].name,
                ph);
    }
    if (strcmp(k_expected[i].name, "system") &&
        strcmp(k_expected[i].name, "edit_ops")) {
      char mark[64];
      snprintf(mark, sizeof mark, "(ksearch prompt: %s)", k_expected[i].name);
      cr_assert(strstr(out, mark), "%s.txt lacks %s", k_expected[i].name, mark);
    }
    free(out);
    free(text);
  }
  char *text;
  ks_err err;
  cr_assert_eq(ks_prompt_load("no_such_prompt", &text, &err), KS_ERR_ENV);
  cr_assert(strstr(err.msg, "KSEARCH_PROMPTS_DIR"), "%s", err.msg);
  unsetenv("KSEARCH_PROMPTS_DIR");
}
