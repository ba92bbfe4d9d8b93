/* lexer.h — one tokenizer for the C family of kernel languages: C, CUDA C++,
 * OpenCL C and the Metal Shading Language (DESIGN.md: Spec and concept
 * catalogue). The validator, the CUDA analyzer and the translators all read
 * code through it, so that comments, string and character literals and
 * preprocessor lines are handled the same way everywhere: a primitive named
 * in a comment or a string is never "used".
 *
 * Tokens keep their byte range in the source, so a translator can copy the
 * text between tokens (whitespace, comments) unchanged. A preprocessor
 * directive is a KS_TOK_PP token ("#pragma", "#include", "#define"...),
 * followed by the directive's own tokens (in_pp set) and a zero-length
 * KS_TOK_PP_END at the end of its logical line. */
#ifndef KS_SPEC_LEXER_H
#define KS_SPEC_LEXER_H

#include "ksearch.h"

#include <stddef.h>

typedef enum ks_tok_kind {
  KS_TOK_IDENT,
  KS_TOK_NUMBER,
  KS_TOK_STRING, /* "..." with any prefix, raw strings included */
  KS_TOK_CHAR,   /* '.' */
  KS_TOK_PUNCT,
  KS_TOK_PP,     /* '#' and the directive name */
  KS_TOK_HEADER, /* <file.h> after #include */
  KS_TOK_PP_END  /* end of a directive's logical line; zero length */
} ks_tok_kind;

typedef struct ks_tok {
  ks_tok_kind kind;
  int line; /* 1-based */
  int off, len;
  int match; /* index of the matching bracket for ( ) [ ] { }, else -1 */
  bool in_pp;
} ks_tok;

typedef struct ks_toks {
  const char *src; /* not owned */
  ks_tok *t;
  int n, cap;
  int unbalanced_line; /* first line with an unmatched bracket, 0 if none */
} ks_toks;

/* Tokenizes src (kept by pointer: it must outlive the tokens). Errors
 * (KS_ERR_INPUT) name the line: an unterminated comment or literal, a stray
 * character, a NUL byte. Unbalanced brackets are not an error here; see
 * unbalanced_line. */
ks_code ks_lex(const char *src, ks_toks *out, ks_err *err);
/* The same over src[0..len) (src[len] must be 0): a NUL byte before len (a
 * file read whole) is an error naming its line. */
ks_code ks_lex_n(const char *src, size_t len, ks_toks *out, ks_err *err);
void ks_toks_free(ks_toks *ts);

/* True when token i exists and its text is exactly s. */
bool ks_tok_is(const ks_toks *ts, int i, const char *s);
/* Copies token i's text (truncated, always terminated). */
void ks_tok_text(const ks_toks *ts, int i, char *buf, size_t n);
/* Index of the next / previous token outside preprocessor lines, or -1. */
int ks_tok_next(const ks_toks *ts, int i);
int ks_tok_prev(const ks_toks *ts, int i);
/* One past the last byte of token i. */
static inline int ks_tok_end(const ks_toks *ts, int i) {
  return ts->t[i].off + ts->t[i].len;
}

#endif
