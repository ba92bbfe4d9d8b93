/* test_inputs.c — deterministic input generation and output poisoning
 * (src/task/inputs.c): same seed same bytes, independent streams per seed,
 * tensor and chunk, every init within its bounds, permutations, NaN poison. */
#include "task/inputs.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A task with one axis "n" and tensors built by hand. */
static ks_task in_task;
static ks_workload in_w;

static ks_tensor in_tensor(const char *name, ks_dtype dt, ks_init_kind k,
                           double a, double b) {
  ks_tensor t;
  memset(&t, 0, sizeof t);
  strcpy(t.name, name);
  t.dtype = dt;
  t.rank = 1;
  t.dims[0] = 0;
  t.init = (ks_init){.kind = k, .a = a, .b = b};
  return t;
}

static void *in_fill(const ks_tensor *t, int64_t n, uint64_t seed) {
  memset(&in_task, 0, sizeof in_task);
  strcpy(in_task.name, "inputs_test");
  in_task.n_axes = 1;
  strcpy(in_task.axes[0].name, "n");
  memset(&in_w, 0, sizeof in_w);
  in_w.axis[0] = n;
  cr_assert_eq(ks_tensor_numel(&in_task, t, &in_w), n);
  void *buf = malloc((size_t)n * ks_dtype_size(t->dtype));
  cr_assert_not_null(buf);
  ks_inputs_fill(&in_task, t, &in_w, seed, buf);
  return buf;
}

#define IN_N 20000

Test(inputs, same_seed_same_bytes) {
  ks_tensor t = in_tensor("x", KS_F32, KS_INIT_NORMAL, 0, 1);
  void *a = in_fill(&t, IN_N, 7), *b = in_fill(&t, IN_N, 7);
  cr_expect_eq(memcmp(a, b, IN_N * 4), 0);
  free(a);
  free(b);
}

Test(inputs, different_seed_different_bytes) {
  ks_tensor t = in_tensor("x", KS_F32, KS_INIT_NORMAL, 0, 1);
  float *a = in_fill(&t, IN_N, 7), *b = in_fill(&t, IN_N, 8);
  int same = 0;
  for (int i = 0; i < IN_N; i++)
    same += a[i] == b[i];
  cr_expect(same < 10, "%d equal elements", same);
  free(a);
  free(b);
}

Test(inputs, different_tensors_different_streams) {
  ks_tensor x = in_tensor("x", KS_F32, KS_INIT_UNIFORM, 0, 1);
  ks_tensor w = in_tensor("w", KS_F32, KS_INIT_UNIFORM, 0, 1);
  float *a = in_fill(&x, IN_N, 1), *b = in_fill(&w, IN_N, 1);
  int same = 0;
  for (int i = 0; i < IN_N; i++)
    same += a[i] == b[i];
  cr_expect(same < 10, "%d equal elements", same);
  /* a shifted copy would also be a correlated stream */
  int shifted = 0;
  for (int i = 0; i + 1 < IN_N; i++)
    shifted += a[i + 1] == b[i] || a[i] == b[i + 1];
  cr_expect(shifted < 10, "%d", shifted);
  free(a);
  free(b);
}

Test(inputs, prefix_independent_of_size_and_chunks_differ) {
  /* two chunks; the first chunk's bytes do not depend on the total size */
  int64_t n = 2 * 65536 + 5;
  ks_tensor t = in_tensor("x", KS_F32, KS_INIT_NORMAL, 0, 1);
  float *big = in_fill(&t, n, 3), *small = in_fill(&t, 1000, 3);
  cr_expect_eq(memcmp(big, small, 1000 * 4), 0);
  int same = 0;
  for (int i = 0; i < 65536; i++)
    same += big[i] == big[i + 65536];
  cr_expect(same < 10, "chunks repeat: %d", same);
  free(big);
  free(small);
}

Test(inputs, normal_moments) {
  ks_tensor t = in_tensor("x", KS_F32, KS_INIT_NORMAL, 1, 2);
  int64_t n = 100000;
  float *a = in_fill(&t, n, 11);
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) {
    cr_assert(isfinite(a[i]));
    s += a[i];
    s2 += (double)a[i] * a[i];
  }
  double mean = s / n, var = s2 / n - mean * mean;
  cr_expect(fabs(mean - 1) < 0.05, "mean %g", mean);
  cr_expect(fabs(sqrt(var) - 2) < 0.05, "std %g", sqrt(var));
  free(a);
}

Test(inputs, uniform_within_bounds) {
  ks_tensor t = in_tensor("delta", KS_F32, KS_INIT_UNIFORM, -2.5, 0.5);
  float *a = in_fill(&t, IN_N, 5);
  float lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < IN_N; i++) {
    cr_assert(a[i] >= -2.5f && a[i] <= 0.5f, "a[%d] = %g", i, a[i]);
    lo = fminf(lo, a[i]);
    hi = fmaxf(hi, a[i]);
  }
  cr_expect(lo < -2.4f && hi > 0.4f, "covers the range: [%g, %g]", lo, hi);
  free(a);
}

Test(inputs, uniform_half_within_bounds) {
  ks_tensor t = in_tensor("h", KS_F16, KS_INIT_UNIFORM, -1, 1);
  uint16_t *a = in_fill(&t, IN_N, 5);
  int distinct_sign = 0;
  for (int i = 0; i < IN_N; i++) {
    double v = ks_dtype_load(KS_F16, a, (size_t)i);
    cr_assert(v >= -1 && v <= 1, "%g", v);
    distinct_sign += v < 0;
  }
  cr_expect(distinct_sign > IN_N / 3 && distinct_sign < 2 * IN_N / 3);
  free(a);
}

Test(inputs, randint_inclusive) {
  ks_tensor t = in_tensor("idx", KS_I32, KS_INIT_RANDINT, 0, 3);
  int32_t *a = in_fill(&t, IN_N, 9);
  int count[4] = {0};
  for (int i = 0; i < IN_N; i++) {
    cr_assert(a[i] >= 0 && a[i] <= 3, "a[%d] = %d", i, a[i]);
    count[a[i]]++;
  }
  for (int k = 0; k < 4; k++)
    cr_expect(count[k] > IN_N / 8, "value %d drawn %d times", k, count[k]);
  free(a);
}

Test(inputs, randint_negative_range_int64) {
  ks_tensor t = in_tensor("idx", KS_I64, KS_INIT_RANDINT, -5, -5);
  int64_t *a = in_fill(&t, 1000, 9);
  for (int i = 0; i < 1000; i++)
    cr_assert_eq(a[i], -5);
  free(a);
}

Test(inputs, positive_strictly_positive) {
  ks_tensor t = in_tensor("p", KS_F32, KS_INIT_POSITIVE, 0, 0);
  float *a = in_fill(&t, IN_N, 2);
  for (int i = 0; i < IN_N; i++)
    cr_assert(a[i] > 0 && isfinite(a[i]), "a[%d] = %g", i, a[i]);
  free(a);
  ks_tensor h = in_tensor("p", KS_BF16, KS_INIT_POSITIVE, 0, 0);
  uint16_t *b = in_fill(&h, IN_N, 2);
  for (int i = 0; i < IN_N; i++)
    cr_assert(ks_dtype_load(KS_BF16, b, (size_t)i) > 0);
  free(b);
}

static void in_check_perm(ks_dtype dt, int64_t n, uint64_t seed) {
  ks_tensor t = in_tensor("perm", dt, KS_INIT_PERMUTATION, 0, 0);
  void *a = in_fill(&t, n, seed);
  char *seen = calloc((size_t)n, 1);
  int64_t fixed = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = ks_dtype_load(dt, a, (size_t)i);
    cr_assert(v >= 0 && v < (double)n && v == floor(v), "%g", v);
    cr_assert(!seen[(int64_t)v], "%g twice", v);
    seen[(int64_t)v] = 1;
    fixed += (int64_t)v == i;
  }
  cr_expect(fixed < n / 10, "too close to the identity: %lld fixed points",
            (long long)fixed);
  free(seen);
  free(a);
}

Test(inputs, permutation_is_permutation) {
  in_check_perm(KS_I32, 1000, 1);
  in_check_perm(KS_I64, 70000, 2);
  ks_tensor t = in_tensor("perm", KS_I32, KS_INIT_PERMUTATION, 0, 0);
  int32_t *a = in_fill(&t, 1000, 1), *b = in_fill(&t, 1000, 1),
          *c = in_fill(&t, 1000, 2);
  cr_expect_eq(memcmp(a, b, 4000), 0, "deterministic");
  cr_expect_neq(memcmp(a, c, 4000), 0, "depends on the seed");
  free(a);
  free(b);
  free(c);
}

Test(inputs, poison_fills_nan) {
  ks_tensor f = in_tensor("y", KS_F32, KS_INIT_ZEROS, 0, 0);
  float *a = calloc(100, 4);
  ks_output_poison(&f, a, 100);
  for (int i = 0; i < 100; i++)
    cr_assert(isnan(a[i]));
  free(a);
  ks_tensor h = in_tensor("y", KS_F16, KS_INIT_ZEROS, 0, 0);
  uint16_t *b = calloc(100, 2);
  ks_output_poison(&h, b, 100);
  for (int i = 0; i < 100; i++)
    cr_assert(isnan(ks_dtype_load(KS_F16, b, (size_t)i)));
  ks_tensor bf = in_tensor("y", KS_BF16, KS_INIT_ZEROS, 0, 0);
  ks_output_poison(&bf, b, 100);
  for (int i = 0; i < 100; i++)
    cr_assert(isnan(ks_dtype_load(KS_BF16, b, (size_t)i)));
  free(b);
}

Test(inputs, poison_integers_and_bounds) {
  ks_tensor t = in_tensor("y", KS_I32, KS_INIT_ZEROS, 0, 0);
  uint32_t buf[6] = {0, 0, 0, 0, 0, 0};
  ks_output_poison(&t, buf + 1, 4);
  cr_expect_eq(buf[0], 0, "nothing before");
  for (int i = 1; i <= 4; i++)
    cr_expect_eq(buf[i], 0xA5A5A5A5u);
  cr_expect_eq(buf[5], 0, "nothing after");
  float g[3] = {1, 1, 1};
  ks_tensor f = in_tensor("y", KS_F32, KS_INIT_ZEROS, 0, 0);
  ks_output_poison(&f, g, 2);
  cr_expect(isnan(g[0]) && isnan(g[1]));
  cr_expect_eq(g[2], 1.0f, "exactly numel elements");
}

/* The chunks are drawn on every core: any thread count gives the same bytes
 * (bf16 too, whose store goes through the dtype converter), and the chunk
 * boundaries do not show (an odd length ends in a partial chunk). */
Test(inputs, bytes_do_not_depend_on_the_thread_count) {
  const int64_t n = 5 * 65536 + 123;
  ks_dtype dts[] = {KS_F32, KS_BF16};
  for (int d = 0; d < 2; d++) {
    ks_tensor t = in_tensor("x", dts[d], KS_INIT_NORMAL, 0, 1);
    void *one = in_fill(&t, n, 11);
    size_t bytes = (size_t)n * ks_dtype_size(dts[d]);
    int counts[] = {1, 2, 3, 7, 0};
    for (int k = 0; k < 5; k++) {
      void *b = malloc(bytes);
      cr_assert_not_null(b);
      ks_inputs_fill_threads(&in_task, &t, &in_w, 11, b, counts[k]);
      cr_expect_eq(memcmp(one, b, bytes), 0, "dtype %d, %d threads", d,
                   counts[k]);
      free(b);
    }
    free(one);
  }
}

static void mark(void *ctx, int64_t i) {
  __atomic_fetch_add(&((int *)ctx)[i], 1, __ATOMIC_RELAXED);
}

Test(inputs, parallel_for_runs_every_item_once) {
  int hits[1000];
  int counts[] = {1, 2, 5, 64, 0};
  for (int k = 0; k < 5; k++) {
    memset(hits, 0, sizeof hits);
    ks_parallel_for(1000, mark, hits, counts[k]);
    for (int i = 0; i < 1000; i++)
      cr_assert_eq(hits[i], 1, "item %d ran %d times with %d threads", i,
                   hits[i], counts[k]);
  }
  ks_parallel_for(0, mark, hits, 4); /* nothing to do: returns */
}
