/* fuzz_cuda_lexer.c — the C-family lexer (src/spec/lexer.c) and what reads
 * CUDA through it: the CUDA model (cuda_model.c), the concept analyzer and
 * one of the translators to OpenCL, Metal and C (translate*.c; each runs
 * the analyzer), with the spec data
 * of the source tree (found beside build-fuzz/ like the CLI's). The input
 * is a whole .cu file, NUL bytes included. Bracket matches must pair up. */
#include "fuzz.h"
#include "spec/lexer.h"
#include "spec/translate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = ks_fuzz_text(data, size);
  ks_toks ts;
  ks_err err = {0};
  if (ks_lex_n(src, size, &ts, &err) == KS_OK) {
    for (int i = 0; i < ts.n; i++) {
      int m = ts.t[i].match;
      if (m >= 0 && (m >= ts.n || ts.t[m].match != i))
        abort(); /* a match is mutual */
      if (ts.t[i].off < 0 || ts.t[i].len < 0 ||
          (size_t)ts.t[i].off + (size_t)ts.t[i].len > size)
        abort(); /* tokens lie inside the source */
    }
    ks_toks_free(&ts);
  }
  ks_cu_model m;
  if (ks_cu_parse(src, size, "fuzz.cu", &m, &err) == KS_OK) {
    /* one translator per input, picked by the length (no byte of the source
     * is spent on it): the concept analysis inside each is the slow part */
    static const char *const targets[] = {"opencl", "metal", "c"};
    ks_translation tr;
    (void)ks_translate(&m, targets[size % 3], &tr, &err);
    ks_translation_free(&tr); /* filled or not: ks_translate zeroes it */
    ks_cu_model_free(&m);
  }
  free(src);
  return 0;
}
