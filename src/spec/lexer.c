/* lexer.c — see lexer.h. A hand-written scanner in the manner of a C
 * preprocessor's first phases: line splices, comments, literals with their
 * prefixes (L, u, U, u8, raw R"d(...)d"), pp-numbers, the longest
 * punctuator, directives to the end of their logical line. */
#include "spec/lexer.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* longest first: the scan takes the first that matches */
static const char *const k_puncts[] = {
    "<<<", ">>>", "<<=", ">>=", "...", "->", "++", "--", "<<",
    ">>",  "<=",  ">=",  "==",  "!=",  "&&", "||", "+=", "-=",
    "*=",  "/=",  "%=",  "&=",  "|=",  "^=", "::", "##"};

typedef struct lexer {
  const char *s;
  size_t i;
  int line;
  ks_toks *out;
  bool in_pp;
  ks_err *err;
} lexer;

static void push(lexer *L, ks_tok_kind k, size_t off, size_t len, int line) {
  ks_toks *ts = L->out;
  if (ts->n == ts->cap) {
    ts->cap = ts->cap ? ts->cap * 2 : 256;
    ks_tok *t = realloc(ts->t, (size_t)ts->cap * sizeof *t);
    if (!t)
      abort(); /* bookkeeping allocation, as ks_xmalloc */
    ts->t = t;
  }
  ks_tok *t = &ts->t[ts->n++];
  t->kind = k;
  t->line = line;
  t->off = (int)off;
  t->len = (int)len;
  t->match = -1;
  t->in_pp = L->in_pp && k != KS_TOK_PP;
}

/* A backslash-newline splice (with an optional \r). Returns its length. */
static size_t splice_at(const char *s, size_t i) {
  if (s[i] != '\\')
    return 0;
  if (s[i + 1] == '\n')
    return 2;
  if (s[i + 1] == '\r' && s[i + 2] == '\n')
    return 3;
  return 0;
}

/* Skips a comment starting at L->i (which holds '/'); returns false at the
 * end of input inside a block comment. */
static bool skip_comment(lexer *L) {
  const char *s = L->s;
  if (s[L->i + 1] == '/') {
    /* a line comment ends at a newline that is not spliced */
    L->i += 2;
    while (s[L->i] && s[L->i] != '\n') {
      size_t sp = splice_at(s, L->i);
      if (sp) {
        L->i += sp;
        L->line++;
      } else {
        L->i++;
      }
    }
    return true;
  }
  int start = L->line;
  L->i += 2;
  while (s[L->i] && !(s[L->i] == '*' && s[L->i + 1] == '/')) {
    if (s[L->i] == '\n')
      L->line++;
    L->i++;
  }
  if (!s[L->i]) {
    ks_err_set(L->err, KS_ERR_INPUT,
               "line %d: unterminated /* comment; close it with */", start);
    return false;
  }
  L->i += 2;
  return true;
}

static bool lex_quoted(lexer *L, size_t start, char q) {
  const char *s = L->s;
  int line = L->line;
  size_t i = L->i + 1; /* after the opening quote */
  for (;;) {
    char c = s[i];
    if (!c || c == '\n') {
      ks_err_set(L->err, KS_ERR_INPUT,
                 "line %d: unterminated %s literal; close it with %c", line,
                 q == '"' ? "string" : "character", q);
      return false;
    }
    if (c == '\\') {
      size_t sp = splice_at(s, i);
      if (sp) {
        i += sp;
        L->line++;
        continue;
      }
      if (!s[i + 1]) {
        i++; /* a backslash at the very end: unterminated on the next turn */
        continue;
      }
      i += 2;
      continue;
    }
    i++;
    if (c == q)
      break;
  }
  push(L, q == '"' ? KS_TOK_STRING : KS_TOK_CHAR, start, i - start, line);
  L->i = i;
  return true;
}

/* R"delim( ... )delim" ; L->i at the quote. */
static bool lex_raw(lexer *L, size_t start) {
  const char *s = L->s;
  int line = L->line;
  size_t i = L->i + 1;
  char delim[20];
  size_t dl = 0;
  while (s[i] && s[i] != '(' && dl < 16)
    delim[dl++] = s[i++];
  if (s[i] != '(') {
    ks_err_set(L->err, KS_ERR_INPUT,
               "line %d: malformed raw string literal (expected '(' within "
               "16 characters of R\")",
               line);
    return false;
  }
  delim[dl] = 0;
  i++;
  for (;;) {
    if (!s[i]) {
      ks_err_set(L->err, KS_ERR_INPUT,
                 "line %d: unterminated raw string literal", line);
      return false;
    }
    if (s[i] == ')' && !strncmp(s + i + 1, delim, dl) && s[i + 1 + dl] == '"') {
      i += dl + 2;
      break;
    }
    if (s[i] == '\n')
      L->line++;
    i++;
  }
  push(L, KS_TOK_STRING, start, i - start, line);
  L->i = i;
  return true;
}

static void lex_number(lexer *L) {
  const char *s = L->s;
  size_t i = L->i;
  i++;
  for (;;) {
    char c = s[i];
    if ((c == '+' || c == '-') && strchr("eEpP", s[i - 1]))
      i++;
    else if (isalnum((unsigned char)c) || c == '_' || c == '.')
      i++;
    else if (c == '\'' && isalnum((unsigned char)s[i + 1]))
      i += 2; /* C++14 digit separator */
    else
      break;
  }
  push(L, KS_TOK_NUMBER, L->i, i - L->i, L->line);
  L->i = i;
}

/* The directive: '#', optional blanks, the name. */
static void lex_directive(lexer *L) {
  const char *s = L->s;
  size_t start = L->i;
  size_t i = L->i + 1;
  while (s[i] == ' ' || s[i] == '\t')
    i++;
  while (isalnum((unsigned char)s[i]) || s[i] == '_')
    i++;
  L->in_pp = true;
  push(L, KS_TOK_PP, start, i - start, L->line);
  L->i = i;
  /* #include <header>: one token, so that "cuda_fp16.h" is not three */
  size_t n = i - start;
  if (n >= 8 && !strncmp(s + i - 7, "include", 7)) {
    size_t j = i;
    while (s[j] == ' ' || s[j] == '\t')
      j++;
    if (s[j] == '<') {
      size_t k = j + 1;
      while (s[k] && s[k] != '>' && s[k] != '\n')
        k++;
      if (s[k] == '>') {
        push(L, KS_TOK_HEADER, j, k + 1 - j, L->line);
        L->i = k + 1;
      }
    }
  }
}

static bool at_line_start(const lexer *L) {
  /* only blanks (or nothing) since the previous newline */
  size_t i = L->i;
  while (i > 0) {
    char c = L->s[i - 1];
    if (c == '\n')
      return true;
    if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v')
      return false;
    i--;
  }
  return true;
}

static bool lex_all(lexer *L) {
  const char *s = L->s;
  for (;;) {
    char c = s[L->i];
    if (!c)
      break;
    size_t sp = splice_at(s, L->i);
    if (sp) {
      L->i += sp;
      L->line++;
      continue;
    }
    if (c == '\n') {
      if (L->in_pp) {
        push(L, KS_TOK_PP_END, L->i, 0, L->line);
        L->in_pp = false;
      }
      L->line++;
      L->i++;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      L->i++;
      continue;
    }
    if (c == '/' && (s[L->i + 1] == '/' || s[L->i + 1] == '*')) {
      if (!skip_comment(L))
        return false;
      continue;
    }
    if (c == '#' && !L->in_pp && at_line_start(L)) {
      lex_directive(L);
      continue;
    }
    if (isalpha((unsigned char)c) || c == '_') {
      size_t j = L->i;
      while (isalnum((unsigned char)s[j]) || s[j] == '_')
        j++;
      size_t n = j - L->i;
      const char *w = s + L->i;
      bool pre =
          (n == 1 && strchr("LuU", w[0])) || (n == 2 && !strncmp(w, "u8", 2));
      bool raw = (n == 1 && w[0] == 'R') ||
                 (n == 2 && strchr("LuU", w[0]) && w[1] == 'R') ||
                 (n == 3 && !strncmp(w, "u8R", 3));
      if (s[j] == '"' && raw) {
        size_t start = L->i;
        L->i = j;
        if (!lex_raw(L, start))
          return false;
        continue;
      }
      if ((s[j] == '"' || s[j] == '\'') && pre) {
        size_t start = L->i;
        L->i = j;
        if (!lex_quoted(L, start, s[j]))
          return false;
        continue;
      }
      push(L, KS_TOK_IDENT, L->i, n, L->line);
      L->i = j;
      continue;
    }
    if (isdigit((unsigned char)c) ||
        (c == '.' && isdigit((unsigned char)s[L->i + 1]))) {
      lex_number(L);
      continue;
    }
    if (c == '"' || c == '\'') {
      if (!lex_quoted(L, L->i, c))
        return false;
      continue;
    }
    if ((unsigned char)c >= 0x80 || (c < 0x20 && c != '\t') || c == '`' ||
        c == '@' || c == '$' || c == '\\') {
      ks_err_set(L->err, KS_ERR_INPUT,
                 "line %d: unexpected character 0x%02x outside comments and "
                 "strings; this is not C-family source",
                 L->line, (unsigned char)c);
      return false;
    }
    size_t len = 1;
    for (size_t k = 0; k < sizeof k_puncts / sizeof *k_puncts; k++) {
      size_t pl = strlen(k_puncts[k]);
      if (pl > len && !strncmp(s + L->i, k_puncts[k], pl)) {
        len = pl;
        break;
      }
    }
    push(L, KS_TOK_PUNCT, L->i, len, L->line);
    L->i += len;
  }
  if (L->in_pp) {
    push(L, KS_TOK_PP_END, L->i, 0, L->line);
    L->in_pp = false;
  }
  return true;
}

/* The directive of PP token t ("#  if" -> "if"), into buf. */
static void pp_name(const ks_toks *ts, const ks_tok *t, char *buf, size_t n) {
  const char *p = ts->src + t->off + 1, *e = ts->src + t->off + t->len;
  while (p < e && (*p == ' ' || *p == '\t'))
    p++;
  size_t l = (size_t)(e - p) < n - 1 ? (size_t)(e - p) : n - 1;
  memcpy(buf, p, l);
  buf[l] = 0;
}

/* A conditional (#if ... #endif) as bracket matching sees it: a compiler
 * takes one branch, so every branch starts from the brackets open at #if
 * and the code after #endif continues from the first branch's (a `for (...)
 * {` written once per branch is one open brace, not two). */
typedef struct {
  int *at_if, n_if;      /* the open brackets at #if */
  int *first_end, n_end; /* at the end of the first branch; n_end -1: none */
} cond_frame;

static int *snap(const int *st, int n) {
  int *c = ks_xmalloc(sizeof(int) * (size_t)(n + 1));
  memcpy(c, st, sizeof(int) * (size_t)n);
  return c;
}

/* Brackets match within the code and, separately, within each directive. */
static void match_brackets(ks_toks *ts) {
  int *stack = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  int *pstack = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  int sp = 0, psp = 0;
  cond_frame *cf = NULL;
  int ncf = 0, capcf = 0;
  for (int i = 0; i < ts->n; i++) {
    ks_tok *t = &ts->t[i];
    if (t->kind == KS_TOK_PP) {
      psp = 0;
      char d[16];
      pp_name(ts, t, d, sizeof d);
      if (!strcmp(d, "if") || !strcmp(d, "ifdef") || !strcmp(d, "ifndef")) {
        if (ncf == capcf) {
          capcf = capcf ? 2 * capcf : 8;
          cond_frame *g = ks_xmalloc(sizeof *g * (size_t)capcf);
          if (ncf)
            memcpy(g, cf, sizeof *cf * (size_t)ncf);
          free(cf);
          cf = g;
        }
        cf[ncf++] = (cond_frame){snap(stack, sp), sp, NULL, -1};
      } else if ((!strcmp(d, "elif") || !strcmp(d, "else")) && ncf) {
        cond_frame *f = &cf[ncf - 1];
        if (f->n_end < 0) {
          f->first_end = snap(stack, sp);
          f->n_end = sp;
        }
        memcpy(stack, f->at_if, sizeof(int) * (size_t)f->n_if);
        sp = f->n_if;
      } else if (!strcmp(d, "endif") && ncf) {
        cond_frame *f = &cf[--ncf];
        if (f->n_end >= 0) {
          memcpy(stack, f->first_end, sizeof(int) * (size_t)f->n_end);
          sp = f->n_end;
        }
        free(f->at_if);
        free(f->first_end);
      }
      continue;
    }
    if (t->kind == KS_TOK_PP_END) {
      if (psp && !ts->unbalanced_line)
        ts->unbalanced_line = ts->t[pstack[0]].line;
      psp = 0;
      continue;
    }
    if (t->kind != KS_TOK_PUNCT || t->len != 1)
      continue;
    char c = ts->src[t->off];
    int *st = t->in_pp ? pstack : stack;
    int *n = t->in_pp ? &psp : &sp;
    if (c == '(' || c == '[' || c == '{') {
      st[(*n)++] = i;
    } else if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (*n && ts->src[ts->t[st[*n - 1]].off] == open) {
        int j = st[--*n];
        /* a bracket closed in a first branch and again in a later one: the
         * first close keeps the match (matches stay mutual), the later one
         * none */
        if (ts->t[j].match < 0) {
          ts->t[j].match = i;
          t->match = j;
        }
      } else if (!ts->unbalanced_line) {
        ts->unbalanced_line = t->line;
      }
    }
  }
  if (sp && !ts->unbalanced_line)
    ts->unbalanced_line = ts->t[stack[sp - 1]].line;
  for (int k = 0; k < ncf; k++) { /* #if without #endif */
    free(cf[k].at_if);
    free(cf[k].first_end);
  }
  free(cf);
  free(stack);
  free(pstack);
}

ks_code ks_lex_n(const char *src, size_t len, ks_toks *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  out->src = src;
  /* a NUL inside the file would end the C string early and hide the rest */
  const char *nul = memchr(src, 0, len);
  if (nul) {
    int line = 1;
    for (const char *p = src; p < nul; p++)
      line += *p == '\n';
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: NUL byte (0x00); source files hold text, so "
                      "remove it (the rest of the file would be ignored)",
                      line);
  }
  lexer L = {.s = src, .i = 0, .line = 1, .out = out, .err = err};
  if (!lex_all(&L)) {
    ks_toks_free(out);
    out->src = src;
    return KS_ERR_INPUT;
  }
  match_brackets(out);
  return KS_OK;
}

ks_code ks_lex(const char *src, ks_toks *out, ks_err *err) {
  return ks_lex_n(src, strlen(src), out, err);
}

void ks_toks_free(ks_toks *ts) {
  free(ts->t);
  ts->t = NULL;
  ts->n = ts->cap = 0;
}

bool ks_tok_is(const ks_toks *ts, int i, const char *s) {
  if (i < 0 || i >= ts->n)
    return false;
  size_t n = strlen(s);
  return (size_t)ts->t[i].len == n && !memcmp(ts->src + ts->t[i].off, s, n);
}

void ks_tok_text(const ks_toks *ts, int i, char *buf, size_t n) {
  if (!n)
    return;
  buf[0] = 0;
  if (i < 0 || i >= ts->n)
    return;
  size_t l = (size_t)ts->t[i].len;
  if (l >= n)
    l = n - 1;
  memcpy(buf, ts->src + ts->t[i].off, l);
  buf[l] = 0;
}

int ks_tok_next(const ks_toks *ts, int i) {
  for (i++; i < ts->n; i++)
    if (!ts->t[i].in_pp && ts->t[i].kind != KS_TOK_PP &&
        ts->t[i].kind != KS_TOK_PP_END)
      return i;
  return -1;
}

int ks_tok_prev(const ks_toks *ts, int i) {
  for (i--; i >= 0; i--)
    if (!ts->t[i].in_pp && ts->t[i].kind != KS_TOK_PP &&
        ts->t[i].kind != KS_TOK_PP_END)
      return i;
  return -1;
}
