/* test_tensormap.c — `// ksearch: tensormap` lines of CUDA candidates
 * (backend/cuda/tensormap.h): parsing, the per-workload geometry handed to
 * cuTensorMapEncodeTiled (dims innermost first, packed strides, the zero
 * map for strides the TMA cannot take), the refusals with the line and the
 * fix (a view of another element count, a box past 256 or of a bad
 * innermost size, a swizzle span, a tensor that is not the task's), the
 * candidate parser accepting the line, and the backend's build refusing a
 * bad line before nvcc; with nvcc, the gemm_bf16 wgmma_pipeline template
 * with TMA=1 (and WS=1 PERSIST=1) builds for sm_90a. No GPU needed. */
#include "backend/backend.h"
#include "backend/cuda/tensormap.h"
#include "eval/candidate.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *k_task =
    "{\"name\": \"g\", \"class\": \"matmul\","
    " \"axes\": {\"m\": {\"type\": \"var\"}, \"n\": {\"type\": \"var\"},"
    " \"k\": {\"type\": \"var\"}, \"h\": {\"type\": \"const\", \"value\": 4}},"
    " \"inputs\": {\"a\": {\"shape\": [\"m\", \"k\"], \"dtype\": "
    "\"bfloat16\"}, \"q\": {\"shape\": [\"m\", \"h\", \"n\", \"k\"], "
    "\"dtype\": \"float32\"}},"
    " \"outputs\": {\"c\": {\"shape\": [\"m\", \"n\"], \"dtype\": "
    "\"bfloat16\"}},"
    " \"reference\": \"reference.c\","
    " \"workloads\": [{\"m\": 100, \"n\": 64, \"k\": 256, \"device\": "
    "\"gpu\"}, {\"m\": 7, \"n\": 8, \"k\": 513, \"device\": \"gpu\"}]}";

static char g_dir[64];

static void load_task(ks_task *t) {
  ks_err err;
  strcpy(g_dir, "/tmp/ks-tmap-test-XXXXXX");
  cr_assert(mkdtemp(g_dir));
  char ref[128], path[128];
  snprintf(ref, sizeof ref, "%s/reference.c", g_dir);
  snprintf(path, sizeof path, "%s/task.json", g_dir);
  cr_assert_eq(ks_write_file_atomic(ref, "void g(void) {}\n", 16, &err), KS_OK);
  cr_assert_eq(ks_task_load_json(k_task, path, t, &err), KS_OK, "%s", err.msg);
}

static void cleanup(void) {
  if (g_dir[0])
    ks_rm_rf(g_dir);
  g_dir[0] = 0;
}

TestSuite(tensormap, .fini = cleanup);

/* Parses one source and evaluates it for workload wi: the code, err.msg. */
static ks_code try_eval(const ks_task *t, const char *src, int wi,
                        const ks_param_value *pv, int np, ks_tmap_geom *g,
                        ks_err *err) {
  ks_tmap_set s;
  ks_code rc = ks_tmap_parse(src, "k.cu", t, &s, err);
  if (!rc)
    rc = ks_tmap_eval(&s, t, &t->workloads[wi], pv, np, g, err);
  ks_tmap_free(&s);
  return rc;
}

Test(tensormap, geometry_from_the_task_innermost_first) {
  ks_task t;
  load_task(&t);
  ks_err err;
  ks_param_value pv[1] = {{"BM", "128"}};
  ks_tmap_geom g[KS_TMAP_MAX];
  const char *src = "// ksearch: backend=cuda entry=g\n"
                    "// ksearch: tensormap ta of=a box=(64, BM) swizzle=128\n"
                    "// ksearch: tensormap tc of=c box=(8, 16)\n"
                    "// ksearch: tensormap tq of=q box=(4, 32) "
                    "view=(k, m * h * n)\n";
  cr_assert_eq(try_eval(&t, src, 0, pv, 1, g, &err), KS_OK, "%s", err.msg);
  /* a [m, k] bf16 as (k, m): row stride k * 2 bytes */
  cr_expect_eq(g[0].rank, 2);
  cr_expect_eq(g[0].dim[0], 256);
  cr_expect_eq(g[0].dim[1], 100);
  cr_expect_eq(g[0].stride[0], 512);
  cr_expect_eq(g[0].box[0], 64);
  cr_expect_eq(g[0].box[1], 128);
  cr_expect_eq(g[0].dtype, 9);   /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
  cr_expect_eq(g[0].swizzle, 3); /* CU_TENSOR_MAP_SWIZZLE_128B */
  cr_expect_eq(g[0].bytes, 100 * 256 * 2);
  cr_expect(g[0].encodable);
  cr_expect_eq(g[1].swizzle, 0);
  cr_expect_eq(g[1].dim[0], 64);
  /* q [m, h, n, k] f32 regrouped as (k, m*h*n) */
  cr_expect_eq(g[2].dtype, 7);
  cr_expect_eq(g[2].dim[1], 100 * 4 * 64);
  cr_expect_eq(g[2].stride[0], 256 * 4);
  cr_expect_eq(g[2].bytes, 100ULL * 4 * 64 * 256 * 4);
  /* k = 513: a row of 1026 bytes is no multiple of 16: a zero map */
  cr_assert_eq(try_eval(&t, src, 1, pv, 1, g, &err), KS_OK, "%s", err.msg);
  cr_expect(!g[0].encodable);
  cr_expect(g[1].encodable); /* c: n = 8, 16-byte rows */
  ks_task_free(&t);
}

/* Each bad line is refused with its line number and a fragment of the fix. */
Test(tensormap, bad_lines_are_refused_naming_line_and_fix) {
  ks_task t;
  load_task(&t);
  static const struct {
    const char *line, *want;
  } cases[] = {
      /* a view of another element count could point past the buffer */
      {"tq of=q box=(4, 32) view=(k, m * n)",
       "product must be its element count"},
      {"tq of=q box=(4, 32) view=(k, m * h * n * 2)",
       "product must be its element count"},
      {"ta of=a box=(64, 300)", "from 1 to 256"},
      {"ta of=a box=(0, 8)", "from 1 to 256"},
      {"ta of=a box=(12, 8)", "multiple of 16 bytes"},
      {"ta of=a box=(128, 8) swizzle=128", "must fit in it"},
      {"ta of=a box=(32, 8) swizzle=32", "must fit in it"},
      {"ta of=a box=(64, 8) swizzle=48", "expected 0, 32, 64 or 128"},
      {"ta of=x box=(64, 8)", "not a tensor of task g"},
      {"ta of=a box=(64)", "box has 1 dimension but the map has 2"},
      {"ta of=a box=(64, 8) view=(k, m, 1)", "box has 2 dimensions"},
      {"ta box=(64, 8)", "no of=BUFFER"},
      {"ta of=a", "no box=(...)"},
      {"ta of=a box=(64, 8) interleave=32", "unknown tensormap key"},
      {"ta of=a box=64", "in parentheses"},
      {"of=a box=(64, 8)", "starts with the map's name"},
      {"2x of=a box=(64, 8)", "C identifier"},
      {"ta of=a box=(64, 8) of=c", "given twice"},
      {"ta of=a box=(64, NOPE)", "names are the task's axes"},
      {"ta of=a box=(64, 8, 1, 1, 1, 1)", "1 to 5"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "// ksearch: backend=cuda\n// ksearch: "
             "tensormap %s\n",
             cases[i].line);
    ks_err err;
    ks_tmap_geom g[KS_TMAP_MAX];
    cr_expect_eq(try_eval(&t, src, 0, NULL, 0, g, &err), KS_ERR_INPUT, "%s",
                 cases[i].line);
    cr_expect(strstr(err.msg, "line 2"), "%s: %s", cases[i].line, err.msg);
    cr_expect(strstr(err.msg, cases[i].want), "%s: %s (wanted \"%s\")",
              cases[i].line, err.msg, cases[i].want);
  }
  /* two maps of one name */
  ks_err err;
  ks_tmap_geom g[KS_TMAP_MAX];
  cr_expect_eq(try_eval(&t,
                        "// ksearch: tensormap ta of=a box=(64, 8)\n"
                        "// ksearch: tensormap ta of=c box=(8, 8)\n",
                        0, NULL, 0, g, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "declared twice (line 1)"), "%s", err.msg);
  /* at most KS_TMAP_MAX */
  char many[2048] = "";
  for (int i = 0; i <= KS_TMAP_MAX; i++)
    snprintf(many + strlen(many), sizeof many - strlen(many),
             "// ksearch: tensormap t%d of=a box=(64, 8)\n", i);
  cr_expect_eq(try_eval(&t, many, 0, NULL, 0, g, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "more than 8 tensormap lines"), "%s", err.msg);
  ks_task_free(&t);
}

Test(tensormap, candidate_parser_accepts_the_line) {
  ks_candidate c;
  ks_err err;
  cr_expect_eq(ks_candidate_parse("// ksearch: backend=cuda entry=g\n"
                                  "// ksearch: tensormap ta of=a box=(64, "
                                  "8) swizzle=128\n"
                                  "// ksearch: launch grid=(1) block=(32)\n"
                                  "extern \"C\" __global__ void g() {}\n",
                                  "k.cu", "g", &c, &err),
               KS_OK, "%s", err.msg);
  ks_candidate_free(&c);
}

/* The build refuses a bad line as the candidate's error, before nvcc runs
 * (so it needs no toolkit): compile_error naming the line. */
Test(tensormap, build_refuses_a_bad_line_before_nvcc) {
  ks_task t;
  load_task(&t);
  ks_candidate c;
  ks_err err;
  cr_assert_eq(ks_candidate_parse("// ksearch: backend=cuda entry=g\n"
                                  "// ksearch: tensormap ta of=a box=(512, "
                                  "8)\n"
                                  "// ksearch: launch grid=(1) block=(32)\n"
                                  "extern \"C\" __global__ void g() {}\n",
                                  "k.cu", "g", &c, &err),
               KS_OK, "%s", err.msg);
  setenv("KSEARCH_NVCC", "/nonexistent/nvcc", 1);
  ks_artifact art;
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", g_dir);
  ks_code rc = ks_backend_get("cuda")->build(&t, &c, cache, 30, &art, &err);
  unsetenv("KSEARCH_NVCC");
  cr_expect_eq(rc, KS_ERR_CANDIDATE, "%s", err.msg);
  cr_expect(strstr(err.msg, "k.cu: line 2: tensormap ta: box[0] = 512"), "%s",
            err.msg);
  ks_artifact_free(&art);
  ks_candidate_free(&c);
  ks_task_free(&t);
}

static bool have_nvcc(void) {
  const char *e = getenv("KSEARCH_NVCC");
  if (e && *e)
    return access(e, X_OK) == 0;
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
    return true;
  return system("command -v nvcc >/dev/null 2>&1") == 0;
}

/* The TMA variants of the wgmma GEMM build for sm_90a (every GPU workload's
 * tensor maps valid) and record their tensormap lines in the artifact. */
Test(tensormap, wgmma_tma_variants_build_for_sm_90a) {
  if (!have_nvcc())
    cr_skip_test("nvcc not found: the CUDA toolkit is needed (set "
                 "KSEARCH_NVCC)");
  setenv("KSEARCH_CUDA_ARCH", "sm_90a", 1);
  const char *root = getenv("KSEARCH_SRC");
  char tdir[PATH_MAX], path[PATH_MAX * 2], cache[64] = "/tmp/ks-tma-XXXXXX";
  snprintf(tdir, sizeof tdir, "%s/tasks/gemm_bf16", root ? root : ".");
  snprintf(path, sizeof path, "%s/templates/cuda/wgmma_pipeline.cu", tdir);
  cr_assert(mkdtemp(cache));
  static const char *const sets[][2] = {
      {"TMA", "1"}, {"WS", "1"}, {"PERSIST", "1"}};
  for (int v = 1; v <= 3; v++) {
    ks_task t;
    ks_err err;
    cr_assert_eq(ks_task_load(tdir, &t, &err), KS_OK, "%s", err.msg);
    ks_candidate c;
    cr_assert_eq(ks_candidate_load(path, t.name, &c, &err), KS_OK, "%s",
                 err.msg);
    for (int i = 0; i < v; i++)
      cr_assert_eq(ks_candidate_set_param(&c, sets[i][0], sets[i][1], &err),
                   KS_OK, "%s", err.msg);
    ks_candidate_fill_defaults(&c);
    ks_artifact art;
    cr_expect_eq(ks_backend_get("cuda")->build(&t, &c, cache, 300, &art, &err),
                 KS_OK, "TMA=1 (%d params): %s\n%s", v, err.msg,
                 art.log.data ? art.log.data : "");
    char *json = NULL;
    if (ks_read_file(art.path, &json, NULL, &err) == KS_OK) {
      cr_expect(strstr(json, "\"text\": \"tma_a of=a box=(64, 64 * WGS * "
                             "MI) swizzle=128\""),
                "%s", json);
      free(json);
    }
    ks_artifact_free(&art);
    ks_candidate_free(&c);
    ks_task_free(&t);
  }
  ks_rm_rf(cache);
}
