/* test_roofline.c — the roofline's JSON, fraction arithmetic, per-machine
 * cache and one fast real measurement (src/backend/roofline.c,
 * src/backend/c/roofline_native.c). */
#include "backend/roofline.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static ks_roofline sample(void) {
  ks_roofline r;
  ks_roofline_identify("c", 3, &r);
  r.read_gbps = 12345.5;
  r.write_gbps = 234.25;
  r.copy_gbps = 345.125;
  r.triad_gbps = 456.0625;
  r.bandwidth_gbps = 12345.5;
  r.peak_gflops = 98765.5;
  snprintf(r.isa, sizeof r.isa, "avx2");
  r.vector_floats = 8;
  r.measured_at = 1700000000.5;
  snprintf(r.source, sizeof r.source, "sentinel written by the test");
  return r;
}

static void expect_equal(const ks_roofline *a, const ks_roofline *b) {
  cr_expect_str_eq(a->backend, b->backend);
  cr_expect_str_eq(a->device, b->device);
  cr_expect_str_eq(a->machine_key, b->machine_key);
  cr_expect_eq(a->threads, b->threads);
  cr_expect_float_eq(a->read_gbps, b->read_gbps, 1e-9);
  cr_expect_float_eq(a->write_gbps, b->write_gbps, 1e-9);
  cr_expect_float_eq(a->copy_gbps, b->copy_gbps, 1e-9);
  cr_expect_float_eq(a->triad_gbps, b->triad_gbps, 1e-9);
  cr_expect_float_eq(a->bandwidth_gbps, b->bandwidth_gbps, 1e-9);
  cr_expect_float_eq(a->peak_gflops, b->peak_gflops, 1e-9);
  cr_expect_str_eq(a->isa, b->isa);
  cr_expect_eq(a->vector_floats, b->vector_floats);
  cr_expect_float_eq(a->measured_at, b->measured_at, 1e-3);
  cr_expect_str_eq(a->source, b->source);
}

/* A fresh cache folder for this test process. */
static void temp_cache(char *dir, size_t n) {
  snprintf(dir, n, "/tmp/ksearch-test-roofline-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  setenv("KSEARCH_CACHE_DIR", dir, 1);
}

Test(roofline, json_round_trip) {
  ks_roofline r = sample(), back;
  json_t *j = ks_roofline_to_json(&r);
  cr_assert_not_null(j);
  ks_err err = {0};
  cr_assert_eq(ks_roofline_from_json(j, &back, &err), KS_OK, "%s", err.msg);
  json_decref(j);
  expect_equal(&r, &back);
}

Test(roofline, json_missing_field_is_named) {
  ks_roofline r = sample(), back;
  json_t *j = ks_roofline_to_json(&r);
  json_object_del(j, "peak_gflops");
  ks_err err = {0};
  cr_expect_eq(ks_roofline_from_json(j, &back, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "peak_gflops") != NULL, "%s", err.msg);
  json_object_set_new(j, "peak_gflops", json_string("fast"));
  cr_expect_eq(ks_roofline_from_json(j, &back, &err), KS_ERR_INPUT);
  json_decref(j);
  /* a cache written before vector_floats existed is rejected, so it is
   * measured again rather than read with no register width */
  j = ks_roofline_to_json(&r);
  json_object_del(j, "vector_floats");
  cr_expect_eq(ks_roofline_from_json(j, &back, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "vector_floats") != NULL, "%s", err.msg);
  json_object_set_new(j, "vector_floats", json_real(7.5));
  cr_expect_eq(ks_roofline_from_json(j, &back, &err), KS_ERR_INPUT);
  json_decref(j);
}

Test(roofline, fraction_bandwidth_bound) {
  ks_roofline r = {.bandwidth_gbps = 100, .peak_gflops = 1000};
  /* 1 GB at 100 GB/s = 10 ms floor; 1 GFLOP at 1000 GFLOP/s = 1 ms. */
  cr_expect_float_eq(ks_roofline_fraction(&r, 1e9, 1e9, 0.02), 0.5, 1e-12);
  cr_expect_float_eq(ks_roofline_fraction(&r, 1e9, 1e9, 0.01), 1.0, 1e-12);
}

Test(roofline, fraction_compute_bound) {
  ks_roofline r = {.bandwidth_gbps = 100, .peak_gflops = 1000};
  /* 1 TFLOP at 1000 GFLOP/s = 1 s floor; 1 MB is 10 us. */
  cr_expect_float_eq(ks_roofline_fraction(&r, 1e6, 1e12, 4.0), 0.25, 1e-12);
}

Test(roofline, fraction_zero_cost_or_time_is_zero) {
  ks_roofline r = {.bandwidth_gbps = 100, .peak_gflops = 1000};
  cr_expect_eq(ks_roofline_fraction(&r, 0, 0, 0.01), 0.0);
  cr_expect_eq(ks_roofline_fraction(&r, 1e9, 1e9, 0), 0.0);
  cr_expect_eq(ks_roofline_fraction(NULL, 1e9, 1e9, 1), 0.0);
}

Test(roofline, cache_is_read_without_remeasuring) {
  char dir[64], path[PATH_MAX];
  temp_cache(dir, sizeof dir);
  ks_err err = {0};
  cr_assert_eq(ks_roofline_cache_path("c", 3, path, sizeof path, &err), KS_OK,
               "%s", err.msg);
  cr_expect_eq(strncmp(path, dir, strlen(dir)), 0, "%s", path);
  ks_roofline r = sample(), got;
  json_t *j = ks_roofline_to_json(&r);
  cr_assert_eq(json_dump_file(j, path, 0), 0);
  json_decref(j);
  /* A real measurement could never produce the sentinel numbers. */
  cr_assert_eq(ks_roofline_get("c", 3, false, &got, &err), KS_OK, "%s",
               err.msg);
  expect_equal(&r, &got);
  ks_rm_rf(dir);
}

Test(roofline, unknown_backend_is_environment_error) {
  ks_roofline r;
  ks_err err = {0};
  cr_expect_eq(ks_roofline_get("metal", 1, false, &r, &err), KS_ERR_ENV);
  cr_expect(strstr(err.msg, "roofline for backend metal is not available yet"),
            "%s", err.msg);
}

Test(roofline, bad_size_override_is_input_error) {
  setenv("KSEARCH_ROOFLINE_MIB", "lots", 1);
  ks_roofline r;
  ks_err err = {0};
  cr_expect_eq(ks_roofline_measure_c(1, &r, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "KSEARCH_ROOFLINE_MIB") != NULL, "%s", err.msg);
}

/* One small real measurement (8 MiB arrays, 1 thread; under a second),
 * then the cache it wrote must be returned unchanged. */
Test(roofline, measure_then_cached, .timeout = 30) {
  char dir[64];
  temp_cache(dir, sizeof dir);
  setenv("KSEARCH_ROOFLINE_MIB", "8", 1);
  ks_roofline m, again;
  ks_err err = {0};
  cr_assert_eq(ks_roofline_get("c", 1, true, &m, &err), KS_OK, "%s", err.msg);
  cr_expect_str_eq(m.backend, "c");
  cr_expect_eq(m.threads, 1);
  cr_expect(m.vector_floats == 4 || m.vector_floats == 8 ||
                m.vector_floats == 16,
            "register width %d floats", m.vector_floats);
  cr_expect_gt(m.read_gbps, 0);
  cr_expect_gt(m.write_gbps, 0);
  cr_expect_gt(m.copy_gbps, 0);
  cr_expect_gt(m.triad_gbps, 0);
  double mx = m.read_gbps > m.copy_gbps ? m.read_gbps : m.copy_gbps;
  mx = mx > m.triad_gbps ? mx : m.triad_gbps;
  cr_expect_float_eq(m.bandwidth_gbps, mx, 1e-12);
  cr_expect_gt(m.peak_gflops, 1.0);
  cr_expect_gt(strlen(m.isa), 0);
  cr_expect_gt(m.measured_at, 1.6e9);
  cr_assert_eq(ks_roofline_get("c", 1, false, &again, &err), KS_OK, "%s",
               err.msg);
  expect_equal(&m, &again);
  ks_rm_rf(dir);
}
