/* test_correctness.c — the tolerance math of src/eval/correctness.c: the
 * per-element check, the whole-output norm check that catches all-zero and
 * constant outputs a generous atol would let through, NaN, infinities,
 * integers, and reduced-precision outputs. */
#include "eval/correctness.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CO_N 65536

static float *co_alloc(int64_t n) {
  float *p = calloc((size_t)n, sizeof *p);
  cr_assert_not_null(p);
  return p;
}

/* A softmax-like row: positive values around 1/n summing to about one. */
static float *co_softmax_like(int64_t n) {
  float *p = co_alloc(n);
  ks_rng r;
  ks_rng_seed(&r, 1, 2);
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)((0.5 + ks_rng_uniform(&r)) / (double)n);
  return p;
}

static float *co_normal(int64_t n, uint64_t seed) {
  float *p = co_alloc(n);
  ks_rng r;
  ks_rng_seed(&r, seed, 3);
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)ks_rng_normal(&r);
  return p;
}

static ks_compare co_cmp(ks_dtype dt, const void *got, const void *ref,
                         int64_t n, double atol, double rtol) {
  ks_compare c;
  memset(&c, 0x5a, sizeof c); /* stale contents must not leak through */
  ks_compare_outputs("y", dt, got, ref, n, (ks_tolerance){atol, rtol}, &c);
  return c;
}

Test(correctness, exact_match_passes) {
  float *ref = co_normal(CO_N, 1);
  ks_compare c = co_cmp(KS_F32, ref, ref, CO_N, 0, 0);
  cr_expect(c.ok, "%s", c.reason);
  cr_expect_eq(c.n_bad, 0);
  cr_expect_eq(c.n_nan, 0);
  cr_expect_eq(c.first_bad, -1);
  cr_expect_float_eq(c.max_abs_err, 0, 0);
  cr_expect_float_eq(c.norm_rel_err, 0, 0);
  cr_expect_eq(c.reason[0], 0);
  free(ref);
}

Test(correctness, small_error_within_tolerance_passes) {
  float *ref = co_normal(1000, 2), *got = co_alloc(1000);
  for (int i = 0; i < 1000; i++)
    got[i] = ref[i] * (1 + 2e-6f);
  ks_compare c = co_cmp(KS_F32, got, ref, 1000, 1e-5, 1e-5);
  cr_expect(c.ok, "%s", c.reason);
  cr_expect(c.max_abs_err > 0);
  free(ref);
  free(got);
}

Test(correctness, nan_fails) {
  float *ref = co_normal(100, 3), *got = co_alloc(100);
  memcpy(got, ref, 100 * sizeof *got);
  got[17] = NAN;
  got[40] = NAN;
  ks_compare c = co_cmp(KS_F32, got, ref, 100, 1e-5, 1e-5);
  cr_expect(!c.ok);
  cr_expect_eq(c.n_nan, 2);
  cr_expect_eq(c.first_bad, 17);
  cr_expect(strstr(c.reason, "NaN") != NULL || strstr(c.reason, "nan"), "%s",
            c.reason);
  cr_expect(strstr(c.reason, "y") != NULL, "names the output: %s", c.reason);
  free(ref);
  free(got);
}

Test(correctness, nan_reason_lowercase_nan) {
  float ref[4] = {1, 2, 3, 4}, got[4] = {1, 2, NAN, 4};
  ks_compare c = co_cmp(KS_F32, got, ref, 4, 1, 1);
  cr_expect(!c.ok, "NaN fails even with huge tolerances");
  char low[256];
  for (size_t i = 0; i < sizeof low; i++)
    low[i] = (char)(c.reason[i] >= 'A' && c.reason[i] <= 'Z' ? c.reason[i] + 32
                                                             : c.reason[i]);
  cr_expect(strstr(low, "nan") != NULL, "%s", c.reason);
}

Test(correctness, nan_in_reference_matches_nan_only) {
  float ref[3] = {1, NAN, 3}, same[3] = {1, NAN, 3}, num[3] = {1, 2, 3};
  ks_compare c = co_cmp(KS_F32, same, ref, 3, 1e-5, 1e-5);
  cr_expect(c.ok, "NaN where the reference has NaN: %s", c.reason);
  c = co_cmp(KS_F32, num, ref, 3, 1e-5, 1e-5);
  cr_expect(!c.ok, "a number where the reference has NaN");
  cr_expect_eq(c.first_bad, 1);
}

Test(correctness, per_element_mismatch) {
  float *ref = co_normal(1000, 4), *got = co_alloc(1000);
  memcpy(got, ref, 1000 * sizeof *got);
  got[123] += 0.5f;
  ks_compare c = co_cmp(KS_F32, got, ref, 1000, 1e-5, 1e-5);
  cr_expect(!c.ok);
  cr_expect_eq(c.n_bad, 1);
  cr_expect_eq(c.first_bad, 123);
  cr_expect_float_eq(c.max_abs_err, 0.5, 1e-6);
  cr_expect(strstr(c.reason, "mismatch") != NULL, "%s", c.reason);
  cr_expect(strstr(c.reason, "123") != NULL, "first index: %s", c.reason);
  free(ref);
  free(got);
}

Test(correctness, boundary_is_inclusive) {
  /* |a-b| == atol + rtol*|b| passes, a bit more fails; many exact elements
   * keep the norm check out of the way */
  float ref[100], got[100];
  for (int i = 0; i < 100; i++)
    ref[i] = got[i] = 2.0f;
  got[50] = 3.0f; /* 1 == 0.5 + 0.25*2 */
  cr_expect(co_cmp(KS_F32, got, ref, 100, 0.5, 0.25).ok);
  got[50] = 3.001f;
  ks_compare c = co_cmp(KS_F32, got, ref, 100, 0.5, 0.25);
  cr_expect(!c.ok);
  cr_expect_eq(c.first_bad, 50);
}

Test(correctness, all_zeros_fail_softmax_like) {
  float *ref = co_softmax_like(CO_N), *got = co_alloc(CO_N);
  ks_compare c = co_cmp(KS_F32, got, ref, CO_N, 1e-5, 1e-5);
  cr_expect(!c.ok, "zeros must not pass");
  cr_expect(strstr(c.reason, "mismatch") != NULL, "%s", c.reason);
  free(ref);
  free(got);
}

Test(correctness, all_zeros_fail_by_norm_when_atol_is_generous) {
  /* every element is within atol, so only the norm check can catch it */
  float *ref = co_softmax_like(CO_N), *got = co_alloc(CO_N);
  ks_compare c = co_cmp(KS_F32, got, ref, CO_N, 1e-4, 1e-5);
  cr_expect_eq(c.n_bad, 0, "per element all within atol");
  cr_expect(!c.ok, "zeros must not pass");
  cr_expect(strstr(c.reason, "norm") != NULL, "%s", c.reason);
  cr_expect_float_eq(c.norm_rel_err, 1.0, 1e-9);
  free(ref);
  free(got);
}

Test(correctness, constant_mean_output_fails) {
  float *ref = co_softmax_like(CO_N), *got = co_alloc(CO_N);
  double mean = 0;
  for (int i = 0; i < CO_N; i++)
    mean += ref[i];
  mean /= CO_N;
  for (int i = 0; i < CO_N; i++)
    got[i] = (float)mean;
  ks_compare c = co_cmp(KS_F32, got, ref, CO_N, 1e-5, 1e-5);
  cr_expect_eq(c.n_bad, 0, "each element within atol of the mean");
  cr_expect(!c.ok, "a constant output must not pass");
  cr_expect(strstr(c.reason, "norm") != NULL, "%s", c.reason);
  cr_expect(c.norm_rel_err > 0.1, "%g", c.norm_rel_err);
  free(ref);
  free(got);
}

Test(correctness, half_rounded_output) {
  int64_t n = 4096;
  float *ref = co_normal(n, 5), *got = co_alloc(n);
  for (int64_t i = 0; i < n; i++) {
    uint16_t h;
    ks_dtype_store(KS_F16, &h, 0, ref[i]);
    got[i] = (float)ks_dtype_load(KS_F16, &h, 0);
  }
  ks_compare strict = co_cmp(KS_F32, got, ref, n, 1e-5, 1e-5);
  cr_expect(!strict.ok, "half precision must fail float32 tolerances");
  cr_expect(strict.max_rel_err > 1e-4 && strict.max_rel_err < 1e-3, "%g",
            strict.max_rel_err);
  ks_compare loose = co_cmp(KS_F32, got, ref, n, 1e-5, 1e-2);
  cr_expect(loose.ok, "%s", loose.reason);
  free(ref);
  free(got);
}

Test(correctness, reference_all_zero) {
  float ref[8] = {0}, got[8] = {0};
  ks_compare c = co_cmp(KS_F32, got, ref, 8, 1e-5, 1e-5);
  cr_expect(c.ok, "zeros match zeros: %s", c.reason);
  cr_expect_float_eq(c.norm_rel_err, 0, 0);
  got[3] = 5e-6f;
  c = co_cmp(KS_F32, got, ref, 8, 1e-5, 1e-5);
  cr_expect(c.ok, "within atol of zero: %s", c.reason);
  got[3] = 1e-3f;
  c = co_cmp(KS_F32, got, ref, 8, 1e-5, 1e-5);
  cr_expect(!c.ok);
  cr_expect_eq(c.first_bad, 3);
  c = co_cmp(KS_F32, got, ref, 8, 1e-2, 1e-5);
  cr_expect(c.ok, "max|a| <= atol when the reference is zero: %s", c.reason);
  c = co_cmp(KS_F32, got, ref, 8, 1e-4, 1e6);
  cr_expect(!c.ok, "rtol cannot excuse a nonzero output of a zero reference");
}

Test(correctness, int32_exact) {
  int32_t ref[5] = {1, -2, 3, 1 << 30, 0}, got[5];
  memcpy(got, ref, sizeof got);
  ks_compare c = co_cmp(KS_I32, got, ref, 5, 0, 0);
  cr_expect(c.ok, "%s", c.reason);
  got[3] += 1;
  c = co_cmp(KS_I32, got, ref, 5, 0, 0);
  cr_expect(!c.ok, "off by one in 2^30 is wrong for integers");
  cr_expect_eq(c.first_bad, 3);
  cr_expect(strstr(c.reason, "mismatch") != NULL, "%s", c.reason);
}

Test(correctness, int64_and_uint8) {
  int64_t r64[2] = {(int64_t)1 << 40, 7}, g64[2] = {(int64_t)1 << 40, 8};
  cr_expect(!co_cmp(KS_I64, g64, r64, 2, 0, 0).ok);
  g64[1] = 7;
  cr_expect(co_cmp(KS_I64, g64, r64, 2, 0, 0).ok);
  uint8_t r8[3] = {0, 255, 9}, g8[3] = {0, 255, 9};
  cr_expect(co_cmp(KS_U8, g8, r8, 3, 0, 0).ok);
  g8[1] = 254;
  cr_expect(!co_cmp(KS_U8, g8, r8, 3, 0, 0).ok);
}

Test(correctness, infinities) {
  float ref[4] = {INFINITY, -INFINITY, 1, 2};
  float same[4] = {INFINITY, -INFINITY, 1, 2};
  ks_compare c = co_cmp(KS_F32, same, ref, 4, 1e-5, 1e-5);
  cr_expect(c.ok, "matching infinities: %s", c.reason);

  float flip[4] = {INFINITY, INFINITY, 1, 2};
  c = co_cmp(KS_F32, flip, ref, 4, 1e-5, 1e-5);
  cr_expect(!c.ok, "wrong-signed infinity");
  cr_expect_eq(c.first_bad, 1);

  float fin[4] = {3e38f, -INFINITY, 1, 2};
  c = co_cmp(KS_F32, fin, ref, 4, 1e-5, 1e-5);
  cr_expect(!c.ok, "finite where the reference is infinite");
  cr_expect_eq(c.first_bad, 0);

  /* an infinity elsewhere must not switch the norm check off */
  float *big = co_softmax_like(CO_N), *mean = co_alloc(CO_N);
  double m = 0;
  for (int i = 0; i < CO_N; i++)
    m += big[i];
  for (int i = 0; i < CO_N; i++)
    mean[i] = (float)(m / CO_N);
  big[7] = mean[7] = INFINITY;
  c = co_cmp(KS_F32, mean, big, CO_N, 1e-5, 1e-5);
  cr_expect(!c.ok, "constant output next to a matching infinity");
  cr_expect(strstr(c.reason, "norm") != NULL, "%s", c.reason);
  free(big);
  free(mean);

  float zi[2] = {INFINITY, 0}, zg[2] = {INFINITY, 0};
  c = co_cmp(KS_F32, zg, zi, 2, 1e-5, 1e-5);
  cr_expect(c.ok, "infinity and zeros matched exactly: %s", c.reason);

  float r2[2] = {1, 2}, g2[2] = {1, INFINITY};
  c = co_cmp(KS_F32, g2, r2, 2, 1e-5, 1e6);
  cr_expect(!c.ok, "infinite where the reference is finite");
  cr_expect(isinf(c.max_abs_err));
  cr_expect(strstr(c.reason, "mismatch") != NULL, "%s", c.reason);
}

Test(correctness, half_dtypes) {
  uint16_t ref[3], got[3];
  for (int i = 0; i < 3; i++) {
    ks_dtype_store(KS_F16, ref, (size_t)i, 0.5 * (i + 1));
    ks_dtype_store(KS_F16, got, (size_t)i, 0.5 * (i + 1));
  }
  cr_expect(co_cmp(KS_F16, got, ref, 3, 1e-3, 1e-3).ok);
  ks_dtype_store(KS_F16, got, 1, 1.25);
  cr_expect(!co_cmp(KS_F16, got, ref, 3, 1e-3, 1e-3).ok);
  got[1] = 0x7e00; /* NaN, as poisoned outputs are */
  ks_compare c = co_cmp(KS_F16, got, ref, 3, 1, 1);
  cr_expect(!c.ok);
  cr_expect_eq(c.n_nan, 1);
  ks_dtype_store(KS_BF16, ref, 0, 3.0);
  ks_dtype_store(KS_BF16, got, 0, 3.0);
  cr_expect(co_cmp(KS_BF16, got, ref, 1, 1e-2, 1e-2).ok);
}

Test(correctness, empty_output_passes) {
  float x[1] = {0};
  cr_expect(co_cmp(KS_F32, x, x, 0, 0, 0).ok);
}

/* Outputs of several 64 Ki-element chunks are compared on every core: the
 * counts, the first bad index and the maxima are those of the whole array,
 * wherever the chunk boundaries fall. */
Test(correctness, a_large_output_is_judged_as_a_whole) {
  const int64_t n = 5 * 65536 + 77;
  float *ref = co_normal(n, 9), *got = co_alloc(n);
  memcpy(got, ref, sizeof(float) * (size_t)n);
  ks_tolerance tol = {1e-5, 1e-5};
  ks_compare c;
  ks_compare_outputs("y", KS_F32, got, ref, n, tol, &c);
  cr_expect(c.ok, "%s", c.reason);
  got[2 * 65536 + 5] += 1.0f;  /* in the third chunk */
  got[4 * 65536 + 70] -= 3.0f; /* in the last, partial one */
  got[65535] = NAN;            /* the last element of the first */
  ks_compare_outputs("y", KS_F32, got, ref, n, tol, &c);
  cr_expect_not(c.ok);
  cr_expect_eq(c.n_nan, 1);
  cr_expect_eq(c.n_bad, 2);
  cr_expect_eq(c.first_bad, 65535);
  cr_expect_float_eq(c.max_abs_err, 3.0, 1e-5);
  got[65535] = ref[65535];
  ks_compare_outputs("y", KS_F32, got, ref, n, tol, &c);
  cr_expect_eq(c.first_bad, 2 * 65536 + 5);
  cr_expect(strstr(c.reason, "mismatch in 2 of") != NULL, "%s", c.reason);
  free(ref);
  free(got);
}
