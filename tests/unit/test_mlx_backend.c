/* test_mlx_backend.c — the C side of the MLX backend (issue 15): the
 * registry line and its hooks (spec_target by form and kernel kind, the
 * executor's argv, outputs collected like device buffers), the candidate
 * header's `# ksearch:` lines and `// ksearch: body`, the refusal of an
 * unknown form before anything runs, and `translate --to mlx`
 * (src/spec/translate_mlx.c). Running candidates is
 * tests/integration/mlx.sh (it needs Python and MLX). */
#include "backend/backend.h"
#include "spec/translate.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const ks_backend_i *mlx(void) {
  const ks_backend_i *be = ks_backend_get("mlx");
  cr_assert_not_null(be, "mlx is registered");
  return be;
}

static void parse(const char *src, ks_candidate *c) {
  ks_err err = {0};
  cr_assert_eq(ks_candidate_parse(src, "t.cu", "softmax", c, &err), KS_OK, "%s",
               err.msg);
}

Test(mlx_backend, hooks) {
  const ks_backend_i *be = mlx();
  cr_expect(ks_backend_device_buffers(be), "the judge collects mlx outputs");
  cr_expect(!ks_backend_device_buffers(ks_backend_get("c")));
  cr_expect_not_null(be->executor_argv);
  char store[KS_EXEC_ARGV_MAX][PATH_MAX];
  char *argv[KS_EXEC_ARGV_MAX + 1] = {NULL};
  ks_err err = {0};
  setenv("KSEARCH_HOME", getenv("KSEARCH_SRC") ? getenv("KSEARCH_SRC") : ".",
         1);
  setenv("KSEARCH_PYTHON", "/opt/py/bin/python3", 1);
  cr_assert_eq(be->executor_argv(store, argv, &err), KS_OK, "%s", err.msg);
  cr_expect_str_eq(argv[0], "/opt/py/bin/python3");
  cr_expect_str_eq(argv[1], "-B");
  cr_expect_not_null(strstr(argv[2], "mlx/executor.py"));
  cr_expect_null(argv[3]);
  unsetenv("KSEARCH_PYTHON");
}

Test(mlx_backend, spec_target_by_form_and_kernel) {
  const ks_backend_i *be = mlx();
  ks_candidate c;
  parse("// ksearch: backend=mlx entry=k\nint i = threadIdx.x;\n", &c);
  cr_expect_str_eq(be->spec_target(&c), "mlx-cuda-sm90");
  ks_candidate_free(&c);
  parse("// ksearch: backend=mlx entry=k kernel=metal\nuint i = 0;\n", &c);
  cr_expect_str_eq(be->spec_target(&c), "mlx");
  ks_candidate_free(&c);
  parse("# ksearch: backend=mlx form=ops entry=k\ndef k(x, **_):\n"
        "    return x\n",
        &c);
  cr_expect_null(be->spec_target(&c), "Python is not checked by the lexer");
  cr_expect_str_eq(c.backend, "mlx", "# ksearch: lines are header lines");
  cr_expect_str_eq(c.entry, "k");
  ks_candidate_free(&c);
}

Test(mlx_backend, body_line_and_params) {
  ks_candidate c;
  parse("// ksearch: backend=mlx entry=k\n// ksearch: param TG in 256,128\n"
        "// ksearch: launch grid=(rows*TG) threadgroup=(TG)\n"
        "__device__ float f(float v) { return v; }\n// ksearch: body\n"
        "y[0] = f(x[0]);\n",
        &c);
  cr_expect_eq(c.n_decls, 1);
  cr_expect_str_eq(c.launch, "grid=(rows*TG) threadgroup=(TG)");
  ks_candidate_free(&c);
  ks_err err = {0};
  cr_expect_eq(ks_candidate_parse("// ksearch: backend=mlx bogus\n", "t.cu",
                                  "k", &c, &err),
               KS_ERR_INPUT, "a bare word other than body is still refused");
}

Test(mlx_backend, unknown_form_is_refused_before_anything_runs) {
  ks_candidate c;
  parse("# ksearch: backend=mlx form=bogus entry=k\n", &c);
  ks_task task;
  memset(&task, 0, sizeof task);
  ks_artifact art;
  ks_err err = {0};
  cr_expect_eq(mlx()->build(&task, &c, "/nonexistent", 10, &art, &err),
               KS_ERR_INPUT);
  cr_expect_not_null(strstr(err.msg, "form=bogus"), "%s", err.msg);
  ks_candidate_free(&c);
}

static char *translate(const char *src) {
  ks_cu_model m;
  ks_translation t;
  ks_err err = {0};
  cr_assert_eq(ks_cu_parse(src, strlen(src), "in.cu", &m, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(ks_translate(&m, "mlx-cuda-sm90", &t, &err), KS_OK, "%s",
               err.msg);
  cr_expect_str_eq(t.backend, "mlx");
  char *out = strdup(t.code.data);
  ks_translation_free(&t);
  ks_cu_model_free(&m);
  return out;
}

Test(mlx_backend, translate_keeps_cuda_in_a_body) {
  char *o = translate(
      "// ksearch: backend=cuda entry=scale\n"
      "// ksearch: param B in 256,128\n"
      "// ksearch: launch grid=(n / B) block=(B) smem=(4 * B)\n"
      "#include <math.h>\n#include <stdint.h>\n"
      "extern \"C\" __global__ void __launch_bounds__(B) scale(const float "
      "*x, float *y, int64_t n) {\n"
      "  int64_t i = blockIdx.x * (int64_t)B + threadIdx.x;\n"
      "  if (i < n) y[i] = expf(x[i]) + INFINITY * 0.f;\n}\n"
      "int main(void) { float *p; cudaMalloc(&p, 4); return 0; }\n");
  cr_expect_not_null(strstr(o, "// ksearch: backend=mlx entry=scale "
                               "kernel=cuda\n"),
                     "%s", o);
  cr_expect_not_null(strstr(o, "// ksearch: param B in 256,128\n"));
  cr_expect_not_null(strstr(o, "// ksearch: launch grid=(ceil(n / B) * (B)) "
                               "threadgroup=(B) smem=(4 * B)\n"),
                     "grid counted in threads: %s", o);
  cr_expect_not_null(strstr(o, "__device__ __forceinline__ void ks_mlx_scale("),
                     "%s", o);
  cr_expect_null(strstr(o, "__global__ void"), "MLX writes the signature");
  cr_expect_null(strstr(o, "__launch_bounds__"));
  cr_expect_null(strstr(o, "main"), "host code dropped");
  cr_expect_null(strstr(o, "backend=cuda"));
  cr_expect_null(strstr(o, "<math.h>"), "NVRTC has no host headers");
  cr_expect_not_null(strstr(o, "#include <cuda/std/cstdint>"));
  cr_expect_not_null(strstr(o, "#define INFINITY"));
  cr_expect_not_null(strstr(o, "\n// ksearch: body\nks_mlx_scale(KS_ARGS);\n"),
                     "%s", o);
  free(o);
}

Test(mlx_backend, translate_from_a_launch_and_marks_what_it_cannot_carry) {
  char *o = translate("__global__ void a(float *x) { x[threadIdx.x] = 1.f; }\n"
                      "__global__ void b(float *x) { x[threadIdx.x] += 1.f; }\n"
                      "void run(float *x, int n) {\n  a<<<n / 128, 128>>>(x);\n"
                      "  b<<<n / 128, 128>>>(x);\n}\n");
  cr_expect_not_null(strstr(o,
                            "// ksearch: launch grid=(ceil(n / 128) * (128)) "
                            "threadgroup=(128)\n"),
                     "%s", o);
  cr_expect_not_null(strstr(o, "KSEARCH-TODO(persistent_kernel)"),
                     "two kernels: only the entry runs: %s", o);
  cr_expect_not_null(strstr(o, "ks_mlx_a(KS_ARGS);"));
  cr_expect_null(strstr(o, "void run("), "host code dropped");
  free(o);
}

Test(mlx_backend, translate_carries_a_scratch_buffer_over) {
  /* the cuda executor's scratch= becomes MLX's ks_scratch output (ksmlx.py:
   * one more output, 0xFF-filled, appended to KS_ARGS), not a TODO */
  char *o = translate(
      "// ksearch: backend=cuda entry=count\n"
      "// ksearch: launch grid=(64) block=(256) scratch=(4 * (32 + n))\n"
      "extern \"C\" __global__ void count(const float *x, int *y, long n, "
      "unsigned *scratch) {\n"
      "  if (threadIdx.x == 0) atomicAdd(scratch, 1u);\n}\n");
  cr_expect_not_null(strstr(o, "// ksearch: launch grid=(ceil(64) * (256)) "
                               "threadgroup=(256) scratch=(4 * (32 + n))\n"),
                     "%s", o);
  cr_expect_null(strstr(o, "KSEARCH-TODO"), "%s", o);
  free(o);
}
