/* answer.c — see answer.h. Models wrap JSON and code in prose and Markdown
 * fences, sometimes several; they get cut off at max_tokens; they forget
 * headers. This file finds the part that matters or says precisely why it
 * cannot, so a re-ask can quote the reason. */
#include "llm/answer.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FENCES 64

size_t ks_llm_balanced(const char *s, size_t n) {
  char stack[256];
  int depth = 0;
  bool in_str = false, esc = false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      if (depth == (int)sizeof stack)
        return 0;
      stack[depth++] = c == '{' ? '}' : ']';
    } else if (c == '}' || c == ']') {
      if (!depth || stack[depth - 1] != c)
        return 0;
      if (--depth == 0)
        return i + 1;
    }
    if (depth == 0)
      return 0; /* s[0] was not a bracket */
  }
  return 0;
}

/* ---------------------------------------------------------------- fences */

typedef struct fence {
  char lang[32]; /* first word of the info string, lower case */
  const char *body;
  size_t body_len;
  bool closed;
} fence;

/* Start of the fence marker on this line (up to 3 spaces of indent), or
 * NULL. */
static const char *fence_mark(const char *line, const char *end) {
  const char *p = line;
  for (int k = 0; k < 3 && p < end && *p == ' '; k++)
    p++;
  if (end - p >= 3 && (!strncmp(p, "```", 3) || !strncmp(p, "~~~", 3)))
    return p;
  return NULL;
}

static int find_fences(const char *text, fence *out, int max) {
  int n = 0;
  const char *p = text;
  fence *open = NULL;
  char open_ch = 0;
  while (*p && n <= max) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    const char *m = fence_mark(p, end);
    if (open) {
      if (m && *m == open_ch) {
        open->body_len = (size_t)(p - open->body);
        open->closed = true;
        open = NULL;
      }
    } else if (m && n < max) {
      open = &out[n++];
      memset(open, 0, sizeof *open);
      open_ch = *m;
      const char *q = m;
      while (q < end && *q == open_ch)
        q++;
      while (q < end && *q == ' ')
        q++;
      size_t l = 0;
      while (q < end && !isspace((unsigned char)*q) && *q != '{' &&
             l + 1 < sizeof open->lang)
        open->lang[l++] = (char)tolower((unsigned char)*q++);
      open->lang[l] = 0;
      open->body = nl ? nl + 1 : end;
    }
    if (!nl)
      break;
    p = nl + 1;
  }
  if (open) {
    open->body_len = strlen(open->body);
    open->closed = false;
  }
  return n;
}

/* ---------------------------------------------------------------- JSON */

static bool usable_value(const json_t *j) {
  if (json_is_object(j))
    return true;
  if (!json_is_array(j))
    return false;
  size_t i;
  json_t *x;
  json_array_foreach(j, i, x) if (!json_is_object(x)) return false;
  return true;
}

static json_t *try_parse(const char *s, size_t n, char *why, size_t why_n,
                         const char *where) {
  json_error_t je;
  json_t *j = json_loadb(s, n, 0, &je);
  if (!j) {
    snprintf(why, why_n, "%s is not valid JSON: %s (line %d, column %d)", where,
             je.text, je.line, je.column);
    return NULL;
  }
  if (!usable_value(j)) {
    snprintf(why, why_n, "%s is JSON but not an object or an array of objects",
             where);
    json_decref(j);
    return NULL;
  }
  return j;
}

ks_code ks_llm_extract_json(const char *text, json_t **out, char *why,
                            size_t why_n) {
  *out = NULL;
  snprintf(why, why_n,
           "the answer holds no JSON object; reply with one JSON object "
           "(optionally in a ```json block)");
  if (!text || !*text) {
    snprintf(why, why_n, "the answer is empty; reply with one JSON object");
    return KS_ERR_INPUT;
  }
  fence f[MAX_FENCES];
  int nf = find_fences(text, f, MAX_FENCES);
  bool fence_err = false;
  for (int i = 0; i < nf; i++) {
    if (strcmp(f[i].lang, "json") && f[i].lang[0])
      continue;
    if (!f[i].closed) {
      snprintf(why, why_n,
               "the ```json block is not closed: the answer was cut off; "
               "reply with a shorter, complete JSON object");
      fence_err = true;
      continue;
    }
    char where[64];
    snprintf(where, sizeof where, "the %s fenced block",
             f[i].lang[0] ? "```json" : "```");
    json_t *j = try_parse(f[i].body, f[i].body_len, why, why_n, where);
    if (j) {
      *out = j;
      return KS_OK;
    }
    fence_err = true;
  }
  if (fence_err)
    return KS_ERR_INPUT; /* the block the model meant is broken: say so */
  /* no usable fence: the first balanced value in the text that parses */
  size_t n = strlen(text);
  int tries = 0;
  bool cut = false;
  char first_err[512] = "";
  for (size_t i = 0; i < n && tries < 200; i++) {
    if (text[i] != '{' && text[i] != '[')
      continue;
    tries++;
    size_t len = ks_llm_balanced(text + i, n - i);
    if (!len) {
      if (text[i] == '{')
        cut = true;
      continue;
    }
    char e[512];
    json_t *j = try_parse(text + i, len, e, sizeof e, "the JSON in the answer");
    if (j) {
      *out = j;
      return KS_OK;
    }
    if (!first_err[0] && text[i] == '{')
      ks_strlcpy(first_err, e, sizeof first_err);
  }
  if (first_err[0])
    ks_strlcpy(why, first_err, why_n);
  else if (cut)
    snprintf(why, why_n,
             "the JSON is cut off (a '{' is never closed): the answer ended "
             "too early; reply with a shorter, complete JSON object");
  return KS_ERR_INPUT;
}

/* ---------------------------------------------------------------- code */

static bool lang_fits(const char *lang, const char *backend) {
  static const struct {
    const char *backend, *langs[8];
  } k[] = {
      {"c", {"c", "cpp", "c++", "cc", "h", "gnuc", NULL}},
      {"opencl", {"opencl", "cl", "c", "cpp", NULL}},
      {"cuda", {"cuda", "cu", "cpp", "c++", NULL}},
      {"mlx", {"cuda", "cu", "metal", "cpp", "c++", "python", NULL}},
  };
  if (!lang[0])
    return true;
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    if (strcmp(k[i].backend, backend))
      continue;
    for (int j = 0; k[i].langs[j]; j++)
      if (!strcmp(lang, k[i].langs[j]))
        return true;
    return false;
  }
  return !strcmp(lang, backend);
}

static char *dup_n(const char *s, size_t n) {
  char *p = ks_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

/* <file name="kernel.c">...</file>: the content of the first file tag. */
static char *file_tag(const char *text, bool *unclosed) {
  const char *t = strstr(text, "<file");
  *unclosed = false;
  if (!t || (t[5] != ' ' && t[5] != '>'))
    return NULL;
  const char *gt = strchr(t, '>');
  if (!gt)
    return NULL;
  const char *body = gt + 1;
  if (*body == '\n')
    body++;
  const char *end = strstr(body, "</file>");
  if (!end) {
    *unclosed = true;
    return NULL;
  }
  return dup_n(body, (size_t)(end - body));
}

static bool looks_like_code(const char *text) {
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  static const char *const starts[] = {"//",      "/*",       "#include",
                                       "#define", "#pragma",  "void ",
                                       "static ", "typedef ", NULL};
  bool start = false;
  for (int i = 0; starts[i]; i++)
    start |= !strncmp(p, starts[i], strlen(starts[i]));
  return start && strchr(p, '{') && strchr(p, ';');
}

char *ks_llm_extract_code(const char *text, const char *backend, char *why,
                          size_t why_n) {
  if (!text || !*text) {
    snprintf(why, why_n, "the answer is empty");
    return NULL;
  }
  fence f[MAX_FENCES];
  int nf = find_fences(text, f, MAX_FENCES);
  int best = -1;
  bool unclosed = false, other_lang = false;
  for (int i = 0; i < nf; i++) {
    if (!lang_fits(f[i].lang, backend)) {
      other_lang = true;
      continue;
    }
    if (!f[i].closed) {
      unclosed = true;
      continue;
    }
    if (best < 0 || f[i].body_len > f[best].body_len)
      best = i;
  }
  if (best >= 0) {
    const char *b = f[best].body;
    size_t n = f[best].body_len;
    bool blank = true;
    for (size_t i = 0; i < n; i++)
      blank &= isspace((unsigned char)b[i]) != 0;
    if (!blank)
      return dup_n(b, n);
    snprintf(why, why_n, "the code block is empty");
    return NULL;
  }
  bool tag_open;
  char *tag = file_tag(text, &tag_open);
  if (tag)
    return tag;
  if (unclosed || tag_open) {
    snprintf(why, why_n,
             "the code block is not closed: the answer was cut off; reply "
             "with the complete file, shorter if need be");
    return NULL;
  }
  if (!nf && looks_like_code(text))
    return ks_strdup(text);
  if (other_lang)
    snprintf(why, why_n,
             "the answer has code blocks, but none in the language of the %s "
             "backend; reply with the whole file in one ```%s block",
             backend, backend);
  else
    snprintf(why, why_n,
             "the answer holds no code block; reply with the whole file in "
             "one ```%s block",
             backend);
  return NULL;
}

char *ks_llm_ensure_header(const char *code, const char *backend,
                           const char *entry) {
  const char *p = code;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    const char *q = p;
    while (q < p + len && isspace((unsigned char)*q))
      q++;
    if ((size_t)(p + len - q) > 11 && !strncmp(q, "// ksearch:", 11)) {
      const char *b = strstr(q, "backend=");
      if (b && b < p + len)
        return ks_strdup(code);
    }
    if (!nl)
      break;
    p = nl + 1;
  }
  ks_buf out;
  ks_buf_init(&out);
  ks_buf_printf(&out, "// ksearch: backend=%s entry=%s\n", backend, entry);
  ks_buf_puts(&out, code);
  if (out.len && out.data[out.len - 1] != '\n')
    ks_buf_puts(&out, "\n");
  return out.data;
}
