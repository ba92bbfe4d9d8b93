/* test_spec_concepts.c — the concept catalogue (specs/concepts, loaded by
 * src/spec/concepts.c) and the CUDA analyzer (src/spec/cuda_analyze.c) on
 * the CUDA kernels of tests/cuda: the expected concepts are found on the
 * expected lines; malformed or non-CUDA input gets a clear error; the
 * --seed-cuda helper (src/spec/seed.c). */
#include "spec/cuda_analyze.h"
#include "spec/seed.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cc_path(const char *rel, char *out, size_t n) {
  const char *root = getenv("KSEARCH_SRC");
  snprintf(out, n, "%s/%s", root && *root ? root : ".", rel);
}

/* The line of the first occurrence of needle in tests/cuda/<file>. */
static int cc_line(const char *file, const char *needle) {
  char path[1024];
  cc_path(file, path, sizeof path);
  char *src = NULL;
  cr_assert_eq(ks_read_file(path, &src, NULL, NULL), KS_OK, "%s", path);
  char *at = strstr(src, needle);
  cr_assert_not_null(at, "%s has %s", file, needle);
  int line = 1;
  for (char *p = src; p < at; p++)
    line += *p == '\n';
  free(src);
  return line;
}

static bool cc_hit(const ks_cuda_report *r, const char *concept, int line) {
  for (int i = 0; i < r->n_hits; i++)
    if (!strcmp(r->hits[i].concept->id, concept) &&
        (line == 0 || r->hits[i].line == line))
      return true;
  return false;
}

static void cc_analyze(const char *file, ks_cuda_report *r) {
  char path[1024];
  ks_err err = {0};
  cc_path(file, path, sizeof path);
  cr_assert_eq(ks_cuda_analyze_file(path, r, &err), KS_OK, "%s", err.msg);
}

Test(spec_concepts, catalogue_is_complete) {
  const ks_concept_set *cs;
  ks_err err = {0};
  cr_assert_eq(ks_concepts_get(&cs, &err), KS_OK, "%s", err.msg);
  cr_expect_geq(cs->n, 25);
  static const char *const required[] = {"grid_stride_loop",
                                         "coalesced_access",
                                         "vector_loads_128",
                                         "shared_memory_tiling",
                                         "bank_conflict_padding",
                                         "warp_shuffle_reduction",
                                         "block_reduction",
                                         "cooperative_groups",
                                         "atomics",
                                         "online_softmax",
                                         "split_k",
                                         "split_kv_flash_decoding",
                                         "chunked_scan",
                                         "register_blocking",
                                         "double_buffering_cp_async",
                                         "tensor_core_mma",
                                         "launch_bounds_occupancy",
                                         "fast_math_intrinsics",
                                         "half_bf16_conversion",
                                         "persistent_kernel",
                                         "warp_specialization"};
  for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
    const ks_concept *c = ks_concept_find(cs, required[i]);
    cr_assert_not_null(c, "concept %s", required[i]);
    cr_expect_not_null(ks_concept_form(c, "opencl"), "%s", c->id);
    cr_expect_not_null(ks_concept_form(c, "metal"), "%s", c->id);
    cr_expect_not_null(ks_concept_form(c, "c"), "%s", c->id);
    cr_expect_gt(c->n_detect, 0, "%s", c->id);
  }
  /* no direct equivalents that matter */
  cr_expect_not_null(
      ks_concept_gap(ks_concept_find(cs, "warp_shuffle_reduction"),
                     "opencl-pocl-cpu", "opencl"));
  cr_expect_not_null(
      ks_concept_gap(ks_concept_find(cs, "double_buffering_cp_async"),
                     "metal-apple", "metal"));
  cr_expect_not_null(ks_concept_gap(ks_concept_find(cs, "tensor_core_mma"),
                                    "opencl-pocl-cpu", "opencl"));
  cr_expect_null(ks_concept_gap(ks_concept_find(cs, "online_softmax"),
                                "metal-apple", "metal"));
  cr_expect(
      strstr(ks_concept_form(ks_concept_find(cs, "tensor_core_mma"), "metal"),
             "simdgroup"));
}

/* Every concept id a template or a class spec names is in the catalogue. */
Test(spec_concepts, templates_and_class_specs_use_catalogue_ids) {
  const ks_concept_set *cs;
  ks_err err = {0};
  cr_assert_eq(ks_concepts_get(&cs, &err), KS_OK, "%s", err.msg);
  char root[1024];
  cc_path("tasks", root, sizeof root);
  DIR *d = opendir(root);
  cr_assert_not_null(d);
  struct dirent *e;
  int checked = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char tdir[1300];
    snprintf(tdir, sizeof tdir, "%s/%s/templates/c", root, e->d_name);
    DIR *td = opendir(tdir);
    struct dirent *f;
    while (td && (f = readdir(td))) {
      char path[1600], *src = NULL;
      snprintf(path, sizeof path, "%s/%s", tdir, f->d_name);
      if (f->d_name[0] == '.' || ks_read_file(path, &src, NULL, NULL))
        continue;
      char *c = strstr(src, "concepts=");
      if (c) {
        char list[512];
        sscanf(c + 9, "%511[A-Za-z0-9_,]", list);
        for (char *s, *id = strtok_r(list, ",", &s); id;
             id = strtok_r(NULL, ",", &s)) {
          cr_expect_not_null(ks_concept_find(cs, id), "%s: %s", path, id);
          checked++;
        }
      }
      free(src);
    }
    if (td)
      closedir(td);
  }
  closedir(d);
  cr_expect_gt(checked, 10);
}

Test(spec_concepts, softmax_with_warp_shuffles) {
  ks_cuda_report r;
  cc_analyze("tests/cuda/softmax_warp.cu", &r);
  const char *f = "tests/cuda/softmax_warp.cu";
  cr_expect(cc_hit(&r, "warp_shuffle_reduction",
                   cc_line(f, "v = fmaxf(v, __shfl_xor_sync")));
  cr_expect(
      cc_hit(&r, "warp_shuffle_reduction", cc_line(f, "v += __shfl_xor_sync")));
  cr_expect(cc_hit(&r, "block_reduction", cc_line(f, "__shared__ float red")));
  cr_expect(cc_hit(&r, "coalesced_access", cc_line(f, "c += blockDim.x)")));
  cr_expect(cc_hit(&r, "loop_unrolling", cc_line(f, "#pragma unroll")));
  cr_expect(cc_hit(&r, "launch_bounds_occupancy", 0));
  cr_expect(!cc_hit(&r, "online_softmax", 0), "a three-pass softmax");
  cr_expect(!cc_hit(&r, "shared_memory_tiling", 0), "red[32] is no tile");
  ks_cuda_report_free(&r);
}

Test(spec_concepts, tiled_matmul) {
  ks_cuda_report r;
  const char *f = "tests/cuda/matmul_tiled.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "shared_memory_tiling",
                   cc_line(f, "__shared__ float As[TILE][TILE];")));
  cr_expect(
      cc_hit(&r, "bank_conflict_padding", cc_line(f, "Bs[TILE][TILE + 1]")));
  cr_expect(!cc_hit(&r, "bank_conflict_padding",
                    cc_line(f, "__shared__ float As[TILE][TILE];")));
  cr_expect(cc_hit(&r, "cache_blocking", 0));
  cr_expect(!cc_hit(&r, "warp_shuffle_reduction", 0));
  ks_cuda_report_free(&r);
}

Test(spec_concepts, block_scan) {
  ks_cuda_report r;
  const char *f = "tests/cuda/block_scan.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "chunked_scan", cc_line(f, "__shfl_up_sync(0xff")));
  cr_expect(cc_hit(&r, "chunked_scan", cc_line(f, "if (lane >= offset)")));
  cr_expect(cc_hit(&r, "chunked_scan", cc_line(f, "carry += total")));
  cr_expect(cc_hit(&r, "block_reduction", cc_line(f, "warp_sums[WARPS];")));
  ks_cuda_report_free(&r);
}

Test(spec_concepts, flash_attention) {
  ks_cuda_report r;
  const char *f = "tests/cuda/flash_attn.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "double_buffering_cp_async",
                   cc_line(f, "cp.async.cg.shared.global")),
            "cp.async inside inline PTX");
  cr_expect(cc_hit(&r, "online_softmax", 0));
  cr_expect(
      cc_hit(&r, "split_kv_flash_decoding", cc_line(f, "int num_splits")));
  cr_expect(cc_hit(&r, "fast_math_intrinsics", cc_line(f, "__expf(m_i")));
  cr_expect(cc_hit(&r, "shared_memory_tiling", cc_line(f, "float Ks[")));
  cr_expect(cc_hit(&r, "warp_shuffle_reduction", cc_line(f, "v += __shfl")));
  cr_expect(cc_hit(&r, "launch_bounds_occupancy", 0));
  cr_expect(cc_hit(&r, "vector_loads_128", cc_line(f, "*(float4 *)smem")));
  ks_cuda_report_free(&r);
}

/* The issue-16 kernels: what the catalogue learned for them is found where
 * it is used (ldmatrix fragments, paged gathers, split-KV ranges, online
 * softmax with exp2, cp.async rings, programmatic dependent launch). */
Test(spec_concepts, issue16_templates) {
  ks_cuda_report r;
  const char *f = "tasks/attention_prefill/templates/cuda/mma_flash.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "ldmatrix_fragments", cc_line(f, "ldmatrix.sync")));
  cr_expect(cc_hit(&r, "tensor_core_mma", 0));
  cr_expect(cc_hit(&r, "online_softmax", cc_line(f, "ex2((mrow")));
  cr_expect(cc_hit(&r, "double_buffering_cp_async", 0));
  cr_expect(!cc_hit(&r, "paged_gather", 0));
  ks_cuda_report_free(&r);
  f = "tasks/decode_paged/templates/cuda/split_kv.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "paged_gather", 0));
  cr_expect(cc_hit(&r, "split_kv_flash_decoding", 0));
  cr_expect(!cc_hit(&r, "ldmatrix_fragments", 0));
  cr_expect(!cc_hit(&r, "programmatic_dependent_launch", 0));
  ks_cuda_report_free(&r);
  /* flash_decode's merge as a programmatic dependent launch */
  f = "tasks/decode_paged/templates/cuda/flash_decode.cu";
  cc_analyze(f, &r);
  cr_expect(cc_hit(&r, "programmatic_dependent_launch",
                   cc_line(f, "griddepcontrol.launch_dependents;")));
  cr_expect(cc_hit(&r, "programmatic_dependent_launch",
                   cc_line(f, "griddepcontrol.wait;")));
  ks_cuda_report_free(&r);
}

Test(spec_concepts, malformed_or_not_cuda) {
  char dir[] = "/tmp/ks-spec-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  struct {
    const char *src, *expect;
  } cases[] = {
      {"__global__ void k(float *x) { x[0] = 1;\n", "unbalanced"},
      {"int main(void) { return 0; }\n", "no __global__ kernel"},
      {"__global__ void k(float *x) { /* never closed\n}\n", "comment"},
      {"\x7f"
       "ELF\x02\x01",
       "not C-family"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/case%zu.cu", dir, i);
    FILE *fp = fopen(path, "w");
    fputs(cases[i].src, fp);
    fclose(fp);
    ks_cuda_report r;
    ks_err err = {0};
    cr_expect_eq(ks_cuda_analyze_file(path, &r, &err), KS_ERR_INPUT, "case %zu",
                 i);
    cr_expect(strstr(err.msg, path), "names the file: %s", err.msg);
    cr_expect(strstr(err.msg, cases[i].expect), "case %zu: %s", i, err.msg);
    remove(path);
  }
  rmdir(dir);
}

Test(spec_concepts, seed_raises_related_concepts) {
  char path[1024];
  cc_path("tests/cuda/flash_attn.cu", path, sizeof path);
  ks_spec_seed *s = NULL;
  ks_err err = {0};
  cr_assert_eq(ks_spec_seed_load(path, "c", &s, &err), KS_OK, "%s", err.msg);
  cr_expect(ks_spec_seed_has(s, "online_softmax"));
  cr_expect(ks_spec_seed_has(s, "fast_exp_poly"), "via fast_math_intrinsics");
  cr_expect(ks_spec_seed_has(s, "cache_blocking"), "via shared_memory_tiling");
  cr_expect(!ks_spec_seed_has(s, "thread_parallel"), "generic: no boost");
  const char *a[] = {"online_softmax", "simd_vectorization"};
  const char *b[] = {"welford", "row_blocking"};
  cr_expect_gt(ks_spec_seed_bonus(s, a, 2), ks_spec_seed_bonus(s, b, 2));
  cr_expect_leq(ks_spec_seed_bonus(s, a, 2), 0.3);
  cr_expect_eq(ks_spec_seed_bonus(NULL, a, 2), 0);
  cr_expect(strstr(s->notes, "online_softmax (CUDA line"), "%s", s->notes);
  ks_spec_seed_free(s);
  cr_expect_neq(ks_spec_seed_load("/nonexistent.cu", "c", &s, &err), KS_OK);
  cr_expect(strstr(err.msg, "--seed-cuda"), "%s", err.msg);
  cr_expect_null(s);
}
