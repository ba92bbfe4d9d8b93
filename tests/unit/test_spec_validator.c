/* test_spec_validator.c — ks_spec_validate (src/spec/validator.c) over the
 * rules of specs/targets: primitives a target lacks are rejected with the
 * line and the nearest valid alternative; comments, strings and members are
 * not uses; extension pragmas and CPU features decide conditional rules. */
#include "spec/spec.h"
#include "spec/validator.h"

#include <criterion/criterion.h>
#include <string.h>

static int va_run(const char *target, const char *src, ks_spec_violation *v) {
  int n = -1;
  ks_err err = {0};
  cr_assert_eq(ks_spec_validate(target, src, v, 32, &n, &err), KS_OK, "%s",
               err.msg);
  return n;
}

static const ks_spec_violation *va_find(const ks_spec_violation *v, int n,
                                        const char *ident) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v[i].ident, ident))
      return &v[i];
  return NULL;
}

/* The suggestion for ident, which must have been reported. */
static const char *va_why(const ks_spec_violation *v, int n,
                          const char *ident) {
  const ks_spec_violation *x = va_find(v, n, ident);
  cr_assert_not_null(x, "%s reported", ident);
  return x->suggestion;
}

Test(spec_validator, cuda_primitives_in_c_and_opencl) {
  const char *src = "void k(float *x) {\n"
                    "  int i = threadIdx.x;\n"
                    "  __syncthreads();\n"
                    "  float v = __shfl_sync(0xffffffff, x[i], 0);\n"
                    "}\n";
  ks_spec_violation v[32];
  const char *targets[] = {"c", "opencl"};
  for (int t = 0; t < 2; t++) {
    int n = va_run(targets[t], src, v);
    cr_expect_eq(n, 3, "%s: threadIdx, __syncthreads, __shfl_sync", targets[t]);
    const ks_spec_violation *s = va_find(v, n, "__syncthreads");
    cr_assert_not_null(s, "%s", targets[t]);
    cr_expect_eq(s->line, 3);
    cr_expect(strlen(s->suggestion) > 5);
    cr_expect_not_null(va_find(v, n, "__shfl_sync"));
  }
  int n = va_run("opencl", src, v);
  cr_expect(strstr(va_why(v, n, "__syncthreads"), "barrier"),
            "OpenCL's alternative is barrier(): %s",
            va_why(v, n, "__syncthreads"));
  cr_expect_eq(va_run("cuda", src, v), 0, "all of it is CUDA");
}

Test(spec_validator, comments_strings_and_members_are_not_uses) {
  const char *src = "// __syncthreads() in a comment\n"
                    "/* fork(); system(\"x\"); */\n"
                    "const char *s = \"threadIdx pthread_create\";\n"
                    "int y = cfg.system + p->fork + q.pthread_create;\n";
  ks_spec_violation v[32];
  cr_expect_eq(va_run("c", src, v), 0);
}

Test(spec_validator, sandbox_calls_in_c) {
  const char *src = "#include <stdlib.h>\n"
                    "void k(void) {\n"
                    "  int p = fork();\n"
                    "  system(\"ls\");\n"
                    "  int s = socket(2, 1, 0);\n"
                    "  pthread_create(0, 0, 0, 0);\n"
                    "  execvp(\"sh\", 0);\n"
                    "}\n";
  ks_spec_violation v[32];
  int n = va_run("c", src, v);
  cr_expect_eq(n, 5);
  cr_expect(strstr(va_why(v, n, "pthread_create"), "omp"),
            "threads come from OpenMP");
  const ks_spec_violation *ex = va_find(v, n, "execvp");
  cr_assert_not_null(ex);
  cr_expect_eq(ex->line, 7);
}

Test(spec_validator, isa_of_this_machine) {
  const char *src = "#include <immintrin.h>\n"
                    "void k(float *x) {\n"
                    "  __m512 a = _mm512_loadu_ps(x);\n"
                    "  __m256 b = _mm256_fmadd_ps(_mm256_loadu_ps(x), "
                    "_mm256_loadu_ps(x), _mm256_setzero_ps());\n"
                    "}\n";
  ks_spec_violation v[32];
  ks_cpu_flags_override("sse2 avx avx2 fma");
  int n = va_run("c", src, v);
  cr_expect_eq(n, 1, "only the AVX-512 intrinsic");
  cr_expect_not_null(va_find(v, n, "_mm512_loadu_ps"));
  cr_expect(strstr(v[0].suggestion, "avx512f"), "%s", v[0].suggestion);
  ks_cpu_flags_override("sse2 avx avx2 fma avx512f");
  cr_expect_eq(va_run("c", src, v), 0);
  ks_cpu_flags_override("sse2");
  cr_expect_eq(va_run("c", src, v), 4, "no AVX at all: every intrinsic");
  ks_cpu_flags_override(NULL);
  cr_expect_eq(ks_cpu_has("avx512f") || !ks_cpu_has("avx512f"), true);
}

Test(spec_validator, metal_has_no_async_copy) {
  const char *src =
      "uint i = thread_position_in_grid.x;\n"
      "threadgroup float t[32];\n"
      "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\");\n"
      "__pipeline_memcpy_async(t, x, 16);\n"
      "out[i] = simd_sum(x[i]);\n";
  ks_spec_violation v[32];
  int n = va_run("metal", src, v);
  const ks_spec_violation *c = va_find(v, n, "cp.async");
  cr_assert_not_null(c);
  cr_expect_eq(c->line, 3);
  cr_expect(strstr(c->suggestion, "threadgroup"), "%s", c->suggestion);
  cr_expect_not_null(va_find(v, n, "__pipeline_memcpy_async"));
  cr_expect_null(va_find(v, n, "simd_sum"), "simd_sum is Metal");
}

Test(spec_validator, mlx_compiles_for_sm90_without_a) {
  /* MLX's NVRTC target is sm_90, not sm_90a: wgmma and setmaxnreg, which
   * plain cuda (sm_90a) allows, are refused for MLX bodies */
  const char *src =
      "asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
      "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\\n\");\n"
      "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0}, {%1}, {%2}, {%3};\");\n";
  ks_spec_violation v[32];
  int n = va_run("mlx-cuda-sm90", src, v);
  cr_expect_eq(n, 2, "wgmma and setmaxnreg, not mma.sync");
  cr_expect(strstr(va_why(v, n, "wgmma"), "mma.sync"), "%s",
            va_why(v, n, "wgmma"));
  cr_expect_not_null(va_find(v, n, "setmaxnreg"));
  cr_expect_eq(va_run("cuda", src, v), 0, "sm_90a has all three");
}

Test(spec_validator, opencl_subgroups_need_the_extension) {
  const char *plain = "float s = sub_group_reduce_add(v);\n"
                      "float w = simd_shuffle_xor(v, 1);\n";
  ks_spec_violation v[32];
  int n = va_run("opencl", plain, v);
  cr_expect_eq(n, 2);
  cr_expect(strstr(va_why(v, n, "sub_group_reduce_add"), "cl_khr_subgroups"));
  cr_expect_not_null(va_find(v, n, "simd_shuffle_xor"), "Metal's shuffle");
  const char *with = "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n"
                     "float s = sub_group_reduce_add(v);\n";
  cr_expect_eq(va_run("opencl", with, v), 0);
  n = va_run("opencl-pocl-cpu", with, v);
  cr_expect_eq(n, 1, "PoCL's CPU device has no sub-groups at all");
  cr_expect(strstr(v[0].suggestion, "lacks"), "%s", v[0].suggestion);
}

/* Code that compiles only where the feature exists is not a violation. */
Test(spec_validator, preprocessor_guards) {
  const char *ocl = "#ifdef cl_khr_subgroups\n"
                    "  v = sub_group_reduce_add(v);\n"
                    "#else\n"
                    "  v = tree(v);\n"
                    "#endif\n"
                    "float w = sub_group_reduce_max(v);\n";
  ks_spec_violation v[32];
  int n = va_run("opencl-pocl-cpu", ocl, v);
  cr_expect_eq(n, 1, "only the unguarded call");
  cr_expect_eq(v[0].line, 6);
  const char *c = "#if defined(__AVX512F__) && defined(__AVX512BW__)\n"
                  "  __m512 a = _mm512_loadu_ps(x);\n"
                  "#elif defined(__AVX2__)\n"
                  "  __m256 a = _mm256_loadu_ps(x);\n"
                  "#endif\n"
                  "#if !defined(__AVX512F__)\n"
                  "  __m512 b = _mm512_setzero_ps();\n"
                  "#endif\n";
  ks_cpu_flags_override("sse2");
  n = va_run("c", c, v);
  cr_expect_eq(n, 2, "the #elif branch and the negated test guard nothing");
  cr_expect_not_null(va_find(v, n, "_mm256_loadu_ps"));
  cr_expect_not_null(va_find(v, n, "_mm512_setzero_ps"));
  cr_expect_null(va_find(v, n, "_mm512_loadu_ps"));
  ks_cpu_flags_override(NULL);
}

Test(spec_validator, limits_and_errors) {
  ks_spec_violation v[2];
  int n = -1;
  ks_err err = {0};
  cr_expect_eq(ks_spec_validate("c", "fork(); fork();\nfork();\nsystem(0);", v,
                                2, &n, &err),
               KS_OK);
  cr_expect_eq(n, 2, "at most max, one per (line, identifier)");
  cr_expect_eq(ks_spec_validate("vulkan", "int x;", v, 2, &n, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "vulkan"), "%s", err.msg);
  cr_expect_eq(ks_spec_validate("c", "int x; /* open", v, 2, &n, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "line 1"), "%s", err.msg);
}
