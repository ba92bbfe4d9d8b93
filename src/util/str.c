/* str.c — growable strings and small allocation helpers.
 *
 * ks_xmalloc and friends abort on OOM: they are only used for bookkeeping
 * measured in kilobytes. Buffers sized by a workload use plain malloc and
 * report KS_ERR_NOMEM as a value. */
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *ks_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fputs("ksearch: out of memory\n", stderr);
    abort();
  }
  return p;
}

void *ks_xcalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) {
    fputs("ksearch: out of memory\n", stderr);
    abort();
  }
  return p;
}

char *ks_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = ks_xmalloc(n);
  memcpy(p, s, n);
  return p;
}

void ks_strlcpy(char *dst, const char *src, size_t n) {
  if (!n)
    return;
  size_t l = strlen(src);
  if (l >= n)
    l = n - 1;
  memcpy(dst, src, l);
  dst[l] = 0;
}

void ks_buf_init(ks_buf *b) { memset(b, 0, sizeof *b); }

void ks_buf_free(ks_buf *b) {
  free(b->data);
  ks_buf_init(b);
}

void ks_buf_append(ks_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      fputs("ksearch: out of memory\n", stderr);
      abort();
    }
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void ks_buf_puts(ks_buf *b, const char *s) { ks_buf_append(b, s, strlen(s)); }

void ks_buf_printf(ks_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof small) {
    ks_buf_append(b, small, (size_t)n);
    return;
  }
  char *big = ks_xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  ks_buf_append(b, big, (size_t)n);
  free(big);
}

bool ks_is_c_ident(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
    return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_'))
      return false;
  return true;
}

bool ks_is_c_keyword(const char *s) {
  /* C11 keywords plus the C++/OpenCL words a generated signature or a
   * translated kernel would also trip over */
  static const char *const kw[] = {
      "auto",       "break",     "case",           "char",
      "const",      "continue",  "default",        "do",
      "double",     "else",      "enum",           "extern",
      "float",      "for",       "goto",           "if",
      "inline",     "int",       "long",           "register",
      "restrict",   "return",    "short",          "signed",
      "sizeof",     "static",    "struct",         "switch",
      "typedef",    "union",     "unsigned",       "void",
      "volatile",   "while",     "_Alignas",       "_Alignof",
      "_Atomic",    "_Bool",     "_Complex",       "_Generic",
      "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
      "bool",       "true",      "false",          "class",
      "new",        "delete",    "this",           "template",
      "namespace",  "operator",  "kernel",         "global",
      "local",      "constant",  "private",        "half"};
  for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
    if (!strcmp(s, kw[i]))
      return true;
  return false;
}

bool ks_is_c_name(const char *s) {
  return ks_is_c_ident(s) && !ks_is_c_keyword(s);
}

void ks_write_event_u64(int fd, const char *head, uint64_t v) {
  char buf[160];
  size_t len = 0;
  while (*head && len < 100)
    buf[len++] = *head++;
  char d[24];
  int nd = 0;
  do {
    d[nd++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && nd < 23);
  while (nd)
    buf[len++] = d[--nd];
  buf[len++] = '}';
  buf[len++] = '\n';
  ssize_t w = write(fd, buf, len);
  (void)w;
}
