/* test_expr.c — the expression parser and evaluator (src/task/expr.c) used by
 * the cost model and launch geometry: precedence, associativity, functions,
 * and the messages a task author sees for unknown names and syntax errors. */
#include "task/expr.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ex_eval(const char *src) {
  ks_expr *e = NULL;
  ks_err err = {0};
  cr_assert_eq(ks_expr_parse(src, NULL, 0, &e, &err), KS_OK, "%s: %s", src,
               err.msg);
  cr_assert_not_null(e);
  double v = ks_expr_eval(e, NULL);
  ks_expr_free(e);
  return v;
}

static double ex_eval_names(const char *src, const double *vals) {
  static const char *const names[] = {"rows", "cols", "LOCAL"};
  ks_expr *e = NULL;
  ks_err err = {0};
  cr_assert_eq(ks_expr_parse(src, names, 3, &e, &err), KS_OK, "%s: %s", src,
               err.msg);
  double v = ks_expr_eval(e, vals);
  ks_expr_free(e);
  return v;
}

/* Parses src expecting failure; returns the message. */
static void ex_bad(const char *src, const char *const *names, int n,
                   ks_err *err) {
  ks_expr *e = (ks_expr *)1;
  memset(err, 0, sizeof *err);
  cr_assert_eq(ks_expr_parse(src, names, n, &e, err), KS_ERR_INPUT, "%s parsed",
               src);
  cr_assert_null(e, "out must be NULL on failure");
  cr_assert_eq(err->code, KS_ERR_INPUT);
  cr_assert_neq(err->msg[0], 0);
}

#define EX_EQ(src, want)                                                       \
  cr_expect_float_eq(ex_eval(src), (double)(want), 1e-12, "%s", src)

Test(expr, numbers_and_whitespace) {
  EX_EQ("42", 42);
  EX_EQ("  7  ", 7);
  EX_EQ("1e3", 1000);
  EX_EQ(".5", 0.5);
  EX_EQ("2.25", 2.25);
}

Test(expr, precedence) {
  EX_EQ("2+3*4", 14);
  EX_EQ("(2+3)*4", 20);
  EX_EQ("2*3+4", 10);
  EX_EQ("1+8/4-1", 2);
  EX_EQ("2*3^2", 18);
  EX_EQ("2^3*2", 16);
  EX_EQ("1+7%4", 4);
  EX_EQ("4*(2*3*5 + 5)", 140);
}

Test(expr, left_associative_sub_div_mod) {
  EX_EQ("10-4-3", 3);
  EX_EQ("100/10/5", 2);
  EX_EQ("100%7%3", 2);
  EX_EQ("2*3/4", 1.5);
}

Test(expr, power_right_associative) {
  EX_EQ("2^3^2", 512);
  EX_EQ("2**3**2", 512);
  EX_EQ("(2^3)^2", 64);
  EX_EQ("2^-1", 0.5);
  EX_EQ("2**-2", 0.25);
}

Test(expr, unary_minus) {
  EX_EQ("-2^2", -4); /* power binds tighter than negation, as in maths */
  EX_EQ("-3*-2", 6);
  EX_EQ("--4", 4);
  EX_EQ("+5", 5);
  EX_EQ("3-(-2)", 5);
}

Test(expr, functions) {
  EX_EQ("min(3, 5)", 3);
  EX_EQ("max(3, 5)", 5);
  EX_EQ("min(-1,-2)", -2);
  EX_EQ("cdiv(10, 4)", 3);
  EX_EQ("cdiv(8, 4)", 2);
  EX_EQ("cdiv(1, 256)", 1);
  EX_EQ("ceil(2.1)", 3);
  EX_EQ("ceil(-2.1)", -2);
  EX_EQ("floor(2.9)", 2);
  EX_EQ("floor(-2.1)", -3);
  EX_EQ("sqrt(16)", 4);
  EX_EQ("log2(1024)", 10);
  EX_EQ("max(min(10, 4), cdiv(9, 2)) * 2", 10);
  EX_EQ("2*sqrt(4+5)", 6);
  EX_EQ("min ( 1 , 2 )", 1);
}

Test(expr, names_bound_by_index) {
  double v[] = {4096, 1000, 256};
  cr_expect_float_eq(ex_eval_names("4*(2*rows*cols + cols)", v),
                     4.0 * (2.0 * 4096 * 1000 + 1000), 1e-6);
  cr_expect_float_eq(ex_eval_names("cdiv(cols, LOCAL)*LOCAL", v), 1024, 0);
  cr_expect_float_eq(ex_eval_names("rows*LOCAL", v), 4096.0 * 256, 0);
  double w[] = {1, 65536, 64};
  cr_expect_float_eq(ex_eval_names("cdiv(cols, LOCAL)*LOCAL", w), 65536, 0);
}

Test(expr, same_tree_many_evaluations) {
  static const char *const names[] = {"n"};
  ks_expr *e;
  ks_err err;
  cr_assert_eq(ks_expr_parse("n*n+1", names, 1, &e, &err), KS_OK);
  for (int i = 0; i < 10; i++) {
    double x = i;
    cr_expect_float_eq(ks_expr_eval(e, &x), x * x + 1, 0);
  }
  ks_expr_free(e);
}

Test(expr, unknown_name_message) {
  static const char *const names[] = {"rows", "cols"};
  ks_err err;
  ex_bad("4*rows*colz", names, 2, &err);
  cr_expect(strstr(err.msg, "colz") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "column 8") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "rows, cols") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "known") != NULL, "%s", err.msg);
}

Test(expr, unknown_name_first_column) {
  static const char *const names[] = {"rows"};
  ks_err err;
  ex_bad("batch + rows", names, 1, &err);
  cr_expect(strstr(err.msg, "'batch'") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "column 1") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "rows") != NULL, "%s", err.msg);
}

Test(expr, unknown_name_with_no_known_names) {
  static const char *const names[] = {"unused"};
  ks_err err;
  ex_bad("x", names, 0, &err);
  cr_expect(strstr(err.msg, "'x'") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "none") != NULL, "%s", err.msg);
}

Test(expr, syntax_errors_report_column) {
  ks_err err;
  ex_bad("2+", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 3") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "end of expression") != NULL, "%s", err.msg);

  ex_bad("(2+3", NULL, 0, &err);
  cr_expect(strstr(err.msg, "')'") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "column 5") != NULL, "%s", err.msg);

  ex_bad("2 3", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 3") != NULL, "%s", err.msg);

  ex_bad("rows $ 2", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 6") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "rows $ 2") != NULL, "quotes the source: %s",
            err.msg);

  ex_bad("", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 1") != NULL, "%s", err.msg);

  ex_bad("4*)", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 3") != NULL, "%s", err.msg);

  ex_bad("2++", NULL, 0, &err);
  ex_bad("*2", NULL, 0, &err);
  cr_expect(strstr(err.msg, "column 1") != NULL, "%s", err.msg);
}

Test(expr, function_errors) {
  ks_err err;
  ex_bad("foo(2)", NULL, 0, &err);
  cr_expect(strstr(err.msg, "unknown function") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "cdiv") != NULL, "lists functions: %s", err.msg);
  cr_expect(strstr(err.msg, "column 1") != NULL, "%s", err.msg);

  ex_bad("1 + min(1)", NULL, 0, &err);
  cr_expect(strstr(err.msg, "two arguments") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "column 5") != NULL, "%s", err.msg);

  ex_bad("sqrt(1, 2)", NULL, 0, &err);
  cr_expect(strstr(err.msg, "one argument") != NULL, "%s", err.msg);

  ex_bad("max(1, 2, 3)", NULL, 0, &err);
  ex_bad("min(1, 2", NULL, 0, &err);
  ex_bad("min(, 2)", NULL, 0, &err);
}

Test(expr, name_too_long) {
  char src[100];
  memset(src, 'a', 80);
  src[80] = 0;
  ks_err err;
  ex_bad(src, NULL, 0, &err);
  cr_expect(strstr(err.msg, "too long") != NULL, "%s", err.msg);
}

typedef struct ex_env {
  const char *name[3];
  double value[3];
  int calls;
} ex_env;

static bool ex_lookup(void *ctx, const char *name, double *value) {
  ex_env *env = ctx;
  env->calls++;
  for (int i = 0; i < 3 && env->name[i]; i++)
    if (!strcmp(env->name[i], name)) {
      *value = env->value[i];
      return true;
    }
  return false;
}

Test(expr, eval_lookup_resolves_names) {
  ks_expr *e;
  ks_err err = {0};
  cr_assert_eq(
      ks_expr_parse("rows*LOCAL + cdiv(cols, LOCAL)", NULL, 0, &e, &err), KS_OK,
      "%s", err.msg);
  ex_env env = {{"rows", "cols", "LOCAL"}, {10, 100, 8}, 0};
  double v = 0;
  cr_assert_eq(ks_expr_eval_lookup(e, ex_lookup, &env, &v, &err), KS_OK, "%s",
               err.msg);
  cr_expect_float_eq(v, 10 * 8 + 13, 0);
  cr_expect(env.calls >= 3);
  ks_expr_free(e);
}

Test(expr, eval_lookup_missing_name) {
  ks_expr *e;
  ks_err err = {0};
  cr_assert_eq(ks_expr_parse("rows*VEC + WG", NULL, 0, &e, &err), KS_OK);
  ex_env env = {{"rows", NULL, NULL}, {4, 0, 0}, 0};
  double v = 0;
  cr_assert_eq(ks_expr_eval_lookup(e, ex_lookup, &env, &v, &err), KS_ERR_INPUT);
  cr_expect_eq(err.code, KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "'VEC'") != NULL, "first missing name: %s",
            err.msg);
  cr_expect(isnan(v));
  ks_expr_free(e);
}

Test(expr, eval_lookup_null_err_is_safe) {
  ks_expr *e;
  cr_assert_eq(ks_expr_parse("missing + 1", NULL, 0, &e, NULL), KS_OK);
  ex_env env = {{NULL, NULL, NULL}, {0, 0, 0}, 0};
  double v = 0;
  cr_expect_eq(ks_expr_eval_lookup(e, ex_lookup, &env, &v, NULL), KS_ERR_INPUT);
  ks_expr_free(e);
}

Test(expr, unbound_name_without_values_is_nan) {
  ks_expr *e;
  cr_assert_eq(ks_expr_parse("n + 1", NULL, 0, &e, NULL), KS_OK);
  cr_expect(isnan(ks_expr_eval(e, NULL)));
  ks_expr_free(e);
}

/* ------------------------------------------------- hostile depth (issue 13)
 * Each of these overflowed the stack (SIGSEGV) before the depth limit. */

static char *ex_repeat(const char *head, int n, const char *mid,
                       const char *tail, int m) {
  size_t hl = strlen(head), ml = strlen(mid), tl = strlen(tail);
  char *s = malloc(hl * (size_t)n + ml + tl * (size_t)m + 1), *p = s;
  cr_assert_not_null(s);
  for (int i = 0; i < n; i++, p += hl)
    memcpy(p, head, hl);
  memcpy(p, mid, ml);
  p += ml;
  for (int i = 0; i < m; i++, p += tl)
    memcpy(p, tail, tl);
  *p = 0;
  return s;
}

static void ex_too_deep(char *src) {
  static const char *const names[] = {"rows"};
  ks_err err;
  ex_bad(src, names, 1, &err);
  cr_expect(strstr(err.msg, "nested too deeply") != NULL, "%.200s", err.msg);
  free(src);
}

Test(expr, deep_brackets_are_an_error_not_a_crash) {
  ex_too_deep(ex_repeat("(", 20000, "rows", ")", 20000));
}

Test(expr, long_sign_runs_are_an_error) {
  ex_too_deep(ex_repeat("-", 100000, "rows", "", 0));
  ex_too_deep(ex_repeat("+", 100000, "rows", "", 0));
}

Test(expr, deep_function_calls_are_an_error) {
  ex_too_deep(ex_repeat("max(rows,", 100000, "rows", ")", 100000));
  ex_too_deep(ex_repeat("sqrt(", 100000, "rows", ")", 100000));
}

Test(expr, long_power_and_operator_chains_are_an_error) {
  ex_too_deep(ex_repeat("rows^", 100000, "rows", "", 0));
  /* left-deep trees: parsing loops, but evaluating and freeing recurse */
  ex_too_deep(ex_repeat("rows+", 100000, "rows", "", 0));
  ex_too_deep(ex_repeat("rows*", 100000, "rows", "", 0));
}

Test(expr, reasonable_depth_still_parses) {
  char *s = ex_repeat("(", 100, "1", "+1)", 100);
  EX_EQ(s, 101);
  free(s);
  s = ex_repeat("1+", 150, "1", "", 0);
  EX_EQ(s, 151);
  free(s);
}
