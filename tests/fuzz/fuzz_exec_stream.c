/* fuzz_exec_stream.c — the judge's reader of an executor's event stream
 * (src/eval/exec_proto.c): the input is what a hostile executor wrote on its
 * event descriptor, split at newlines as the judge splits it. An accepted
 * line must be a known event with fields in range; nothing may crash, leak
 * or read past the line. */
#include "eval/exec_proto.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    /* an exact-length copy, so ASan sees any read past the line */
    char *line = malloc(len ? len : 1);
    if (!line)
      abort();
    memcpy(line, p, len);
    ks_exec_event ev;
    char why[300];
    if (ks_exec_parse_event(line, len, &ev, why, sizeof why)) {
      if (ev.kind == KS_EV_NONE || ev.id < 0 || ev.ns < 0 || ev.value < 0 ||
          len > KS_EXEC_MAX_LINE || ev.text[sizeof ev.text - 1] != 0)
        abort();
    } else if (!why[0]) {
      abort(); /* a refusal always says why */
    }
    free(line);
    p += len + (nl ? 1 : 0);
  }
  return 0;
}
