/* test_opencl_launch.c — launch-geometry lines of GPU-style candidates
 * (backend/opencl/launch.h): parsing, errors that name what is wrong, and
 * evaluation over a task's axes and a candidate's parameters. */
#include "backend/opencl/launch.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const char *k_task =
    "{\"name\": \"t\", \"class\": \"row_reduction\","
    " \"axes\": {\"rows\": {\"type\": \"var\"}, \"cols\": {\"type\": \"var\"},"
    "            \"dstate\": {\"type\": \"const\", \"value\": 16}},"
    " \"inputs\": {\"x\": {\"shape\": [\"rows\", \"cols\"], \"dtype\": "
    "\"float32\"}},"
    " \"outputs\": {\"y\": {\"shape\": [\"rows\", \"cols\"], \"dtype\": "
    "\"float32\"}},"
    " \"reference\": \"reference.c\","
    " \"workloads\": [{\"rows\": 7, \"cols\": 3}, {\"rows\": 1000, \"cols\": "
    "4097}]}";

static ks_task g_task;
static char g_dir[64];

static void setup(void) {
  ks_err err;
  strcpy(g_dir, "/tmp/ks-launch-test-XXXXXX");
  cr_assert(mkdtemp(g_dir));
  char ref[128], json[128];
  snprintf(ref, sizeof ref, "%s/reference.c", g_dir);
  snprintf(json, sizeof json, "%s/task.json", g_dir);
  cr_assert_eq(ks_write_file_atomic(ref, "void t(void) {}\n", 16, &err), KS_OK);
  cr_assert_eq(ks_task_load_json(k_task, json, &g_task, &err), KS_OK, "%s",
               err.msg);
}

static void teardown(void) {
  ks_task_free(&g_task);
  ks_rm_rf(g_dir);
}

TestSuite(opencl_launch, .init = setup, .fini = teardown);

static ks_param_value pv(const char *n, const char *v) {
  ks_param_value p;
  memset(&p, 0, sizeof p);
  ks_strlcpy(p.name, n, sizeof p.name);
  ks_strlcpy(p.value, v, sizeof p.value);
  return p;
}

Test(opencl_launch, one_line_defaults_to_entry_and_rounds_up) {
  const char *src = "// ksearch: backend=opencl entry=softmax\n"
                    "// ksearch: param LOCAL in 64,128\n"
                    "// ksearch: launch global=(rows * LOCAL) local=(LOCAL)\n"
                    "__kernel void softmax() {}\n";
  ks_launch_plan p;
  ks_err err;
  cr_assert_eq(ks_launch_parse(src, "k.cl", "softmax", &p, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(p.n, 1);
  cr_expect_str_eq(p.k[0].kernel, "softmax");
  cr_expect_eq(p.k[0].dims, 1);
  cr_expect_eq(p.k[0].line, 3);
  ks_param_value params[] = {pv("LOCAL", "128")};
  ks_launch_geom g[KS_LAUNCH_MAX];
  double scratch = -1;
  cr_assert_eq(ks_launch_eval(&p, &g_task, &g_task.workloads[0], params, 1, g,
                              &scratch, &err),
               KS_OK, "%s", err.msg);
  cr_expect_eq(g[0].global[0], 7 * 128);
  cr_expect_eq(g[0].local[0], 128);
  cr_expect_eq(g[0].global[1], 1);
  cr_expect_eq(g[0].local[2], 1);
  cr_expect_eq(scratch, 0);
  char key[32];
  ks_launch_local_key(&g[0], key, sizeof key);
  cr_expect_str_eq(key, "128-1-1");
  ks_launch_free(&p);
}

Test(opencl_launch, global_rounds_up_to_whole_work_groups) {
  ks_launch l;
  ks_err err;
  cr_assert_eq(
      ks_launch_parse_line("global=(cols) local=(64)", "k", 1, &l, &err), KS_OK,
      "%s", err.msg);
  ks_launch_plan p = {.n = 1};
  p.k[0] = l;
  ks_launch_geom g[1];
  double sb;
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[1], NULL, 0, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect_eq(g[0].global[0], 4160); /* 4097 up to 65 groups of 64 */
  ks_launch_free(&p);
}

Test(opencl_launch, several_kernels_in_order_with_scratch_and_functions) {
  const char *src =
      "// ksearch: backend=opencl entry=scan\n"
      "// ksearch: param TCHUNK in 64,256\n"
      "// ksearch: launch kernel=chunk_local global=(cdiv(cols, TCHUNK), "
      "rows) local=(1, 1) scratch=(4 * rows * cdiv(cols, TCHUNK) * dstate)\n"
      "  // ksearch: launch kernel=carry global=(rows) local=(1)\n"
      "// ksearch: launch kernel=finish global=(max(cols, 2), rows, 1) "
      "local=(min(TCHUNK, 32), 1, 1)\n";
  ks_launch_plan p;
  ks_err err;
  cr_assert_eq(ks_launch_parse(src, "k.cl", "scan", &p, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(p.n, 3);
  cr_expect_str_eq(p.k[0].kernel, "chunk_local");
  cr_expect_str_eq(p.k[1].kernel, "carry");
  cr_expect_str_eq(p.k[2].kernel, "finish");
  cr_expect_eq(p.k[0].dims, 2);
  cr_expect_eq(p.k[2].dims, 3);
  cr_expect_not_null(p.k[0].scratch);
  cr_expect_null(p.k[1].scratch);
  ks_param_value params[] = {pv("TCHUNK", "256")};
  ks_launch_geom g[KS_LAUNCH_MAX];
  double sb;
  cr_assert_eq(ks_launch_eval(&p, &g_task, &g_task.workloads[1], params, 1, g,
                              &sb, &err),
               KS_OK, "%s", err.msg);
  cr_expect_eq(g[0].global[0], 17); /* cdiv(4097, 256) */
  cr_expect_eq(g[0].global[1], 1000);
  cr_expect_eq(sb, 4.0 * 1000 * 17 * 16); /* const axis dstate = 16 */
  cr_expect_eq(g[2].global[0], 4128);     /* 4097 rounded up to 32 */
  cr_expect_eq(g[2].local[0], 32);
  char raw[KS_LAUNCH_MAX][512];
  cr_expect_eq(ks_launch_lines(src, raw, KS_LAUNCH_MAX), 3);
  cr_expect(strstr(raw[1], "kernel=carry") == raw[1]);
  ks_launch_free(&p);
}

static void expect_line_error(const char *text, const char *needle) {
  ks_launch l;
  ks_err err = {0};
  cr_expect_eq(ks_launch_parse_line(text, "k", 4, &l, &err), KS_ERR_INPUT,
               "accepted: %s", text);
  cr_expect(strstr(err.msg, needle) != NULL,
            "\"%s\": message \"%s\" lacks "
            "\"%s\"",
            text, err.msg, needle);
  cr_expect(strstr(err.msg, "line 4") != NULL, "no line in \"%s\"", err.msg);
}

Test(opencl_launch, errors_name_the_problem) {
  expect_line_error("global=(rows)", "no local");
  expect_line_error("local=(64)", "no global");
  expect_line_error("global=(rows, cols) local=(64)", "same number");
  expect_line_error("global=(a,b,c,d) local=(1,1,1,1)", "1 to 3");
  expect_line_error("global=(rows local=(64)", "unbalanced");
  expect_line_error("global=(rows) local=(64) grid=(3)", "mixes grid=/block=");
  expect_line_error("global=(rows) local=(64) tile=(3)", "unknown launch key");
  expect_line_error("global=(rows) global=(rows) local=(1)", "twice");
  expect_line_error("kernel=9lives global=(rows) local=(1)", "identifier");
  expect_line_error("global=(rows +) local=(1)", "global");
  expect_line_error("global=() local=(1)", "1 to 3");
}

Test(opencl_launch, no_launch_line_says_what_to_add) {
  ks_launch_plan p;
  ks_err err = {0};
  cr_expect_eq(ks_launch_parse("// ksearch: backend=opencl\n__kernel void "
                               "k() {}\n",
                               "x.cl", "k", &p, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "x.cl") && strstr(err.msg, "launch"), "%s",
            err.msg);
}

Test(opencl_launch, evaluation_errors_name_names_and_workload) {
  ks_launch_plan p = {.n = 1};
  ks_err err = {0};
  ks_launch_geom g[1];
  double sb;
  cr_assert_eq(ks_launch_parse_line("global=(rows*WIDTH) local=(64)", "k", 2,
                                    &p.k[0], &err),
               KS_OK);
  cr_expect_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[0], NULL, 0, g, &sb, &err),
      KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "WIDTH") && strstr(err.msg, "line 2"), "%s",
            err.msg);
  ks_param_value bad[] = {pv("WIDTH", "wide")};
  cr_expect_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[0], bad, 1, g, &sb, &err),
      KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "not a number"), "%s", err.msg);
  ks_launch_free(&p);
  cr_assert_eq(ks_launch_parse_line("global=(rows - 7) local=(1)", "k", 3,
                                    &p.k[0], &err),
               KS_OK);
  p.n = 1;
  cr_expect_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[0], NULL, 0, g, &sb, &err),
      KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "rows=7") && strstr(err.msg, "at least 1"), "%s",
            err.msg);
  ks_launch_free(&p);
}

Test(opencl_launch, when_zero_skips_a_line_for_that_workload) {
  const char *src = "// ksearch: backend=cuda entry=k\n"
                    "// ksearch: param FUSE in 0,1\n"
                    "// ksearch: launch kernel=a grid=(rows) block=(32)\n"
                    "// ksearch: launch kernel=b grid=(rows) block=(64) "
                    "when=((1 - FUSE) * min(1, floor(rows / 100)))\n";
  ks_launch_plan p;
  ks_err err = {0};
  cr_assert_eq(ks_launch_parse(src, "k.cu", "k", &p, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(p.n, 2);
  ks_launch_geom g[KS_LAUNCH_MAX];
  double sb;
  ks_param_value fuse0[] = {pv("FUSE", "0")}, fuse1[] = {pv("FUSE", "1")};
  /* rows 1000: launched unless fused */
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[1], fuse0, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(!g[0].skip);
  cr_expect(!g[1].skip);
  cr_expect_eq(g[1].global[0], 1000 * 64);
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[1], fuse1, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(!g[0].skip);
  cr_expect(g[1].skip);
  /* rows 7: skipped by the shape */
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[0], fuse0, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(g[1].skip);
  ks_launch_free(&p);
  expect_line_error("global=(rows) local=(1) when=(rows +)", "when");
  expect_line_error("global=(rows) local=(1) when=(1) when=(0)", "twice");
}

/* pdl=(E): evaluated per workload and parameters like when=; a grid line's
 * key only (OpenCL has no programmatic dependent launch) */
Test(opencl_launch, pdl_is_a_grid_line_flag_evaluated_per_workload) {
  const char *src = "// ksearch: backend=cuda entry=k\n"
                    "// ksearch: param PDL in 1,0\n"
                    "// ksearch: launch kernel=a grid=(rows) block=(32)\n"
                    "// ksearch: launch kernel=b grid=(rows) block=(64) "
                    "pdl=(PDL * min(1, floor(rows / 100)))\n";
  ks_launch_plan p;
  ks_err err = {0};
  cr_assert_eq(ks_launch_parse(src, "k.cu", "k", &p, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(p.n, 2);
  ks_launch_geom g[KS_LAUNCH_MAX];
  double sb;
  ks_param_value on[] = {pv("PDL", "1")}, off[] = {pv("PDL", "0")};
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[1], on, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(!g[0].pdl, "a line without pdl= never overlaps");
  cr_expect(g[1].pdl);
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[1], off, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(!g[1].pdl);
  cr_assert_eq(
      ks_launch_eval(&p, &g_task, &g_task.workloads[0], on, 1, g, &sb, &err),
      KS_OK, "%s", err.msg);
  cr_expect(!g[1].pdl, "rows 7: the expression is 0");
  ks_launch_free(&p);
  expect_line_error("global=(rows) local=(1) pdl=(1)", "OpenCL");
  expect_line_error("grid=(rows) block=(1) pdl=(1) pdl=(0)", "twice");
  expect_line_error("grid=(rows) block=(1) pdl=(rows +)", "pdl");
}
