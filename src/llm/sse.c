/* sse.c — the streamed form of a chat completion (llm.h): server-sent events
 * whose `data:` lines carry JSON chunks with choices[0].delta.content, a
 * finish_reason, and (with stream_options.include_usage) a last chunk with
 * usage; `data: [DONE]` ends the stream. Bytes arrive in arbitrary pieces,
 * so a partial line is carried to the next feed. A stream that ends without
 * [DONE] and without a finish_reason was cut. */
#include "llm/llm.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void ks_llm_sse_init(ks_llm_sse *s, size_t max_bytes) {
  memset(s, 0, sizeof *s);
  s->max_bytes = max_bytes ? max_bytes : (size_t)1 << 20;
  s->prompt_tokens = s->completion_tokens = -1;
}

void ks_llm_sse_free(ks_llm_sse *s) {
  free(s->line);
  free(s->content);
  memset(s, 0, sizeof *s);
}

static void grow(char **p, size_t *cap, size_t need) {
  if (need <= *cap)
    return;
  size_t c = *cap ? *cap : 256;
  while (c < need)
    c *= 2;
  char *q = realloc(*p, c);
  if (!q) {
    fputs("ksearch: out of memory\n", stderr);
    abort();
  }
  *p = q;
  *cap = c;
}

static void add_content(ks_llm_sse *s, const char *t, size_t n) {
  if (s->content_len + n > s->max_bytes) {
    s->oversized = true;
    n = s->max_bytes > s->content_len ? s->max_bytes - s->content_len : 0;
  }
  grow(&s->content, &s->content_cap, s->content_len + n + 1);
  memcpy(s->content + s->content_len, t, n);
  s->content_len += n;
  s->content[s->content_len] = 0;
}

static void on_data(ks_llm_sse *s, const char *payload) {
  while (*payload == ' ')
    payload++;
  if (!strncmp(payload, "[DONE]", 6)) {
    s->done = true;
    return;
  }
  json_t *j = json_loads(payload, JSON_DISABLE_EOF_CHECK, NULL);
  if (!j) {
    s->bad_chunks++;
    return;
  }
  json_t *e = json_object_get(j, "error");
  if (e) {
    const char *m = json_string_value(json_object_get(e, "message"));
    ks_strlcpy(s->error, m ? m : "error in stream", sizeof s->error);
  }
  json_t *ch = json_array_get(json_object_get(j, "choices"), 0);
  json_t *delta = json_object_get(ch, "delta");
  const char *t = json_string_value(json_object_get(delta, "content"));
  if (t)
    add_content(s, t, json_string_length(json_object_get(delta, "content")));
  const char *r = json_string_value(json_object_get(delta, "refusal"));
  if (r && !s->refusal[0])
    ks_strlcpy(s->refusal, r, sizeof s->refusal);
  const char *f = json_string_value(json_object_get(ch, "finish_reason"));
  if (f)
    ks_strlcpy(s->finish_reason, f, sizeof s->finish_reason);
  json_t *u = json_object_get(j, "usage");
  if (json_is_object(u)) {
    json_t *pt = json_object_get(u, "prompt_tokens");
    json_t *ct = json_object_get(u, "completion_tokens");
    if (json_is_integer(pt))
      s->prompt_tokens = json_integer_value(pt);
    if (json_is_integer(ct))
      s->completion_tokens = json_integer_value(ct);
  }
  json_decref(j);
}

static void on_line(ks_llm_sse *s, char *line, size_t n) {
  if (n && line[n - 1] == '\r')
    line[--n] = 0;
  s->repaired += ks_llm_utf8_repair(line, n);
  if (!strncmp(line, "data:", 5))
    on_data(s, line + 5);
  /* comments (":"), event:, id:, retry: and blank lines carry nothing here */
}

void ks_llm_sse_feed(ks_llm_sse *s, const char *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (data[i] == '\n') {
      grow(&s->line, &s->line_cap, s->line_len + 1);
      s->line[s->line_len] = 0;
      on_line(s, s->line, s->line_len);
      s->line_len = 0;
      continue;
    }
    /* a line longer than the answer cap is garbage: drop it, keep going */
    if (s->line_len > s->max_bytes + 4096)
      continue;
    grow(&s->line, &s->line_cap, s->line_len + 2);
    s->line[s->line_len++] = data[i];
  }
}

void ks_llm_sse_finish(ks_llm_sse *s) {
  if (s->line_len) {
    grow(&s->line, &s->line_cap, s->line_len + 1);
    s->line[s->line_len] = 0;
    on_line(s, s->line, s->line_len);
    s->line_len = 0;
  }
}
