/* html_util.c — escaping, UTF-8 repair and status colours shared by the
 * report's page and charts (report_internal.h). */
#include "report/report_internal.h"

#include <stdlib.h>
#include <string.h>

void ks_html_esc(ks_buf *b, const char *s) {
  if (!s)
    return;
  const char *run = s;
  for (; *s; s++) {
    const char *rep = NULL;
    switch (*s) {
    case '&': rep = "&amp;"; break;
    case '<': rep = "&lt;"; break;
    case '>': rep = "&gt;"; break;
    case '"': rep = "&quot;"; break;
    case '\'': rep = "&#39;"; break;
    default: break;
    }
    if (rep) {
      ks_buf_append(b, run, (size_t)(s - run));
      ks_buf_puts(b, rep);
      run = s + 1;
    }
  }
  ks_buf_append(b, run, (size_t)(s - run));
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  size_t len;
  unsigned min;
  unsigned cp;
  if (p[0] < 0x80)
    return p[0] ? 1 : 0; /* NUL is not text either */
  if ((p[0] & 0xE0) == 0xC0)
    len = 2, cp = p[0] & 0x1F, min = 0x80;
  else if ((p[0] & 0xF0) == 0xE0)
    len = 3, cp = p[0] & 0x0F, min = 0x800;
  else if ((p[0] & 0xF8) == 0xF0)
    len = 4, cp = p[0] & 0x07, min = 0x10000;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

json_t *ks_report_str(const char *p, size_t n) {
  char *copy = ks_xmalloc(n + 1);
  size_t i = 0, o = 0;
  while (i < n) {
    size_t l = utf8_len((const unsigned char *)p + i, n - i);
    if (l == 0) {
      copy[o++] = '?';
      i++;
    } else {
      memcpy(copy + o, p + i, l);
      o += l;
      i += l;
    }
  }
  json_t *s = json_stringn(copy, o);
  free(copy);
  return s ? s : json_string("");
}

const char *ks_report_status_colour(const char *s) {
  static const struct {
    const char *status, *colour;
  } k[] = {
      {"ok", "#2e7d32"},        {"solved", "#2e7d32"},
      {"incorrect", "#ef6c00"}, {"compile_error", "#c62828"},
      {"failed", "#c62828"},    {"crash", "#6a1b9a"},
      {"timeout", "#8d6e63"},   {"too_hard", "#8d6e63"},
      {"oom", "#ad1457"},       {"rejected", "#616161"},
      {"pruned", "#9e9e9e"},    {"open", "#1565c0"},
      {"running", "#f9a825"},   {"interrupted", "#f9a825"},
  };
  for (size_t i = 0; s && i < sizeof k / sizeof *k; i++)
    if (!strcmp(s, k[i].status))
      return k[i].colour;
  return "#00838f";
}
