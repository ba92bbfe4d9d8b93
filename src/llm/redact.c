/* redact.c — keeps credentials out of everything the LLM client writes: log
 * lines, error messages, the store's response column and the call cache
 * (llm.h). The store redacts request JSON by key; this handles free text,
 * where a server may echo the key back ("Incorrect API key provided: sk-...").
 */
#include "llm/llm.h"
#include "util/util.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static bool tok_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

static size_t tok_len(const char *s) {
  size_t n = 0;
  while (s[n] && tok_char(s[n]))
    n++;
  return n;
}

/* Length of a credential-looking token starting at s, 0 if none. */
static size_t secret_at(const char *s, const char *start) {
  /* a token must start at a word boundary */
  if (s > start && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
    return 0;
  if (!strncmp(s, "sk-", 3) || !strncmp(s, "AIza", 4)) {
    size_t n = tok_len(s);
    return n >= 20 ? n : 0;
  }
  return 0;
}

static const char *const k_secret_names[] = {
    "api_key", "apikey",       "api-key",  "x-api-key", "authorization",
    "secret",  "access_token", "password", NULL};

/* After `"name"` or `name` followed by ':' or '=', the value to hide:
 * returns its offset and length from s, or 0 length. */
static size_t named_secret(const char *s, size_t *skip) {
  for (int i = 0; k_secret_names[i]; i++) {
    size_t kl = strlen(k_secret_names[i]);
    if (strncasecmp(s, k_secret_names[i], kl))
      continue;
    const char *p = s + kl;
    if (*p == '"' || *p == '\'')
      p++;
    while (*p == ' ')
      p++;
    if (*p != ':' && *p != '=')
      continue;
    p++;
    while (*p == ' ')
      p++;
    if (*p == '"' || *p == '\'')
      p++;
    if (!strncasecmp(p, "bearer ", 7))
      p += 7;
    size_t n = tok_len(p);
    if (n < 4 || !strncmp(p, "[redacted]", 10))
      continue;
    *skip = (size_t)(p - s);
    return n;
  }
  return 0;
}

/* A plain loop, not strncmp: gcc 12 with ASan + UBSan at -O2 took p + 7 for
 * a zero-sized object and failed the -Werror build (-Wstringop-overread). */
static bool starts_with(const char *s, const char *prefix) {
  while (*prefix && *s == *prefix)
    s++, prefix++;
  return !*prefix;
}

char *ks_llm_redact(const char *text, const char *key) {
  if (!text)
    return ks_strdup("");
  ks_buf b;
  ks_buf_init(&b);
  size_t kl = key ? strlen(key) : 0;
  const char *p = text;
  while (*p) {
    if (kl >= 4 && !strncmp(p, key, kl)) {
      ks_buf_puts(&b, "[redacted]");
      p += kl;
      continue;
    }
    if (!strncasecmp(p, "bearer ", 7) && tok_len(p + 7) >= 4 &&
        !starts_with(p + 7, "[redacted]")) {
      ks_buf_append(&b, p, 7);
      ks_buf_puts(&b, "[redacted]");
      p += 7 + tok_len(p + 7);
      continue;
    }
    size_t n = secret_at(p, text);
    if (n) {
      ks_buf_puts(&b, "[redacted]");
      p += n;
      continue;
    }
    size_t skip = 0;
    n = named_secret(p, &skip);
    if (n) {
      ks_buf_append(&b, p, skip);
      ks_buf_puts(&b, "[redacted]");
      p += skip + n;
      continue;
    }
    ks_buf_append(&b, p, 1);
    p++;
  }
  if (!b.data)
    return ks_strdup("");
  return b.data;
}
