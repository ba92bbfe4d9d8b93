/* test_dtype.c — element types (src/task/dtype.c): names and sizes;
 * half-precision conversions round to nearest even and keep NaN, infinities
 * and subnormals; every bit pattern round-trips; tensor sizes. In the suite
 * "task" like the loading tests (its fixture folder is unused here). */
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

/* ---------------------------------------------------------------- dtypes */

static uint16_t tt_h(ks_dtype t, double v) {
  uint16_t x = 0xdead;
  ks_dtype_store(t, &x, 0, v);
  return x;
}

static double tt_l(ks_dtype t, uint16_t bits) {
  return ks_dtype_load(t, &bits, 0);
}

Test(task, dtype_names_sizes_parse) {
  static const struct {
    const char *name, *ctype;
    size_t size;
    bool is_float;
  } want[KS_DTYPE_COUNT] = {
      [KS_F32] = {"float32", "float", 4, true},
      [KS_F16] = {"float16", "uint16_t", 2, true},
      [KS_BF16] = {"bfloat16", "uint16_t", 2, true},
      [KS_I32] = {"int32", "int32_t", 4, false},
      [KS_I64] = {"int64", "int64_t", 8, false},
      [KS_U8] = {"uint8", "uint8_t", 1, false},
  };
  for (int i = 0; i < KS_DTYPE_COUNT; i++) {
    ks_dtype t = (ks_dtype)i, back;
    cr_expect_str_eq(ks_dtype_name(t), want[i].name);
    cr_expect_str_eq(ks_dtype_ctype(t), want[i].ctype);
    cr_expect_eq(ks_dtype_size(t), want[i].size);
    cr_expect_eq(ks_dtype_is_float(t), want[i].is_float);
    cr_expect(ks_dtype_parse(want[i].name, &back));
    cr_expect_eq(back, t);
  }
  ks_dtype x;
  cr_expect(!ks_dtype_parse("float64", &x));
  cr_expect(!ks_dtype_parse("", &x));
  cr_expect(!ks_dtype_parse("Float32", &x));
}

Test(task, dtype_f16_exact_values) {
  cr_expect_eq(tt_h(KS_F16, 1.0), 0x3c00);
  cr_expect_eq(tt_h(KS_F16, -2.0), 0xc000);
  cr_expect_eq(tt_h(KS_F16, 0.0), 0x0000);
  cr_expect_eq(tt_h(KS_F16, -0.0), 0x8000);
  cr_expect_eq(tt_h(KS_F16, 65504.0), 0x7bff, "largest finite");
  cr_expect_eq(tt_h(KS_F16, 0.333251953125), 0x3555);
  cr_expect_float_eq(tt_l(KS_F16, 0x3c00), 1.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0xc000), -2.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x7bff), 65504.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x3555), 0.333251953125, 0);
}

Test(task, dtype_f16_rounding) {
  /* ties go to even, others to nearest */
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11)), 0x3c00, "tie to even down");
  cr_expect_eq(tt_h(KS_F16, 1.0 + 3 * ldexp(1, -11)), 0x3c02, "tie to even up");
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11) + ldexp(1, -20)), 0x3c01,
               "above the tie");
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11) - ldexp(1, -20)), 0x3c00,
               "below the tie");
  cr_expect_eq(tt_h(KS_F16, 2047.0 / 1024 + ldexp(1, -11)), 0x4000,
               "carry into the exponent");
  cr_expect_eq(tt_h(KS_F16, 65519.0), 0x7bff, "below the overflow tie");
  cr_expect_eq(tt_h(KS_F16, 65520.0), 0x7c00, "overflow tie rounds to inf");
  cr_expect_eq(tt_h(KS_F16, 1e6), 0x7c00);
  cr_expect_eq(tt_h(KS_F16, -1e6), 0xfc00);
  cr_expect_eq(tt_h(KS_F16, 0.1), 0x2e66);
}

Test(task, dtype_f16_subnormals) {
  double tiny = ldexp(1, -24); /* smallest subnormal */
  cr_expect_eq(tt_h(KS_F16, tiny), 0x0001);
  cr_expect_float_eq(tt_l(KS_F16, 0x0001), tiny, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x03ff), 1023 * tiny, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x8001), -tiny, 0);
  cr_expect_eq(tt_h(KS_F16, ldexp(1, -14)), 0x0400, "smallest normal");
  cr_expect_eq(tt_h(KS_F16, 1023 * tiny), 0x03ff);
  cr_expect_eq(tt_h(KS_F16, 0.5 * tiny), 0x0000, "tie to even (zero)");
  cr_expect_eq(tt_h(KS_F16, 0.75 * tiny), 0x0001);
  cr_expect_eq(tt_h(KS_F16, 1.5 * tiny), 0x0002, "tie to even (two)");
  cr_expect_eq(tt_h(KS_F16, 2.5 * tiny), 0x0002, "tie to even (two)");
  cr_expect_eq(tt_h(KS_F16, 1023.5 * tiny), 0x0400, "carry to normal");
  cr_expect_eq(tt_h(KS_F16, 0.25 * tiny), 0x0000, "underflow");
  cr_expect_eq(tt_h(KS_F16, -0.25 * tiny), 0x8000, "keeps the sign");
  cr_expect_eq(tt_h(KS_F16, 1e-30), 0x0000);
}

Test(task, dtype_f16_nan_inf) {
  cr_expect_eq(tt_h(KS_F16, INFINITY), 0x7c00);
  cr_expect_eq(tt_h(KS_F16, -INFINITY), 0xfc00);
  uint16_t n = tt_h(KS_F16, NAN);
  cr_expect_eq(n & 0x7c00, 0x7c00);
  cr_expect_neq(n & 0x03ff, 0, "NaN stays NaN, not inf");
  cr_expect(isnan(tt_l(KS_F16, n)));
  cr_expect(isnan(tt_l(KS_F16, 0x7c01)));
  cr_expect(isnan(tt_l(KS_F16, 0xfe00)));
  cr_expect(isinf(tt_l(KS_F16, 0x7c00)) && tt_l(KS_F16, 0x7c00) > 0);
  cr_expect(isinf(tt_l(KS_F16, 0xfc00)) && tt_l(KS_F16, 0xfc00) < 0);
}

Test(task, dtype_f16_all_patterns_round_trip) {
  for (uint32_t b = 0; b < 65536; b++) {
    double v = tt_l(KS_F16, (uint16_t)b);
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) {
      cr_assert(isnan(v), "0x%04x", b);
      continue;
    }
    cr_assert_eq(tt_h(KS_F16, v), b, "0x%04x -> %g -> 0x%04x", b, v,
                 tt_h(KS_F16, v));
  }
}

Test(task, dtype_bf16_values_and_rounding) {
  cr_expect_eq(tt_h(KS_BF16, 1.0), 0x3f80);
  cr_expect_eq(tt_h(KS_BF16, -2.0), 0xc000);
  cr_expect_eq(tt_h(KS_BF16, 1.0 + ldexp(1, -8)), 0x3f80, "tie to even down");
  cr_expect_eq(tt_h(KS_BF16, 1.0 + 3 * ldexp(1, -8)), 0x3f82, "tie to even up");
  cr_expect_eq(tt_h(KS_BF16, 1.0 + ldexp(1, -8) + ldexp(1, -15)), 0x3f81,
               "above the tie");
  cr_expect_eq(tt_h(KS_BF16, 3.140625), 0x4049);
  cr_expect_float_eq(tt_l(KS_BF16, 0x4049), 3.140625, 0);
  cr_expect_eq(tt_h(KS_BF16, INFINITY), 0x7f80);
  cr_expect_eq(tt_h(KS_BF16, -INFINITY), 0xff80);
  cr_expect(isinf(tt_l(KS_BF16, 0x7f80)));
  uint16_t n = tt_h(KS_BF16, NAN);
  cr_expect(isnan(tt_l(KS_BF16, n)), "NaN stays NaN: 0x%04x", n);
  cr_expect(isnan(tt_l(KS_BF16, 0x7f81)), "NaN with low payload");
  /* a NaN whose payload lives only in the low bits must not become inf */
  float lownan;
  uint32_t bits = 0x7f800001;
  memcpy(&lownan, &bits, 4);
  cr_expect(isnan(tt_l(KS_BF16, tt_h(KS_BF16, lownan))));
  /* subnormals */
  double sub = ldexp(1, -130);
  cr_expect_eq(tt_h(KS_BF16, sub), 0x0008);
  cr_expect_float_eq(tt_l(KS_BF16, 0x0001), ldexp(1, -133), 0);
  cr_expect_float_eq(tt_l(KS_BF16, 0x8001), -ldexp(1, -133), 0);
}

Test(task, dtype_bf16_all_patterns_round_trip) {
  for (uint32_t b = 0; b < 65536; b++) {
    double v = tt_l(KS_BF16, (uint16_t)b);
    if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) {
      cr_assert(isnan(v), "0x%04x", b);
      continue;
    }
    cr_assert_eq(tt_h(KS_BF16, v), b, "0x%04x -> %g -> 0x%04x", b, v,
                 tt_h(KS_BF16, v));
  }
}

Test(task, dtype_other_types_store_load) {
  float f[2];
  ks_dtype_store(KS_F32, f, 1, 0.1);
  cr_expect_eq(f[1], 0.1f);
  cr_expect_float_eq(ks_dtype_load(KS_F32, f, 1), (double)0.1f, 0);
  int32_t i[2];
  ks_dtype_store(KS_I32, i, 1, -7);
  cr_expect_eq(i[1], -7);
  cr_expect_float_eq(ks_dtype_load(KS_I32, i, 1), -7, 0);
  int64_t l[2];
  ks_dtype_store(KS_I64, l, 0, 4294967296.0 * 3);
  cr_expect_eq(l[0], 3LL << 32);
  cr_expect_float_eq(ks_dtype_load(KS_I64, l, 0), 4294967296.0 * 3, 0);
  uint8_t u[3];
  ks_dtype_store(KS_U8, u, 2, 200);
  cr_expect_eq(u[2], 200);
  cr_expect_float_eq(ks_dtype_load(KS_U8, u, 2), 200, 0);
}

Test(task, tensor_numel) {
  ks_task t;
  memset(&t, 0, sizeof t);
  t.n_axes = 3;
  ks_tensor x = {.rank = 3, .dims = {0, 2, 1}};
  ks_tensor s = {.rank = 0};
  ks_tensor y = {.rank = 2, .dims = {1, 1}};
  ks_workload w = {.axis = {3, 5, 7}};
  cr_expect_eq(ks_tensor_numel(&t, &x, &w), 105);
  cr_expect_eq(ks_tensor_numel(&t, &s, &w), 1, "rank 0 is one element");
  cr_expect_eq(ks_tensor_numel(&t, &y, &w), 25);
  ks_workload big = {.axis = {1 << 20, 1 << 20, 4}};
  cr_expect_eq(ks_tensor_numel(&t, &x, &big), (int64_t)1 << 42);
}
