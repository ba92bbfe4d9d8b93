/* test_spec_targets.c — specs/targets loaded through src/spec/target.c:
 * short names, "extends", the source of every fact, run-time detection of
 * the CPU's ISA. */
#include "spec/spec.h"

#include <criterion/criterion.h>
#include <string.h>

/* Every leaf fact ({"value": ...}) names a source. */
static int tg_unsourced(const json_t *facts) {
  int bad = 0;
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)facts, k, v) {
    if (json_object_get(v, "value")) {
      const char *s = json_string_value(json_object_get(v, "source"));
      bad += !s || !*s;
    } else {
      bad += tg_unsourced(v);
    }
  }
  return bad;
}

Test(spec_targets, every_target_loads_with_sourced_facts) {
  const char *names[] = {"c",    "opencl", "opencl-pocl-cpu",
                         "cuda", "metal",  "mlx"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const ks_spec_target *t;
    ks_err err = {0};
    cr_assert_eq(ks_spec_target_get(names[i], &t, &err), KS_OK, "%s: %s",
                 names[i], err.msg);
    cr_expect_gt(t->n_rules, 5, "%s has rules", t->id);
    json_t *f = ks_spec_target_facts(t);
    cr_expect_gt(json_object_size(f), 3, "%s has facts", t->id);
    cr_expect_eq(tg_unsourced(f), 0, "%s: every fact names its source", t->id);
    json_decref(f);
  }
  const ks_spec_target *t;
  ks_err err;
  cr_expect_eq(ks_spec_target_get("nope", &t, &err), KS_ERR_INPUT);
  cr_expect_eq(ks_spec_target_get("../etc", &t, &err), KS_ERR_INPUT);
}

Test(spec_targets, short_names_and_extends) {
  cr_expect_str_eq(ks_spec_target_id("metal"), "metal-apple");
  cr_expect_str_eq(ks_spec_target_id("opencl-pocl-cpu"), "opencl-pocl-cpu");
  const ks_spec_target *g, *p, *m;
  ks_err err;
  cr_assert_eq(ks_spec_target_get("opencl", &g, &err), KS_OK);
  cr_assert_eq(ks_spec_target_get("opencl-pocl-cpu", &p, &err), KS_OK);
  cr_assert_eq(ks_spec_target_get("mlx", &m, &err), KS_OK);
  cr_expect_eq(p->n_rules, g->n_rules, "PoCL inherits the generic rules");
  cr_expect_gt(p->n_unsupported, 3);
  cr_expect_str_eq(m->backend, "metal");
  cr_expect_not_null(
      json_object_get(json_object_get(m->json, "facts"), "simd_group_width"),
      "mlx extends metal-apple");
  cr_expect_not_null(json_object_get(json_object_get(m->json, "facts"),
                                     "metal_kernel_signature"));
  json_t *sm =
      json_object_get(json_object_get(m->json, "facts"), "threadgroup_memory");
  cr_expect_eq(json_integer_value(json_object_get(sm, "value")), 32);
}

Test(spec_targets, isa_detected_at_run_time) {
  const ks_spec_target *t;
  ks_err err;
  cr_assert_eq(ks_spec_target_get("c", &t, &err), KS_OK);
  ks_cpu_flags_override("sse2 avx avx2 fma");
  json_t *f = ks_spec_target_facts(t);
  json_t *isa = json_object_get(f, "isa_detected");
  cr_expect_str_eq(json_string_value(json_object_get(isa, "widest")), "avx2");
  cr_expect_eq(json_array_size(json_object_get(isa, "value")), 2);
  json_decref(f);
  ks_cpu_flags_override("sse2 avx2 fma avx512f");
  f = ks_spec_target_facts(t);
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(f, "isa_detected"), "widest")),
                   "avx512");
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(f, "bandwidth_gbps"), "source")),
                   "measured by ksearch roofline");
  json_decref(f);
  ks_cpu_flags_override(NULL);
#if defined(__x86_64__)
  cr_expect(ks_cpu_has("sse2"), "every x86-64 has SSE2");
#endif
  cr_expect(!ks_cpu_has("no_such_flag"));
}
