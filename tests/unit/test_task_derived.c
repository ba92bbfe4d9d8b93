/* test_task_derived.c — derived axes (computed per workload, never passed
 * to kernels) and randint bounds written over the axes (src/task/task.c,
 * src/task/inputs.c), and how both read in the LLM's task text. Fixture:
 * task_fixture.h. */
#include "llm/context.h"
#include "task/expr.h"
#include "task/inputs.h"
#include "task_fixture.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------ derived axes, randint over the axes */

#define TT_ROUTE                                                               \
  "{'name': 't1', 'class': 'routing', "                                        \
  "'axes': {'tokens': {'type': 'var'}, 'experts': {'type': 'var'}, "           \
  "'np1': {'type': 'derived', 'value': 'experts + 1'}}, "                      \
  "'inputs': {'x': {'shape': ['tokens', 'experts'], 'dtype': 'float32'}}, "    \
  "'outputs': {'off': {'shape': ['np1'], 'dtype': 'int32'}}, " TT_REF

Test(task, derived_axis_filled_per_workload_not_passed) {
  ks_task t;
  tt_load_ok(TT_ROUTE "'cost': {'bytes': '4*np1'}, "
                      "'workloads': [{'tokens': 3, 'experts': 8}, "
                      "{'tokens': 1, 'experts': 255}]}",
             &t);
  int np1 = ks_task_axis_index(&t, "np1");
  cr_assert_geq(np1, 0);
  cr_expect(t.axes[np1].is_const, "not passed to kernels, like const axes");
  cr_expect_not_null(t.axes[np1].derive);
  cr_expect_eq(t.workloads[0].axis[np1], 9);
  cr_expect_eq(t.workloads[1].axis[np1], 256);
  cr_expect_eq(ks_tensor_numel(&t, &t.outputs[0], &t.workloads[1]), 256);
  cr_expect_float_eq(ks_task_cost_bytes(&t, &t.workloads[0]), 36.0, 1e-9);
  ks_task_free(&t);
  cr_expect_null(t.axes[np1].derive, "freed");
}

Test(task, bad_derived_axis_in_workload) {
  tt_bad(TT_ROUTE "'workloads': [{'tokens': 3, 'experts': 8, 'np1': 9}]}",
         "workloads[0].np1", "derived axis", "remove it", NULL);
}

Test(task, bad_derived_axis_unknown_name) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'a': {'type': 'var'}, "
         "'b': {'type': 'derived', 'value': 'a + c'}}, " TT_IN TT_OUT TT_REF
         "'workloads': [{'a': 2}]}",
         "axes.b.value", "c", "arithmetic over var and const axes", NULL);
}

Test(task, bad_derived_axis_not_positive) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'rows': {'type': 'var'}, "
         "'cols': {'type': 'var'}, 'd': {'type': 'derived', 'value': 'rows - "
         "cols'}}, " TT_IN TT_OUT TT_REF "'workloads': [{'rows': 9, 'cols': "
         "3}, {'rows': 4, 'cols': 4}]}",
         "workloads[1]", "derived axis d = 0", "not a positive integer", NULL);
}

Test(task, bad_derived_axis_without_expression) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'rows': {'type': 'var'}, "
         "'cols': {'type': 'derived', 'value': 3}}, " TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 9}]}",
         "axes.cols.value", "expression", NULL);
}

#define TT_PAGED(INIT, WL)                                                     \
  "{'name': 't1', 'class': 'attention', "                                      \
  "'axes': {'batch': {'type': 'var'}, 'max_pages': {'type': 'var'}, "          \
  "'page_size': {'type': 'const', 'value': 16}}, "                             \
  "'inputs': {'lens': {'shape': ['batch'], 'dtype': 'int32', 'init': '" INIT   \
  "'}}, 'outputs': {'y': {'shape': ['batch'], 'dtype': 'float32'}}, " TT_REF   \
  "'workloads': [" WL "]}"

Test(task, randint_bounds_over_axes_hold_for_every_seed) {
  ks_task t;
  tt_load_ok(TT_PAGED("randint(max_pages*page_size - page_size + 1, "
                      "max_pages*page_size)",
                      "{'batch': 4000, 'max_pages': 1}, "
                      "{'batch': 4000, 'max_pages': 9}"),
             &t);
  const ks_tensor *lens = &t.inputs[0];
  cr_assert_not_null(lens->init.a_expr);
  int32_t *buf = malloc(4000 * sizeof *buf);
  for (int w = 0; w < 2; w++) {
    ks_init r = ks_init_bounds(&t, &lens->init, &t.workloads[w]);
    int lo = w ? 129 : 1, hi = w ? 144 : 16;
    cr_expect_float_eq(r.a, lo, 0);
    cr_expect_float_eq(r.b, hi, 0);
    cr_expect_null(r.a_expr);
    int seen_lo = 0, seen_hi = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
      ks_inputs_fill(&t, lens, &t.workloads[w], seed, buf);
      for (int i = 0; i < 4000; i++) {
        cr_assert(buf[i] >= lo && buf[i] <= hi, "w%d seed %llu: %d", w,
                  (unsigned long long)seed, buf[i]);
        seen_lo |= buf[i] == lo;
        seen_hi |= buf[i] == hi;
      }
    }
    cr_expect(seen_lo && seen_hi, "both inclusive bounds are drawn");
  }
  free(buf);
  ks_task_free(&t);
  cr_expect_null(t.inputs[0].init.a_expr, "freed");
}

Test(task, bad_randint_bounds_cross_in_a_workload) {
  tt_bad(TT_PAGED("randint(20, max_pages*page_size)",
                  "{'batch': 2, 'max_pages': 2}, {'batch': 2, 'max_pages': 1}"),
         "workloads[1]", "inputs.lens.init", "20 and 16", "LO <= HI", NULL);
}

Test(task, bad_randint_bound_unknown_name) {
  tt_bad(TT_PAGED("randint(1, pages*16)", "{'batch': 2, 'max_pages': 2}"),
         "inputs.lens.init", "pages", "over the axes", NULL);
}

Test(task, bad_randint_one_bound) {
  tt_bad(TT_PAGED("randint(max_pages)", "{'batch': 2, 'max_pages': 2}"),
         "inputs.lens.init", "two bounds", NULL);
}

Test(task, derived_axis_in_the_llm_task_text) {
  /* the coder must know the size it has to compute, not a constant */
  ks_task t;
  tt_load_ok(TT_ROUTE "'workloads': [{'tokens': 3, 'experts': 8}]}", &t);
  char *s = ks_llm_task_text(&t, false);
  cr_assert_not_null(s);
  cr_expect(strstr(s, "derived axis np1 = experts + 1") != NULL, "%s", s);
  cr_expect(strstr(s, "constant axis np1") == NULL, "%s", s);
  free(s);
  ks_task_free(&t);
}
