/* text.c — small text transformations of the LLM client (llm.h): repairing
 * invalid UTF-8 in answers (a server may send any bytes; jansson, SQLite and
 * the next prompt need valid text) and masking decimal numbers for the call
 * cache's key. */
#include "llm/llm.h"
#include "util/util.h"

#include <ctype.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0)
      lo = 0xA0;
    if (c == 0xED)
      hi = 0x9F; /* no UTF-16 surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0)
      lo = 0x90;
    if (c == 0xF4)
      hi = 0x8F;
  } else
    return 0;
  if (n < len)
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  return len;
}

size_t ks_llm_utf8_repair(char *s, size_t len) {
  size_t fixed = 0;
  unsigned char *u = (unsigned char *)s;
  for (size_t i = 0; i < len;) {
    size_t k = utf8_seq(u + i, len - i);
    if (k) {
      i += k;
    } else {
      u[i++] = '?';
      fixed++;
    }
  }
  return fixed;
}

char *ks_llm_mask_decimals(const char *s) {
  ks_buf b;
  ks_buf_init(&b);
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    bool start = isdigit((unsigned char)s[i]) &&
                 (i == 0 || (!isalnum((unsigned char)s[i - 1]) &&
                             s[i - 1] != '_' && s[i - 1] != '.'));
    if (!start) {
      ks_buf_append(&b, s + i, 1);
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && isdigit((unsigned char)s[j]))
      j++;
    bool decimal = false;
    if (j < n && s[j] == '.' && j + 1 < n && isdigit((unsigned char)s[j + 1])) {
      decimal = true;
      j++;
      while (j < n && isdigit((unsigned char)s[j]))
        j++;
    }
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
      size_t k = j + 1;
      if (k < n && (s[k] == '+' || s[k] == '-'))
        k++;
      if (k < n && isdigit((unsigned char)s[k])) {
        decimal = true;
        j = k;
        while (j < n && isdigit((unsigned char)s[j]))
          j++;
      }
    }
    if (decimal) {
      /* a sign belongs to the number */
      if (b.len && (b.data[b.len - 1] == '-' || b.data[b.len - 1] == '+'))
        b.data[--b.len] = 0;
      ks_buf_puts(&b, "#");
    } else {
      ks_buf_append(&b, s + i, j - i);
    }
    i = j;
  }
  return b.data ? b.data : ks_strdup("");
}

char *ks_llm_mask_machine(const char *s) {
  static const char *const heads[] = {"device: ", "measured on this device"};
  ks_buf b;
  ks_buf_init(&b);
  for (const char *line = s; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *head = NULL;
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
      if (!strncmp(line, heads[i], strlen(heads[i])))
        head = heads[i];
    if (head) {
      ks_buf_puts(&b, head);
      ks_buf_puts(&b, "#");
    } else {
      ks_buf_append(&b, line, len);
    }
    if (!end)
      break;
    ks_buf_puts(&b, "\n");
    line = end + 1;
  }
  return b.data ? b.data : ks_strdup("");
}
