/* test_opencl_backend.c — the OpenCL backend (backend/opencl): probe, the
 * cached two-pass build with its compile errors, and the runner side's
 * device buffers with guard bytes, driven in this process with a trusted
 * kernel. Skipped with the install hint where no OpenCL platform exists.
 * Builds go through ksearch-runner (KSEARCH_RUNNER, set by `make
 * unit-test`). */
#include "backend/backend.h"
#include "backend/opencl/ocl.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static ks_task g_task;
static char g_cache[64];
static const ks_backend_i *g_be;

static void setup(void) {
  g_be = ks_backend_get("opencl");
  cr_assert_not_null(g_be);
  /* as in the runner: PoCL's cache in a private folder, set before its
   * first call (the probe) */
  strcpy(g_cache, "/tmp/ks-ocl-unit-XXXXXX");
  cr_assert(mkdtemp(g_cache));
  char pc[128];
  snprintf(pc, sizeof pc, "%s/pocl-cache", g_cache);
  setenv("TMPDIR", g_cache, 1);
  setenv("POCL_CACHE_DIR", pc, 1);
  char dev[512];
  ks_err err;
  if (g_be->probe(dev, sizeof dev, &err) != KS_OK) {
    cr_assert_eq(err.code, KS_ERR_ENV, "%s", err.msg);
    cr_assert(strstr(err.msg, "pocl-opencl-icd"), "%s", err.msg);
    cr_skip_test("no OpenCL here: %s", err.msg);
  }
  char path[PATH_MAX];
  const char *src = getenv("KSEARCH_SRC");
  snprintf(path, sizeof path, "%s/tasks/softmax", src ? src : ".");
  cr_assert_eq(ks_task_load(path, &g_task, &err), KS_OK,
               "%s (set KSEARCH_SRC to the repo root)", err.msg);
}

static void teardown(void) {
  ks_task_free(&g_task);
  if (g_cache[0])
    ks_rm_rf(g_cache);
}

TestSuite(opencl_backend, .init = setup, .fini = teardown);

static const char *k_good =
    "// ksearch: backend=opencl entry=softmax\n"
    "// ksearch: param LOCAL in 16,32\n"
    "// ksearch: launch global=(rows) local=(LOCAL)\n"
    "__kernel void softmax(__global const float *x, __global float *y,\n"
    "                      long rows, long cols) {\n"
    "  long r = get_global_id(0);\n"
    "  if (r >= rows) return;\n"
    "  for (long c = 0; c < cols; c++) y[r * cols + c] = 2.0f * x[r * cols + "
    "c];\n"
    "  if (r == rows - 1 && cols == 3) y[rows * cols] = 1.0f; /* past end */\n"
    "}\n";

static void build(const char *src, ks_artifact *art, ks_code want,
                  ks_err *err) {
  ks_candidate c;
  cr_assert_eq(ks_candidate_parse(src, "unit.cl", "softmax", &c, err), KS_OK,
               "%s", err->msg);
  ks_candidate_fill_defaults(&c);
  ks_code rc = g_be->build(&g_task, &c, g_cache, 60, art, err);
  cr_assert_eq(rc, want, "build gave %s: %s", ks_code_name(rc),
               rc ? err->msg : "");
  ks_candidate_free(&c);
}

Test(opencl_backend, builds_once_with_both_grid_variants_then_caches) {
  ks_artifact a, b;
  ks_err err;
  build(k_good, &a, KS_OK, &err);
  cr_expect_not(a.cached);
  cr_expect(a.build_s > 0);
  cr_expect(strstr(a.path, "/artifact.json"));
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", a.path);
  strcpy(strrchr(p, '/'), "/program.smallgrid.bin");
  cr_expect(ks_file_exists(p), "%s missing", p);
  build(k_good, &b, KS_OK, &err);
  cr_expect(b.cached);
  cr_expect_str_eq(a.hash, b.hash);
  ks_artifact_free(&a);
  ks_artifact_free(&b);
}

Test(opencl_backend, compile_errors_are_the_candidates_with_the_log) {
  ks_artifact a;
  ks_err err;
  build("// ksearch: backend=opencl entry=softmax\n"
        "// ksearch: launch global=(rows) local=(16)\n"
        "__kernel void softmax(__global const float *x, __global float *y,\n"
        "  long rows, long cols) { undeclared_thing = 1; }\n",
        &a, KS_ERR_CANDIDATE, &err);
  cr_expect(strstr(err.msg, "undeclared_thing"), "%s", err.msg);
  ks_artifact_free(&a);
  build("// ksearch: backend=opencl entry=softmax\n"
        "// ksearch: launch global=(rows) local=(16)\n"
        "__kernel void softmax(__global float *y, long rows) { }\n",
        &a, KS_ERR_CANDIDATE, &err);
  cr_expect(strstr(err.msg, "takes 2 arguments") &&
                strstr(err.msg, "__global const float *x"),
            "%s", err.msg);
  ks_artifact_free(&a);
  build("// ksearch: backend=opencl entry=softmax\n"
        "__kernel void softmax(__global const float *x, __global float *y,\n"
        "  long rows, long cols) { }\n",
        &a, KS_ERR_CANDIDATE, &err);
  cr_expect(strstr(err.msg, "launch"), "%s", err.msg);
  ks_artifact_free(&a);
}

/* The runner's view, in this process: load, device buffers with guards, a
 * call, the guard check catching the kernel's store past the end. */
Test(opencl_backend, device_buffers_catch_a_store_past_the_end) {
  ks_artifact a;
  ks_err err;
  build(k_good, &a, KS_OK, &err);
  void *h = NULL;
  cr_assert_eq(g_be->load(a.path, &g_task, &h, &err), KS_OK, "%s", err.msg);
  const int64_t rows = 2, cols = 3;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  void *bx = g_be->dev_alloc(h, sizeof x, 4096, 0xCB);
  void *by = g_be->dev_alloc(h, sizeof y, 4096, 0xCB);
  cr_assert(bx && by);
  cr_assert(g_be->upload(h, bx, x, sizeof x));
  void *bufs[2] = {bx, by};
  int64_t axes[KS_MAX_AXES] = {0};
  axes[ks_task_axis_index(&g_task, "rows")] = rows;
  axes[ks_task_axis_index(&g_task, "cols")] = cols;
  g_be->run(h, bufs, axes, NULL);
  g_be->sync(h);
  char reason[256] = "";
  cr_expect(g_be->dev_check(h, reason, sizeof reason), "%s", reason);
  cr_assert(g_be->download(h, by, y, sizeof y));
  for (int i = 0; i < 6; i++)
    cr_expect_eq(y[i], 2 * x[i]);
  cr_expect_eq(g_be->dev_guard_check(h, bx), 0);
  cr_expect_eq(g_be->dev_guard_check(h, by), 1); /* first byte past the end */
  cr_expect(g_be->device_time_ns(h) > 0);
  g_be->dev_free(h, bx);
  g_be->dev_free(h, by);
  g_be->unload(h);
  ks_artifact_free(&a);
}

Test(opencl_backend, error_names_and_install_hint) {
  cr_expect_str_eq(ks_ocl_errstr(CL_INVALID_WORK_GROUP_SIZE),
                   "CL_INVALID_WORK_GROUP_SIZE");
  cr_expect_str_eq(ks_ocl_errstr(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  ks_err err;
  cr_expect_eq(ks_ocl_no_platform(&err, -1001), KS_ERR_ENV);
  cr_expect(strstr(err.msg, "apt-get install pocl-opencl-icd"), "%s", err.msg);
}
