/* fuzz_expr.c — expressions (src/task/expr.c): the cost model of task.json
 * and launch geometry of candidate headers. Parsed with and without a name
 * list, evaluated with bound values and by lookup; any input must give an
 * error or a number, never a crash or a deep recursion. */
#include "fuzz.h"
#include "task/expr.h"

static bool lookup(void *ctx, const char *name, double *v) {
  (void)ctx;
  if (strcmp(name, "LOCAL") && strcmp(name, "rows"))
    return false;
  *v = name[0] == 'L' ? 64 : 1000;
  return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = ks_fuzz_text(data, size);
  static const char *const names[] = {"rows", "cols", "LOCAL"};
  static const double vals[] = {4096, 1000, 64};
  ks_expr *e = NULL;
  ks_err err = {0};
  if (ks_expr_parse(src, names, 3, &e, &err) == KS_OK) {
    (void)ks_expr_eval(e, vals);
    ks_expr_free(e);
  }
  e = NULL;
  if (ks_expr_parse(src, NULL, 0, &e, &err) == KS_OK) {
    double v;
    (void)ks_expr_eval_lookup(e, lookup, NULL, &v, &err);
    ks_expr_free(e);
  }
  free(src);
  return 0;
}
