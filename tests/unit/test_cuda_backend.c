/* test_cuda_backend.c — the CUDA backend (backend/cuda) where there is no
 * GPU, as on CI: grid=/block=/smem= launch lines (launch.h), the workload
 * "device" key, the probe's exit-3 message, and nvcc builds of every CUDA
 * template, device baseline and adversarial kernel for sm_90a
 * (KSEARCH_CUDA_ARCH) through the backend's own build, cached, each also
 * passing the cuda spec check (what `eval` runs before building); the four
 * issue-16 tasks hold at least three CUDA families and a baseline. Builds skip
 * with the reason where nvcc is missing; the probe test skips where a CUDA
 * driver is present (tests/integration/cuda.sh covers that machine). */
#include "backend/backend.h"
#include "backend/opencl/launch.h"
#include "spec/validator.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *k_task =
    "{\"name\": \"t\", \"class\": \"row_reduction\","
    " \"axes\": {\"rows\": {\"type\": \"var\"}, \"cols\": {\"type\": \"var\"}},"
    " \"inputs\": {\"x\": {\"shape\": [\"rows\", \"cols\"], \"dtype\": "
    "\"float32\"}},"
    " \"outputs\": {\"y\": {\"shape\": [\"rows\", \"cols\"], \"dtype\": "
    "\"float32\"}},"
    " \"reference\": \"reference.c\","
    " \"workloads\": [{\"rows\": 7, \"cols\": 10}, {\"rows\": 8192, \"cols\": "
    "8192, \"device\": \"gpu\"}, {\"rows\": 3, \"cols\": 5, \"device\": "
    "\"cpu\"}]}";

static char g_dir[64];

static ks_code load_task(const char *json, ks_task *t, ks_err *err) {
  strcpy(g_dir, "/tmp/ks-cuda-test-XXXXXX");
  cr_assert(mkdtemp(g_dir));
  char ref[128], path[128];
  snprintf(ref, sizeof ref, "%s/reference.c", g_dir);
  snprintf(path, sizeof path, "%s/task.json", g_dir);
  cr_assert_eq(ks_write_file_atomic(ref, "void t(void) {}\n", 16, err), KS_OK);
  return ks_task_load_json(json, path, t, err);
}

static void cleanup(void) {
  if (g_dir[0])
    ks_rm_rf(g_dir);
}

TestSuite(cuda_backend, .fini = cleanup);

Test(cuda_backend, grid_lines_round_up_and_carry_smem) {
  ks_task t;
  ks_err err;
  cr_assert_eq(load_task(k_task, &t, &err), KS_OK, "%s", err.msg);
  ks_launch_plan p;
  cr_assert_eq(ks_launch_parse("// ksearch: launch grid=(rows / 4) "
                               "block=(128) smem=(cols * 4)\n",
                               "k.cu", "t", &p, &err),
               KS_OK, "%s", err.msg);
  cr_expect(p.k[0].grid_style);
  ks_launch_geom g[KS_LAUNCH_MAX];
  double sb;
  cr_assert_eq(ks_launch_eval(&p, &t, &t.workloads[0], NULL, 0, g, &sb, &err),
               KS_OK, "%s", err.msg);
  /* rows / 4 = 1.75 blocks: a partial block is a whole one */
  cr_expect_eq(g[0].local[0], 128);
  cr_expect_eq(g[0].global[0], 2 * 128);
  cr_expect_eq(g[0].smem, 40);
  cr_expect_eq(ks_launch_check_style(&p, true, "k.cu", &err), KS_OK);
  cr_expect_eq(ks_launch_check_style(&p, false, "k.cu", &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "OpenCL launch lines give global="), "%s", err.msg);
  ks_launch_free(&p);
  ks_task_free(&t);
}

Test(cuda_backend, grid_line_errors_say_what_to_write) {
  ks_launch l;
  ks_err err;
  cr_expect_eq(ks_launch_parse_line("grid=(rows)", "k", 3, &l, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "no block=(...)"), "%s", err.msg);
  cr_expect_eq(ks_launch_parse_line("block=(64) smem=(4)", "k", 3, &l, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "no grid=(...)"), "%s", err.msg);
  cr_expect_eq(ks_launch_parse_line("grid=(rows) block=(64) local=(64)", "k", 3,
                                    &l, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "mixes grid=/block="), "%s", err.msg);
}

Test(cuda_backend, workload_device_key) {
  ks_task t;
  ks_err err;
  cr_assert_eq(load_task(k_task, &t, &err), KS_OK, "%s", err.msg);
  cr_expect_eq(t.workloads[0].device, KS_DEV_ANY);
  cr_expect_eq(t.workloads[1].device, KS_DEV_GPU);
  cr_expect_eq(t.workloads[2].device, KS_DEV_CPU);
  cr_expect(ks_workload_applies(&t.workloads[0], KS_DEV_CPU));
  cr_expect(!ks_workload_applies(&t.workloads[1], KS_DEV_CPU));
  cr_expect(ks_workload_applies(&t.workloads[1], KS_DEV_GPU));
  cr_expect(!ks_workload_applies(&t.workloads[2], KS_DEV_GPU));
  cr_expect_eq(ks_backend_device_class(ks_backend_get("c")), KS_DEV_CPU);
  cr_expect_eq(ks_backend_device_class(ks_backend_get("cuda")), KS_DEV_GPU);
  ks_task_free(&t);
  cleanup();
  char bad[2048];
  snprintf(bad, sizeof bad, "%s", k_task);
  char *at = strstr(bad, "\"gpu\"");
  memcpy(at, "\"tpu\"", 5);
  cr_expect_eq(load_task(bad, &t, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "workloads[1].device: must be \"cpu\" or \"gpu\""),
            "%s", err.msg);
}

Test(cuda_backend, probe_without_a_driver_says_so) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    cr_skip_test("a CUDA driver is present here (tests/integration/cuda.sh "
                 "covers it)");
  }
  char dev[256];
  ks_err err;
  cr_expect_eq(ks_backend_get("cuda")->probe(dev, sizeof dev, &err),
               KS_ERR_ENV);
  cr_expect(strstr(err.msg, "no CUDA driver/GPU"), "%s", err.msg);
}

/* Builds one file with the backend's own build (nvcc -cubin for sm_90a). */
static ks_code build_file(const char *task_dir, const char *path,
                          const char *cache, ks_artifact *art, ks_err *err) {
  ks_task t;
  ks_code rc = ks_task_load(task_dir, &t, err);
  cr_assert_eq(rc, KS_OK, "%s", err->msg);
  ks_candidate c;
  cr_assert_eq(ks_candidate_load(path, t.name, &c, err), KS_OK, "%s", err->msg);
  ks_candidate_fill_defaults(&c);
  rc = ks_backend_get("cuda")->build(&t, &c, cache, 120, art, err);
  ks_candidate_free(&c);
  ks_task_free(&t);
  return rc;
}

static bool have_nvcc(void) {
  const char *e = getenv("KSEARCH_NVCC");
  if (e && *e)
    return access(e, X_OK) == 0;
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
    return true;
  return system("command -v nvcc >/dev/null 2>&1") == 0;
}

static const char *const k_issue16[] = {"attention_prefill", "decode_paged",
                                        "moe_routing", "gemm_bf16"};

/* The cuda spec check finds nothing in a built-in kernel. */
static void spec_clean(const char *path) {
  char *src = NULL;
  size_t n = 0;
  ks_err err;
  cr_assert_eq(ks_read_file(path, &src, &n, &err), KS_OK, "%s", err.msg);
  ks_spec_violation v[4];
  int nv = 0;
  cr_expect_eq(ks_spec_validate("cuda", src, v, 4, &nv, &err), KS_OK, "%s: %s",
               path, err.msg);
  cr_expect_eq(nv, 0, "%s: line %d: %s (%s)", path, nv ? v[0].line : 0,
               nv ? v[0].ident : "", nv ? v[0].suggestion : "");
  free(src);
}

/* Every tasks/ * /templates/cuda/ *.cu and tasks/ * /baseline/cuda.cu. */
Test(cuda_backend, every_template_and_baseline_compiles_for_sm_90a) {
  if (!have_nvcc())
    cr_skip_test("nvcc not found: the CUDA toolkit is needed to compile the "
                 "CUDA templates (set KSEARCH_NVCC)");
  setenv("KSEARCH_CUDA_ARCH", "sm_90a", 1);
  const char *src = getenv("KSEARCH_SRC");
  char tasks[PATH_MAX], cache[64] = "/tmp/ks-cuda-build-XXXXXX";
  snprintf(tasks, sizeof tasks, "%s/tasks", src ? src : ".");
  cr_assert(mkdtemp(cache));
  DIR *d = opendir(tasks);
  cr_assert(d, "%s (set KSEARCH_SRC to the repo root)", tasks);
  struct dirent *e;
  int built = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char tdir[PATH_MAX * 2], cdir[PATH_MAX * 3], path[PATH_MAX * 4];
    snprintf(tdir, sizeof tdir, "%s/%s", tasks, e->d_name);
    snprintf(cdir, sizeof cdir, "%s/templates/cuda", tdir);
    DIR *cd = opendir(cdir);
    struct dirent *f;
    int nt = 0;
    while (cd && (f = readdir(cd))) {
      size_t l = strlen(f->d_name);
      if (l < 4 || strcmp(f->d_name + l - 3, ".cu"))
        continue;
      snprintf(path, sizeof path, "%s/%s", cdir, f->d_name);
      ks_artifact art;
      ks_err err;
      ks_code rc = build_file(tdir, path, cache, &art, &err);
      cr_expect_eq(rc, KS_OK, "%s: %s\n%s", path, err.msg,
                   art.log.data ? art.log.data : "");
      ks_artifact_free(&art);
      spec_clean(path);
      built++;
      nt++;
    }
    for (size_t i = 0; i < sizeof k_issue16 / sizeof *k_issue16; i++)
      if (!strcmp(e->d_name, k_issue16[i])) {
        cr_expect_geq(nt, 3, "%s: %d CUDA templates, 3 families wanted",
                      e->d_name, nt);
        snprintf(path, sizeof path, "%s/baseline/cuda.cu", tdir);
        cr_expect(ks_file_exists(path), "%s: no device baseline", e->d_name);
      }
    if (cd)
      closedir(cd);
    snprintf(path, sizeof path, "%s/baseline/cuda.cu", tdir);
    if (ks_file_exists(path)) {
      ks_artifact art;
      ks_err err;
      cr_expect_eq(build_file(tdir, path, cache, &art, &err), KS_OK, "%s: %s",
                   path, err.msg);
      ks_artifact_free(&art);
      spec_clean(path);
      built++;
    }
  }
  closedir(d);
  cr_expect_geq(built, 44, "built %d CUDA files", built);
  ks_rm_rf(cache);
}

Test(cuda_backend, adversarial_kernels_build_or_fail_as_expected) {
  if (!have_nvcc())
    cr_skip_test("nvcc not found: the CUDA toolkit is needed (set "
                 "KSEARCH_NVCC)");
  setenv("KSEARCH_CUDA_ARCH", "sm_90a", 1);
  const char *src = getenv("KSEARCH_SRC");
  char tdir[PATH_MAX], cache[64] = "/tmp/ks-cuda-adv-XXXXXX";
  snprintf(tdir, sizeof tdir, "%s/tasks/softmax", src ? src : ".");
  cr_assert(mkdtemp(cache));
  static const char *const ok[] = {"write_past_end", "spin", "host_stream",
                                   "host_system", "pdl_clock"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/tests/adversarial/cuda/%s.cu",
             src ? src : ".", ok[i]);
    ks_artifact art;
    ks_err err;
    cr_expect_eq(build_file(tdir, path, cache, &art, &err), KS_OK, "%s: %s",
                 path, err.msg);
    ks_artifact_free(&art);
    if (!strcmp(ok[i], "host_system")) { /* cached the second time */
      cr_expect_eq(build_file(tdir, path, cache, &art, &err), KS_OK);
      cr_expect(art.cached);
      ks_artifact_free(&art);
    }
  }
  /* host code was compiled by nothing that runs */
  cr_expect(!ks_file_exists("/tmp/ksearch_adv_cuda_system"));
  char path[PATH_MAX * 2];
  snprintf(path, sizeof path, "%s/tests/adversarial/cuda/device_stream.cu",
           src ? src : ".");
  ks_artifact art;
  ks_err err;
  cr_expect_eq(build_file(tdir, path, cache, &art, &err), KS_ERR_CANDIDATE);
  cr_expect(strstr(err.msg, "separate compilation"), "%s", err.msg);
  ks_artifact_free(&art);
  /* a tensor map that would reach past its buffer: refused before nvcc */
  snprintf(path, sizeof path, "%s/tests/adversarial/cuda/tensormap_view.cu",
           src ? src : ".");
  cr_expect_eq(build_file(tdir, path, cache, &art, &err), KS_ERR_CANDIDATE);
  cr_expect(strstr(err.msg, "line 2: tensormap xm: view=(...) holds"), "%s",
            err.msg);
  cr_expect(strstr(err.msg, "its element count"), "%s", err.msg);
  ks_artifact_free(&art);
  ks_rm_rf(cache);
}
