/* fuzz_llm_check.c — the check of a coder answer before any compiler
 * (src/llm/target.c, ks_llm_check_answer) on the c and cuda backends of
 * the built-in rmsnorm task: the target's primitive rules, the header, the
 * launch lines evaluated on every workload, the kernels they name. Answers
 * are hostile text: any input gives a candidate or violations, never a
 * crash, and in time linear in its size. */
#include "fuzz.h"
#include "llm/target.h"

static ks_task g_task;
static bool g_loaded;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/rmsnorm", ks_builtin_tasks_dir());
  ks_err err;
  g_loaded = ks_task_load(dir, &g_task, &err) == KS_OK;
  if (!g_loaded)
    abort(); /* the fuzz build runs from the repo: tasks/ is there */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = ks_fuzz_text(data, size);
  static const char *const backends[] = {"c", "cuda"};
  for (int b = 0; b < 2; b++) {
    ks_candidate c;
    ks_llm_violation v[16];
    int n = ks_llm_check_answer(ks_llm_backend_find(backends[b]), &g_task, text,
                                "<fuzz>", &c, v, 16);
    if (n == 0)
      ks_candidate_free(&c);
  }
  free(text);
  return 0;
}
