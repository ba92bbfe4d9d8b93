/* fuzz_sse.c — the SSE stream reader of streamed chat completions
 * (src/llm/sse.c). The first byte picks the size of the pieces the rest is
 * fed in (a network splits a stream anywhere), with a small content cap so
 * the oversized path is reached too. */
#include "fuzz.h"
#include "llm/llm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t piece = (size_t)(data[0] % 64) + 1;
  const char *s = (const char *)data + 1;
  size_t n = size - 1;
  ks_llm_sse sse;
  ks_llm_sse_init(&sse, (data[0] & 0x80) ? 256 : 0);
  for (size_t off = 0; off < n; off += piece)
    ks_llm_sse_feed(&sse, s + off, n - off < piece ? n - off : piece);
  ks_llm_sse_finish(&sse);
  if (sse.content && sse.content[sse.content_len] != 0)
    abort(); /* content is NUL-terminated at content_len */
  if (sse.content_len > (sse.max_bytes ? sse.max_bytes : (size_t)1 << 20))
    abort(); /* the cap holds */
  ks_llm_sse_free(&sse);
  return 0;
}
