/* test_spec_translate.c — ks_translate (src/spec/translate*.c) on the CUDA
 * kernels of tests/cuda: the OpenCL translations of the common subset need
 * no TODO and pass the OpenCL validator; the MSL bodies and headers pass the
 * Metal primitive check; what has no literal form is marked in place with
 * `// KSEARCH-TODO(concept)`. (Building and running the OpenCL output on
 * PoCL is tests/integration/translate.sh.) */
#include "spec/translate.h"
#include "spec/validator.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const char *const tt_files[] = {
    "tests/cuda/softmax_warp.cu", "tests/cuda/matmul_tiled.cu",
    "tests/cuda/block_scan.cu", "tests/cuda/flash_attn.cu"};

typedef struct tt_case {
  char *src;
  ks_cu_model m;
  ks_translation t;
} tt_case;

static void tt_run(const char *rel_or_src, bool is_src, const char *target,
                   tt_case *c) {
  ks_err err = {0};
  memset(c, 0, sizeof *c);
  if (is_src) {
    c->src = strdup(rel_or_src);
  } else {
    char path[1024];
    const char *root = getenv("KSEARCH_SRC");
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : ".",
             rel_or_src);
    cr_assert_eq(ks_read_file(path, &c->src, NULL, &err), KS_OK, "%s", err.msg);
  }
  cr_assert_eq(ks_cu_parse(c->src, strlen(c->src),
                           is_src ? "inline.cu" : rel_or_src, &c->m, &err),
               KS_OK, "%s", err.msg);
  cr_assert_eq(ks_translate(&c->m, target, &c->t, &err), KS_OK, "%s", err.msg);
}

static void tt_free(tt_case *c) {
  ks_translation_free(&c->t);
  ks_cu_model_free(&c->m);
  free(c->src);
}

static int tt_violations(const char *target, const char *code) {
  ks_spec_violation v[32];
  int n = -1;
  ks_err err = {0};
  cr_assert_eq(ks_spec_validate(target, code, v, 32, &n, &err), KS_OK, "%s",
               err.msg);
  for (int i = 0; i < n; i++)
    cr_log_error("%s line %d: %s -> %s", target, v[i].line, v[i].ident,
                 v[i].suggestion);
  return n;
}

Test(spec_translate, opencl_common_subset_is_literal) {
  for (size_t i = 0; i < sizeof tt_files / sizeof *tt_files; i++) {
    tt_case c;
    tt_run(tt_files[i], false, "opencl", &c);
    const char *code = c.t.code.data;
    cr_expect_eq(c.t.n_todos, 0, "%s: %s", tt_files[i], code);
    cr_expect(!strstr(code, "// KSEARCH-TODO("), "%s", tt_files[i]);
    cr_expect_eq(tt_violations("opencl", code), 0, "%s", tt_files[i]);
    cr_expect(strstr(code, "// ksearch: backend=opencl entry="));
    cr_expect(strstr(code, "__kernel void"));
    tt_free(&c);
  }
  tt_case c;
  tt_run(tt_files[0], false, "opencl", &c);
  const char *code = c.t.code.data;
  cr_expect(strstr(code, "// ksearch: launch global=((rows)*(256)) "
                         "local=(256)"),
            "the <<<rows, BLOCK>>> launch, macro expanded");
  cr_expect(strstr(code, "__global const float *restrict x"));
  cr_expect(strstr(code, "long rows"), "int64_t becomes long");
  cr_expect(strstr(code, "__local float *red"),
            "the helper's pointer takes its callers' address space");
  cr_expect(strstr(code, "__global const float *xr = x + row * cols"),
            "a local pointer takes its initializer's address space");
  cr_expect(strstr(code, "ks_shfl_xor(ks_scratch, v, o, 32)"));
  cr_expect(strstr(code, "/* ksearch translate: host function softmax"));
  tt_free(&c);
}

Test(spec_translate, msl_passes_the_metal_primitive_check) {
  for (size_t i = 0; i < sizeof tt_files / sizeof *tt_files; i++) {
    tt_case c;
    tt_run(tt_files[i], false, "metal", &c);
    cr_expect_eq(c.t.n_todos, 0, "%s", tt_files[i]);
    size_t k;
    json_t *kj;
    cr_expect_gt(json_array_size(c.t.kernels), 0);
    json_array_foreach(c.t.kernels, k, kj) {
      const char *hdr = json_string_value(json_object_get(kj, "header"));
      const char *body = json_string_value(json_object_get(kj, "source"));
      cr_assert(hdr && body);
      char *both = malloc(strlen(hdr) + strlen(body) + 2);
      sprintf(both, "%s\n%s", hdr, body);
      cr_expect_eq(tt_violations("metal", both), 0, "%s", tt_files[i]);
      cr_expect_eq(tt_violations("mlx", both), 0, "%s", tt_files[i]);
      cr_expect(json_array_size(json_object_get(kj, "grid")) == 3,
                "launch geometry");
      free(both);
    }
    cr_expect(strstr(c.t.code.data, "mx.fast.metal_kernel("));
    tt_free(&c);
  }
  tt_case c;
  tt_run(tt_files[0], false, "metal", &c);
  json_t *k = json_array_get(c.t.kernels, 0);
  cr_expect_str_eq(
      json_string_value(json_array_get(json_object_get(k, "input_names"), 0)),
      "x");
  cr_expect_str_eq(
      json_string_value(json_array_get(json_object_get(k, "output_names"), 0)),
      "y");
  cr_expect_str_eq(
      json_string_value(json_array_get(json_object_get(k, "grid"), 0)),
      "(rows)*(256)", "MLX grids count threads");
  const char *hdr = json_string_value(json_object_get(k, "header"));
  cr_expect(strstr(hdr, "simd_shuffle_xor(v, o)"));
  cr_expect(strstr(hdr, "threadgroup float *red, uint3 "
                        "thread_position_in_threadgroup"),
            "helpers get the thread attributes MLX declares for the body");
  cr_expect(strstr(json_string_value(json_object_get(k, "source")),
                   "block_max(m, red, thread_position_in_threadgroup)"));
  tt_free(&c);
}

Test(spec_translate, todo_marks_in_place) {
  const char *src =
      "#include <mma.h>\n"
      "using namespace nvcuda;\n"
      "__global__ void k(const half *a, float *c) {\n"
      "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;\n"
      "  c[threadIdx.x] = __activemask();\n"
      "}\n";
  tt_case c;
  tt_run(src, true, "metal", &c);
  const char *code = c.t.code.data;
  const char *w = strstr(code, "wmma::fragment");
  cr_assert_not_null(w, "%s", code);
  const char *todo = strstr(code, "// KSEARCH-TODO(tensor_core_mma)");
  cr_assert_not_null(todo, "%s", code);
  cr_expect_lt(todo, w, "the mark precedes the line it is about");
  cr_expect_eq(
      strchr(todo, '\n') - code + 1, strstr(code, "  wmma::fragment") - code,
      "on the line right above, with the line's indentation: %s", code);
  cr_expect_gt(c.t.n_todos, 0);
  json_t *t0 = json_array_get(c.t.todos, 0);
  cr_expect_gt(json_integer_value(json_object_get(t0, "line")), 0);
  tt_free(&c);
  tt_run(src, true, "opencl", &c);
  cr_expect(strstr(c.t.code.data, "KSEARCH-TODO(tensor_core_mma)"), "%s",
            c.t.code.data);
  cr_expect(strstr(c.t.code.data, "__activemask"));
  tt_free(&c);
}

/* A warp primitive under a condition is fine in CUDA, but its OpenCL
 * emulation holds barriers: marked; the same call outside is not. */
Test(spec_translate, opencl_marks_divergent_shuffles) {
  const char *src =
      "__device__ float wsum(float v) {\n"
      "  for (int o = 16; o > 0; o >>= 1)\n"
      "    v += __shfl_xor_sync(0xffffffff, v, o);\n"
      "  return v;\n"
      "}\n"
      "__global__ void k(float *x) {\n"
      "  float v = x[threadIdx.x];\n"
      "  v = wsum(v);\n"
      "  if (threadIdx.x < 32) {\n"
      "    v = wsum(v);\n"
      "  }\n"
      "  float w = threadIdx.x < 64 ? __shfl_sync(0xffffffff, v, 0) : 0.0f;\n"
      "  x[threadIdx.x] = v + w;\n"
      "}\n";
  tt_case c;
  tt_run(src, true, "opencl", &c);
  int marks = 0, at = 0;
  size_t i;
  json_t *t;
  json_array_foreach(c.t.todos, i, t) {
    if (strcmp(json_string_value(json_object_get(t, "concept")),
               "warp_shuffle_reduction"))
      continue; /* (the missing launch is marked too) */
    marks++;
    at += (int)json_integer_value(json_object_get(t, "line"));
  }
  cr_expect_eq(marks, 2, "%s", c.t.code.data);
  cr_expect_eq(at, 10 + 12, "lines 10 and 12, not 8");
  tt_free(&c);
}

Test(spec_translate, c_marks_cooperating_threads) {
  tt_case c;
  tt_run(tt_files[0], false, "c", &c);
  const char *code = c.t.code.data;
  cr_expect(strstr(code, "KSEARCH-TODO(warp_shuffle_reduction)"), "%s", code);
  cr_expect(strstr(code, "KSEARCH-TODO(block_reduction)"));
  cr_expect(strstr(code, "static void softmax_rows_thread(ks_dim3 ks_tid"));
  cr_expect(strstr(code, "#pragma omp parallel for collapse(3)"));
  tt_free(&c);
  /* an elementwise kernel has nothing to mark and is plain C */
  const char *ew = "__global__ void axpy(const float *x, float *y, float a, "
                   "int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) y[i] = a * x[i] + __expf(y[i]);\n"
                   "}\n";
  tt_run(ew, true, "c", &c);
  cr_expect_eq(c.t.n_todos, 0, "%s", c.t.code.data);
  cr_expect(strstr(c.t.code.data, "ks_bid.x * ks_bdim.x + ks_tid.x"));
  cr_expect(strstr(c.t.code.data, "expf(y[i])"));
  cr_expect_eq(tt_violations("c", c.t.code.data), 0);
  tt_free(&c);
}

Test(spec_translate, other_targets_refused) {
  tt_case c;
  memset(&c, 0, sizeof c);
  ks_err err = {0};
  c.src = strdup("__global__ void k(float *x) { x[0] = 0; }\n");
  cr_assert_eq(ks_cu_parse(c.src, strlen(c.src), "k.cu", &c.m, &err), KS_OK);
  cr_expect_eq(ks_translate(&c.m, "cuda", &c.t, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "opencl, metal, c or mlx"), "%s", err.msg);
  tt_free(&c);
}

/* issue 13: a NUL byte in a .cu file is an error naming its line */
Test(spec_translate, nul_byte_in_cuda_file_is_refused) {
  static const char src[] =
      "__global__ void k(float *x) { x[0] = 1; }\n\0__global__ void j() {}\n";
  ks_cu_model m;
  ks_err err = {0};
  cr_assert_eq(ks_cu_parse(src, sizeof src - 1, "n.cu", &m, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "n.cu") && strstr(err.msg, "line 2") &&
                strstr(err.msg, "NUL"),
            "%s", err.msg);
}

/* issue 13: translate was quadratic in the body length (45 s for 16000
 * shuffles). Timed as a ratio within this process: 4x the statements must
 * take well under 16x the time (quadratic); linear is 4x. Best of 3. */
static double tr_seconds(int n) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_puts(&b, "__global__ void k(float *x) {\n");
  for (int i = 0; i < n; i++)
    ks_buf_puts(&b, "  x[threadIdx.x]=__shfl_xor_sync(0xffffffff,x[0],1);\n"
                    "  if (threadIdx.x < 4) { x[1] = x[2]; }\n");
  ks_buf_puts(&b, "}\n");
  double best = 1e9;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = ks_now();
    ks_cu_model m;
    ks_translation t;
    ks_err err = {0};
    cr_assert_eq(ks_cu_parse(b.data, b.len, "big.cu", &m, &err), KS_OK, "%s",
                 err.msg);
    cr_assert_eq(ks_translate(&m, "opencl", &t, &err), KS_OK, "%s", err.msg);
    double dt = ks_now() - t0;
    ks_translation_free(&t);
    ks_cu_model_free(&m);
    best = dt < best ? dt : best;
  }
  ks_buf_free(&b);
  return best;
}

Test(spec_translate, translation_time_is_linear_in_the_body, .timeout = 120) {
  double small = tr_seconds(1500), big = tr_seconds(6000);
  cr_expect(big < 9 * small + 0.05, "1500 statements %.3f s, 6000: %.3f s",
            small, big);
}

/* Found by the cuda_lexer fuzz target (its input is in the corpus): the
 * Metal translator kept a pointer to a kernel body across a TODO mark that
 * reallocated it, so "source" was read from freed memory (ASan:
 * heap-use-after-free in emit_kernel). Each kernel's JSON source must be the
 * text the Python module carries for it. */
Test(spec_translate, metal_source_survives_a_todo_in_emit_kernel) {
  tt_case c;
  tt_run("tests/fuzz/corpus/cuda_lexer/crash_metal_source_after_todo.cu", false,
         "metal", &c);
  size_t i;
  json_t *k;
  cr_assert_gt(json_array_size(c.t.kernels), 0);
  json_array_foreach(c.t.kernels, i, k) {
    const char *src = json_string_value(json_object_get(k, "source"));
    cr_assert_not_null(src);
    ks_buf want;
    ks_buf_init(&want);
    ks_buf_printf(&want, "r\"\"\"\n%s\n\"\"\"", src);
    cr_expect(strstr(c.t.code.data, want.data) != NULL,
              "kernel %zu: its source is not the module's", i);
    ks_buf_free(&want);
  }
  tt_free(&c);
}

/* Inline PTX has no literal form anywhere; its TODO names the concept found
 * on its line (the ldmatrix, mma or cp.async it is), whose target form the
 * report gives, not the enclosing function's theme. */
Test(spec_translate, inline_ptx_todos_name_their_concept) {
  tt_case c;
  tt_run("tasks/attention_prefill/templates/cuda/mma_flash.cu", false, "opencl",
         &c);
  const char *want[][2] = {{"ldmatrix_fragments", "ldmatrix.sync.aligned"},
                           {"tensor_core_mma", "mma.sync.aligned"},
                           {"double_buffering_cp_async", "cp.async.cg"}};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    const char *at = strstr(c.src, want[k][1]);
    cr_assert(at, "%s", want[k][1]);
    int line = 1;
    for (const char *p = c.src; p < at; p++)
      line += *p == '\n';
    bool found = false;
    size_t i;
    json_t *t;
    json_array_foreach(c.t.todos, i, t) {
      found |=
          json_integer_value(json_object_get(t, "line")) == line &&
          !strcmp(json_string_value(json_object_get(t, "concept")), want[k][0]);
    }
    cr_expect(found, "line %d (%s): no TODO under %s", line, want[k][1],
              want[k][0]);
  }
  tt_free(&c);
}
