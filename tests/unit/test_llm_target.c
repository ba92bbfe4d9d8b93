/* test_llm_target.c — the LLM coder on every backend (llm/target.h, issue
 * 22): the answers the fake model gives in tests/fake_llm/kernels/{cuda,
 * opencl}/ pass or fail the check before any compiler as they must
 * (forbidden primitives of the target, the other dialect's intrinsics,
 * broken headers and launch lines, another backend's header), the accepted
 * CUDA answers compile with nvcc for sm_90a through the backend's own build
 * (skipped with the reason where nvcc is missing), and the prompts' target
 * text carries the facts of specs/targets/, the launch format, the device
 * baseline, the class's concepts in the target's form and a CUDA seed's
 * mapping. */
#include "backend/backend.h"
#include "llm/target.h"
#include "spec/seed.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src_dir(void) {
  const char *s = getenv("KSEARCH_SRC");
  return s ? s : ".";
}

static void load_rmsnorm(ks_task *t) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tasks/rmsnorm", src_dir());
  ks_err err;
  cr_assert_eq(ks_task_load(dir, t, &err), KS_OK, "%s", err.msg);
}

static char *kernel(const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/fake_llm/kernels/%s", src_dir(), rel);
  char *s = NULL;
  ks_err err;
  cr_assert_eq(ks_read_file(path, &s, NULL, &err), KS_OK, "%s", err.msg);
  return s;
}

/* Violations of one answer; the candidate is freed when it passed. */
static int check(const char *backend, const ks_task *t, const char *src,
                 ks_llm_violation *v) {
  const ks_llm_backend *be = ks_llm_backend_find(backend);
  cr_assert_not_null(be, "%s", backend);
  ks_candidate c;
  int n = ks_llm_check_answer(be, t, src, "<test>", &c, v, 16);
  if (n == 0)
    ks_candidate_free(&c);
  return n;
}

static bool has(const ks_llm_violation *v, int n, const char *ident,
                const char *in_suggestion) {
  for (int i = 0; i < n && i < 16; i++)
    if (!strcmp(v[i].ident, ident) &&
        (!in_suggestion || strstr(v[i].suggestion, in_suggestion)))
      return true;
  return false;
}

static void dump(const ks_llm_violation *v, int n, char *buf, size_t len) {
  buf[0] = 0;
  for (int i = 0; i < n && i < 16; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "[%d %s: %s] ", v[i].line, v[i].ident,
             v[i].suggestion);
  }
}

Test(llm_target, table_has_c_opencl_cuda_and_mlx) {
  cr_expect_not_null(ks_llm_backend_find("c"));
  cr_expect_str_eq(ks_llm_backend_find("opencl")->fence, "opencl");
  cr_expect_str_eq(ks_llm_backend_find("cuda")->fence, "cuda");
  cr_expect_eq(ks_llm_backend_find("cuda")->launch, KS_LLM_LAUNCH_GRID);
  cr_expect_eq(ks_llm_backend_find("opencl")->launch, KS_LLM_LAUNCH_LOCAL);
  cr_expect_eq(ks_llm_backend_find("mlx")->launch, KS_LLM_LAUNCH_MLX);
  cr_expect_str_eq(ks_llm_backend_find("mlx")->target, "mlx-cuda-sm90");
  cr_expect_null(ks_llm_backend_find("metal"));
}

/* MLX bodies: the rmsnorm template passes; a body without its launch line,
 * one with other backends' launch words, and a whole kernel where a body
 * goes are refused before MLX, each with its reason. */
Test(llm_target, mlx_answers_pass_or_are_rejected_before_mlx) {
  ks_task t;
  load_rmsnorm(&t);
  ks_llm_violation v[16];
  char buf[2048];
  char path[4096];
  snprintf(path, sizeof path, "%s/tasks/rmsnorm/templates/mlx/block_row.cu",
           src_dir());
  char *good = NULL;
  ks_err e;
  cr_assert_eq(ks_read_file(path, &good, NULL, &e), KS_OK, "%s", e.msg);
  int n = check("mlx", &t, good, v);
  dump(v, n, buf, sizeof buf);
  cr_expect_eq(n, 0, "template refused: %s", buf);
  const char *head = "// ksearch: backend=mlx entry=rmsnorm kernel=cuda\n";
  char src[1024];
  snprintf(src, sizeof src, "%s// ksearch: body\ny[0] = x[0];\n", head);
  n = check("mlx", &t, src, v);
  cr_expect(n > 0 && has(v, n, "(header)", "no launch line"), "no launch");
  snprintf(src, sizeof src,
           "%s// ksearch: launch grid=(rows) block=(256)\n// ksearch: body\n"
           "y[0] = x[0];\n",
           head);
  n = check("mlx", &t, src, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n > 0 && has(v, n, "(header)", "threadgroup"), "block=: %s", buf);
  snprintf(src, sizeof src,
           "%s// ksearch: launch grid=(rows*256) threadgroup=(256)\n"
           "y[0] = x[0];\n",
           head);
  n = check("mlx", &t, src, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n > 0 && has(v, n, "(header)", "ksearch: body"), "no body: %s",
            buf);
  /* the sizes, per GPU workload: a threadgroup past 1024 threads is
   * refused before MLX, a line this reader cannot evaluate is left to the
   * executor, the vec_row template (ceil, params) passes */
  snprintf(src, sizeof src,
           "%s// ksearch: param TG in 2048,256\n"
           "// ksearch: launch grid=(rows*TG) threadgroup=(TG)\n"
           "// ksearch: body\ny[0] = x[0];\n",
           head);
  n = check("mlx", &t, src, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n > 0 && has(v, n, "(header)", "2048 threads"), "TG 2048: %s", buf);
  snprintf(src, sizeof src,
           "%s// ksearch: launch grid=(rows*256//2) threadgroup=(256)\n"
           "// ksearch: body\ny[0] = x[0];\n",
           head);
  n = check("mlx", &t, src, v);
  dump(v, n, buf, sizeof buf);
  cr_expect_eq(n, 0, "a line left to the executor: %s", buf);
  free(good);
  snprintf(path, sizeof path, "%s/tasks/rmsnorm/templates/mlx/vec_row.cu",
           src_dir());
  cr_assert_eq(ks_read_file(path, &good, NULL, &e), KS_OK, "%s", e.msg);
  n = check("mlx", &t, good, v);
  dump(v, n, buf, sizeof buf);
  cr_expect_eq(n, 0, "vec_row refused: %s", buf);
  free(good);
  ks_task_free(&t);
}

Test(llm_target, cuda_answers_pass_or_are_rejected_before_nvcc) {
  ks_task t;
  load_rmsnorm(&t);
  ks_llm_violation v[16];
  char buf[4096];
  const char *good[] = {"cuda/block_plain.cu",  "cuda/warp_rows.cu",
                        "cuda/block_cached.cu", "cuda/block_cached_512.cu",
                        "cuda/wrong.cu",        "cuda/compile_error.cu"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    char *s = kernel(good[i]);
    int n = check("cuda", &t, s, v);
    dump(v, n, buf, sizeof buf);
    cr_expect_eq(n, 0, "%s: %s", good[i], buf);
    free(s);
  }
  char *s = kernel("cuda/forbidden.cu");
  int n = check("cuda", &t, s, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(has(v, n, "<<<", "launch") && has(v, n, "cudaMalloc", NULL),
            "host launch and runtime API: %s", buf);
  free(s);
  s = kernel("cuda/opencl_in_cuda.cu");
  n = check("cuda", &t, s, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(has(v, n, "get_local_id", "threadIdx") &&
                has(v, n, "get_group_id", "blockIdx") &&
                has(v, n, "barrier", "__syncthreads"),
            "OpenCL in CUDA: %s", buf);
  free(s);
  s = kernel("cuda/broken_header.cu");
  n = check("cuda", &t, s, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n == 1 && has(v, n, "(header)", "1024"), "block 2048: %s", buf);
  free(s);
  ks_task_free(&t);
}

/* cuda: a tensormap line is checked like the build checks it (a view of
 * another element count is refused), a good one passes. */
Test(llm_target, cuda_tensormap_lines_are_checked_before_nvcc) {
  ks_task t;
  load_rmsnorm(&t);
  ks_llm_violation v[16];
  char buf[4096];
  char *good = kernel("cuda/block_plain.cu");
  const char *lines[2] = {
      "// ksearch: tensormap xm of=x box=(32, 4) swizzle=128 view=(cols, "
      "rows)\n",
      "// ksearch: tensormap xm of=x box=(64, 4) view=(cols, rows + 1)\n"};
  for (int i = 0; i < 2; i++) {
    ks_buf b;
    ks_buf_init(&b);
    const char *nl = strchr(good, '\n') + 1;
    ks_buf_append(&b, good, (size_t)(nl - good));
    ks_buf_puts(&b, lines[i]);
    ks_buf_puts(&b, nl);
    int n = check("cuda", &t, b.data, v);
    dump(v, n, buf, sizeof buf);
    if (i == 0)
      cr_expect_eq(n, 0, "a good tensormap line refused: %s", buf);
    else
      cr_expect(n == 1 &&
                    has(v, n, "(header)", "tensormap xm: view=(...) holds"),
                "a view of another element count: %s", buf);
    ks_buf_free(&b);
  }
  free(good);
  ks_task_free(&t);
}

Test(llm_target, headers_must_fit_the_backend) {
  ks_task t;
  load_rmsnorm(&t);
  ks_llm_violation v[16];
  char buf[4096];
  char *good = kernel("cuda/block_plain.cu");
  /* no launch line */
  char *nolaunch = ks_strdup(good);
  memcpy(strstr(nolaunch, "// ksearch: launch"), "// nothing: launch", 18);
  int n = check("cuda", &t, nolaunch, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n >= 1 && has(v, n, "(header)", NULL), "no launch line: %s", buf);
  /* OpenCL's launch style in a CUDA file */
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_puts(&b, "// ksearch: backend=cuda entry=rmsnorm\n"
                  "// ksearch: launch global=(rows*256) local=(256)\n");
  ks_buf_puts(&b, strstr(good, "extern"));
  n = check("cuda", &t, b.data, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(has(v, n, "(header)", NULL), "global= on cuda: %s", buf);
  ks_buf_free(&b);
  /* a launched kernel the file does not define */
  ks_buf_init(&b);
  ks_buf_puts(&b, "// ksearch: backend=cuda entry=rmsnorm\n"
                  "// ksearch: launch kernel=rms_pass2 grid=(rows) "
                  "block=(256)\n");
  ks_buf_puts(&b, strstr(good, "extern"));
  n = check("cuda", &t, b.data, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(has(v, n, "(header)", "rms_pass2"), "undefined kernel: %s", buf);
  ks_buf_free(&b);
  /* another backend's header */
  n = check("opencl", &t, good, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n >= 1, "a CUDA file on opencl: %s", buf);
  free(nolaunch);
  free(good);
  ks_task_free(&t);
}

Test(llm_target, opencl_answers_pass_or_are_rejected_before_the_compiler) {
  ks_task t;
  load_rmsnorm(&t);
  ks_llm_violation v[16];
  char buf[4096];
  const char *good[] = {"opencl/group_row.cl", "opencl/row_item.cl"};
  for (size_t i = 0; i < 2; i++) {
    char *s = kernel(good[i]);
    int n = check("opencl", &t, s, v);
    dump(v, n, buf, sizeof buf);
    cr_expect_eq(n, 0, "%s: %s", good[i], buf);
    free(s);
  }
  char *s = kernel("opencl/cuda_intrinsic.cl");
  int n = check("opencl", &t, s, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(has(v, n, "threadIdx", "get_local_id") &&
                has(v, n, "__syncthreads", "barrier") &&
                has(v, n, "__shfl_xor_sync", NULL),
            "CUDA in OpenCL: %s", buf);
  free(s);
  s = kernel("opencl/broken_header.cl");
  n = check("opencl", &t, s, v);
  dump(v, n, buf, sizeof buf);
  cr_expect(n == 1 && has(v, n, "(header)", "launch"), "no launch line: %s",
            buf);
  free(s);
  s = kernel("forbidden.c");
  n = check("c", &t, s, v);
  cr_expect(has(v, n, "system", NULL), "C keeps its sandbox rules");
  free(s);
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

/* What passed the check is what nvcc compiles; the compile error is
 * nvcc's to find (the debug prompt then quotes it). */
Test(llm_target, accepted_cuda_answers_compile_for_sm_90a) {
  if (!have_nvcc())
    cr_skip_test("nvcc not found: the CUDA toolkit is needed to compile the "
                 "fake model's CUDA answers (set KSEARCH_NVCC)");
  setenv("KSEARCH_CUDA_ARCH", "sm_90a", 1);
  ks_task t;
  load_rmsnorm(&t);
  char cache[64] = "/tmp/ks-llm-target-XXXXXX";
  cr_assert(mkdtemp(cache));
  const char *files[] = {"cuda/block_plain.cu",  "cuda/warp_rows.cu",
                         "cuda/block_cached.cu", "cuda/block_cached_512.cu",
                         "cuda/wrong.cu",        "cuda/compile_error.cu"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char *s = kernel(files[i]);
    const ks_llm_backend *be = ks_llm_backend_find("cuda");
    ks_candidate c;
    ks_llm_violation v[16];
    cr_assert_eq(ks_llm_check_answer(be, &t, s, files[i], &c, v, 16), 0);
    ks_artifact art;
    memset(&art, 0, sizeof art);
    ks_err err;
    ks_code rc = ks_backend_get("cuda")->build(&t, &c, cache, 120, &art, &err);
    if (strstr(files[i], "compile_error"))
      cr_expect_eq(rc, KS_ERR_CANDIDATE, "%s must not compile", files[i]);
    else
      cr_expect_eq(rc, KS_OK, "%s: %s", files[i], err.msg);
    ks_artifact_free(&art); /* the build log, also of a failed build */
    ks_candidate_free(&c);
    free(s);
  }
  ks_rm_rf(cache);
  ks_task_free(&t);
}

static char *target_text(const char *backend, const ks_task *t,
                         const ks_spec_seed *seed) {
  ks_llm_target_in in = {ks_llm_backend_find(backend), t, NULL, NULL, seed};
  return ks_llm_target_text(&in);
}

Test(llm_target, cuda_prompt_carries_sm90_facts_format_baseline_concepts) {
  ks_task t;
  load_rmsnorm(&t);
  char *s = target_text("cuda", &t, NULL);
  const char *want[] = {"warp_size: 32",
                        "registers_per_sm: 65536",
                        "shared_memory_per_sm",
                        "wgmma",
                        "tma:",
                        "cp.async.bulk",
                        "timing.events",
                        "cuEventRecord",
                        "grid=(E",
                        "extern \"C\" __global__",
                        "device baseline",
                        "tasks/rmsnorm/baseline/cuda.cu",
                        "not over the C reference",
                        "warp_shuffle_reduction",
                        "__shfl_xor_sync(0xffffffff",
                        "cudaMalloc"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect(strstr(s, want[i]), "cuda target text lacks \"%s\"", want[i]);
  cr_expect(!strstr(s, "-march=native"), "no C build flags on cuda");
  free(s);
  ks_task_free(&t);
}

Test(llm_target, opencl_prompt_carries_launch_lines_and_native_forms) {
  ks_task t;
  load_rmsnorm(&t);
  char *s = target_text("opencl", &t, NULL);
  const char *want[] = {"global=(E",      "launch_lines.format",
                        "__global const", "sub_group_reduce_add",
                        "threadIdx",      "clFinish"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect(strstr(s, want[i]), "opencl target text lacks \"%s\"", want[i]);
  free(s);
  ks_task_free(&t);
}

Test(llm_target, a_cuda_seed_maps_its_concepts_onto_the_target) {
  ks_task t;
  load_rmsnorm(&t);
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/cuda/softmax_warp.cu", src_dir());
  ks_spec_seed *seed = NULL;
  ks_err err;
  cr_assert_eq(ks_spec_seed_load(path, "opencl", &seed, &err), KS_OK, "%s",
               err.msg);
  char *s = target_text("opencl", &t, seed);
  cr_expect(strstr(s, "a CUDA kernel seeds this search"), "%s", s);
  cr_expect(strstr(s, "warp_shuffle_reduction"), "the seed's concept");
  cr_expect(strstr(s, "```cuda\n"), "the seed's source, fenced");
  free(s);
  ks_spec_seed_free(seed);
  ks_task_free(&t);
}
