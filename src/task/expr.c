/* expr.c — recursive-descent parser and evaluator for expr.h.
 *
 * Grammar (lowest precedence first):
 *   sum   := prod (('+'|'-') prod)*
 *   prod  := unary (('*'|'/'|'%') unary)*
 *   unary := '-' unary | pow
 *   pow   := atom ('^' unary | '**' unary)?     right associative
 *   atom  := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
 * Errors report the column so a task author can find the mistake.
 * Nesting is bounded (KS_EXPR_MAX_DEPTH): parsing, evaluating and freeing
 * recurse over the tree, and a task file is untrusted input, so a deep one is
 * an error at the column where it gets too deep, never a stack overflow.
 */
#include "task/expr.h"
#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { E_NUM, E_VAR, E_NEG, E_BIN, E_CALL } e_kind;

struct ks_expr {
  e_kind kind;
  double num;
  char op;        /* E_BIN: + - * / % ^ */
  char name[64];  /* E_VAR, E_CALL */
  int index;      /* E_VAR: into the parse-time names, -1 if unresolved */
  ks_expr *a, *b; /* operands; E_CALL: a = first arg, b = second or NULL */
  int nargs;
  int depth; /* 1 + the deeper operand's: bounds ev() and ks_expr_free() */
};

typedef struct parser {
  const char *src, *p;
  const char *const *names;
  int n_names;
  ks_err *err;
  bool failed;
  int depth; /* recursion depth of the parse functions */
} parser;

static ks_expr *node(e_kind k) {
  ks_expr *e = ks_xcalloc(1, sizeof *e);
  e->kind = k;
  e->index = -1;
  e->depth = 1;
  return e;
}

static void fail(parser *ps, const char *what) {
  if (ps->failed)
    return;
  ps->failed = true;
  ks_err_set(ps->err, KS_ERR_INPUT, "%s at column %d of \"%s\"", what,
             (int)(ps->p - ps->src) + 1, ps->src);
}

/* Enters one level of parse recursion; false (and an error) past the limit. */
static bool enter(parser *ps) {
  /* a bracket level is a parse_sum and a parse_unary frame (+ pow) */
  if (++ps->depth <= 3 * KS_EXPR_MAX_DEPTH)
    return true;
  fail(ps, "expression nested too deeply (more than " KS_EXPR_MAX_DEPTH_TEXT
           " levels of brackets, signs or powers)");
  return false;
}

/* Sets e's depth from its operands; frees it and fails past the limit. */
static ks_expr *sealed(parser *ps, ks_expr *e) {
  int da = e->a ? e->a->depth : 0, db = e->b ? e->b->depth : 0;
  e->depth = 1 + (da > db ? da : db);
  if (e->depth > KS_EXPR_MAX_DEPTH) {
    fail(ps, "expression nested too deeply (more than " KS_EXPR_MAX_DEPTH_TEXT
             " levels of operators); split it or simplify it");
    ks_expr_free(e);
    return NULL;
  }
  return e;
}

static void skip(parser *ps) {
  while (isspace((unsigned char)*ps->p))
    ps->p++;
}

static ks_expr *parse_sum(parser *ps);
static ks_expr *parse_unary(parser *ps);

static const char *const k_funcs[] = {"min",  "max",  "ceil", "floor",
                                      "cdiv", "sqrt", "log2"};
static int func_arity(const char *name) {
  if (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "cdiv"))
    return 2;
  for (size_t i = 0; i < sizeof k_funcs / sizeof *k_funcs; i++)
    if (!strcmp(name, k_funcs[i]))
      return 1;
  return -1;
}

static ks_expr *parse_atom(parser *ps) {
  skip(ps);
  const char *start = ps->p;
  if (isdigit((unsigned char)*ps->p) || *ps->p == '.') {
    char *end;
    double v = strtod(ps->p, &end);
    if (end == ps->p) {
      fail(ps, "bad number");
      return NULL;
    }
    ps->p = end;
    ks_expr *e = node(E_NUM);
    e->num = v;
    return e;
  }
  if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
      ps->p++;
    size_t len = (size_t)(ps->p - start);
    if (len >= 64) {
      fail(ps, "name too long");
      return NULL;
    }
    char name[64];
    memcpy(name, start, len);
    name[len] = 0;
    skip(ps);
    if (*ps->p == '(') {
      int arity = func_arity(name);
      if (arity < 0) {
        ps->p = start;
        fail(ps, "unknown function (known: min, max, ceil, floor, cdiv, "
                 "sqrt, log2)");
        return NULL;
      }
      ps->p++;
      ks_expr *e = node(E_CALL);
      ks_strlcpy(e->name, name, sizeof e->name);
      e->a = parse_sum(ps);
      e->nargs = 1;
      skip(ps);
      if (*ps->p == ',' && !ps->failed) {
        ps->p++;
        e->b = parse_sum(ps);
        e->nargs = 2;
        skip(ps);
      }
      if (ps->failed) {
        ks_expr_free(e);
        return NULL;
      }
      if (*ps->p != ')') {
        fail(ps, "expected ')' after function arguments");
        ks_expr_free(e);
        return NULL;
      }
      ps->p++;
      if (e->nargs != arity) {
        ps->p = start;
        fail(ps, arity == 2 ? "function takes two arguments"
                            : "function takes one argument");
      }
      return sealed(ps, e);
    }
    ks_expr *e = node(E_VAR);
    ks_strlcpy(e->name, name, sizeof e->name);
    if (ps->names) {
      for (int i = 0; i < ps->n_names; i++)
        if (!strcmp(ps->names[i], name))
          e->index = i;
      if (e->index < 0 && !ps->failed) {
        ks_buf known;
        ks_buf_init(&known);
        for (int i = 0; i < ps->n_names; i++)
          ks_buf_printf(&known, "%s%s", i ? ", " : "", ps->names[i]);
        ps->failed = true;
        ks_err_set(ps->err, KS_ERR_INPUT,
                   "unknown name '%s' at column %d of \"%s\" (known: %s)", name,
                   (int)(start - ps->src) + 1, ps->src,
                   known.data ? known.data : "none");
        ks_buf_free(&known);
      }
    }
    return e;
  }
  if (*ps->p == '(') {
    ps->p++;
    ks_expr *e = parse_sum(ps);
    skip(ps);
    if (ps->failed || *ps->p != ')') {
      fail(ps, "expected ')'");
      ks_expr_free(e);
      return NULL;
    }
    ps->p++;
    return e;
  }
  fail(ps, *ps->p ? "unexpected character" : "unexpected end of expression");
  return NULL;
}

static ks_expr *bin(parser *ps, char op, ks_expr *a, ks_expr *b) {
  ks_expr *e = node(E_BIN);
  e->op = op;
  e->a = a;
  e->b = b;
  return sealed(ps, e);
}

static ks_expr *parse_pow(parser *ps) {
  ks_expr *a = parse_atom(ps);
  skip(ps);
  if (!ps->failed && (*ps->p == '^' || (ps->p[0] == '*' && ps->p[1] == '*'))) {
    ps->p += *ps->p == '^' ? 1 : 2;
    return bin(ps, '^', a, parse_unary(ps));
  }
  return a;
}

static ks_expr *parse_unary_inner(parser *ps) {
  skip(ps);
  if (*ps->p == '-') {
    ps->p++;
    ks_expr *e = node(E_NEG);
    e->a = parse_unary(ps);
    return sealed(ps, e);
  }
  if (*ps->p == '+') {
    ps->p++;
    return parse_unary(ps);
  }
  return parse_pow(ps);
}

/* Every recursion of the grammar passes through parse_unary or parse_sum,
 * so counting there bounds the stack. */
static ks_expr *parse_unary(parser *ps) {
  ks_expr *e = enter(ps) ? parse_unary_inner(ps) : NULL;
  ps->depth--;
  return e;
}

static ks_expr *parse_prod(parser *ps) {
  ks_expr *a = parse_unary(ps);
  while (!ps->failed) {
    skip(ps);
    char c = *ps->p;
    if ((c == '*' && ps->p[1] != '*') || c == '/' || c == '%') {
      ps->p++;
      a = bin(ps, c, a, parse_unary(ps));
    } else {
      break;
    }
  }
  return a;
}

static ks_expr *parse_sum_inner(parser *ps) {
  ks_expr *a = parse_prod(ps);
  while (!ps->failed) {
    skip(ps);
    char c = *ps->p;
    if (c == '+' || c == '-') {
      ps->p++;
      a = bin(ps, c, a, parse_prod(ps));
    } else {
      break;
    }
  }
  return a;
}

static ks_expr *parse_sum(parser *ps) {
  ks_expr *e = enter(ps) ? parse_sum_inner(ps) : NULL;
  ps->depth--;
  return e;
}

ks_code ks_expr_parse(const char *src, const char *const *names, int n_names,
                      ks_expr **out, ks_err *err) {
  parser ps = {src, src, names, n_names, err, false, 0};
  *out = NULL;
  ks_expr *e = parse_sum(&ps);
  skip(&ps);
  if (!ps.failed && *ps.p)
    fail(&ps, "unexpected text after the expression");
  if (ps.failed) {
    ks_expr_free(e);
    return KS_ERR_INPUT;
  }
  *out = e;
  return KS_OK;
}

typedef struct eval_ctx {
  const double *values;
  ks_expr_lookup fn;
  void *ctx;
  const char *missing;
} eval_ctx;

static double ev(const ks_expr *e, eval_ctx *c) {
  if (!e)
    return NAN;
  switch (e->kind) {
  case E_NUM: return e->num;
  case E_VAR:
    if (c->values && e->index >= 0)
      return c->values[e->index];
    if (c->fn) {
      double v;
      if (c->fn(c->ctx, e->name, &v))
        return v;
    }
    if (!c->missing)
      c->missing = e->name;
    return NAN;
  case E_NEG: return -ev(e->a, c);
  case E_BIN: {
    double a = ev(e->a, c), b = ev(e->b, c);
    switch (e->op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return a / b;
    case '%': return fmod(a, b);
    case '^': return pow(a, b);
    }
    return NAN;
  }
  case E_CALL: {
    double a = ev(e->a, c), b = e->b ? ev(e->b, c) : 0;
    if (!strcmp(e->name, "min"))
      return a < b ? a : b;
    if (!strcmp(e->name, "max"))
      return a > b ? a : b;
    if (!strcmp(e->name, "cdiv"))
      return ceil(a / b);
    if (!strcmp(e->name, "ceil"))
      return ceil(a);
    if (!strcmp(e->name, "floor"))
      return floor(a);
    if (!strcmp(e->name, "sqrt"))
      return sqrt(a);
    if (!strcmp(e->name, "log2"))
      return log2(a);
    return NAN;
  }
  }
  return NAN;
}

double ks_expr_eval(const ks_expr *e, const double *values) {
  eval_ctx c = {values, NULL, NULL, NULL};
  return ev(e, &c);
}

ks_code ks_expr_eval_lookup(const ks_expr *e, ks_expr_lookup fn, void *ctx,
                            double *out, ks_err *err) {
  eval_ctx c = {NULL, fn, ctx, NULL};
  *out = ev(e, &c);
  if (c.missing)
    return ks_err_set(err, KS_ERR_INPUT, "unknown name '%s' in expression",
                      c.missing);
  return KS_OK;
}

void ks_expr_free(ks_expr *e) {
  if (!e)
    return;
  ks_expr_free(e->a);
  ks_expr_free(e->b);
  free(e);
}
