/* fuzz_llm_answer.c — reading what a model wrote (src/llm/answer.c): the
 * JSON of a world-model answer and the code of a coder answer for each
 * backend, with the header added. Answers are hostile text: any input gives
 * a value or a reason, never a crash. */
#include "fuzz.h"
#include "llm/answer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = ks_fuzz_text(data, size);
  char why[512];
  json_t *j = NULL;
  if (ks_llm_extract_json(text, &j, why, sizeof why) == KS_OK)
    json_decref(j);
  static const char *const backends[] = {"c", "opencl", "cuda"};
  for (int b = 0; b < 3; b++) {
    char *code = ks_llm_extract_code(text, backends[b], why, sizeof why);
    if (code) {
      free(ks_llm_ensure_header(code, backends[b], "softmax"));
      free(code);
    }
  }
  if (size && (text[0] == '{' || text[0] == '['))
    (void)ks_llm_balanced(text, size);
  free(text);
  return 0;
}
