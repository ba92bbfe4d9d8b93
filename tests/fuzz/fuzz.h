/* fuzz.h — what every libFuzzer target in tests/fuzz/ shares (DESIGN.md:
 * Tests and CI, "Fuzz targets"). A target is one file, fuzz_<name>.c, that
 * defines LLVMFuzzerTestOneInput and feeds the bytes to one parser; its seed
 * corpus is tests/fuzz/corpus/<name>/. The Makefile finds targets by that
 * name, builds them with clang, ASan and UBSan against the library, and
 * tests/fuzz/run.sh runs each for FUZZ_SECONDS. A target must not write
 * outside its own temporary folder, print on stdout, or keep state between
 * inputs that changes what the next input does. */
#ifndef KS_FUZZ_H
#define KS_FUZZ_H

#include "util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input as a NUL-terminated string (parsers take C strings); free() it.
 * A NUL inside the input ends the string there, as it would in a file read
 * by a caller that did not check; targets that take a length use size. */
static inline char *ks_fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}

/* Silences ksearch's own logging so a run prints only libFuzzer's lines. */
static inline void ks_fuzz_quiet(void) { ks_log_set_level(KS_LOG_QUIET); }

#endif
