/* translate.h — literal translation of the CUDA common subset to OpenCL C,
 * Metal (a body + header + launch geometry for mx.fast.metal_kernel) and C
 * (DESIGN.md: Spec and concept catalogue; `ksearch translate`).
 *
 * Thread and block indices, __shared__, __syncthreads, warp shuffles,
 * atomics, math functions and vector types are rewritten token by token with
 * the target's `from_cuda` table (specs/targets) plus a few structural rules
 * (kernel signatures, address spaces of pointers, host code dropped,
 * __CUDA_ARCH__ branches resolved). Whatever has no literal form stays in
 * place, marked by a `// KSEARCH-TODO(concept_id): ...` line above it, in
 * the manner of SYCLomatic's migration warnings. */
#ifndef KS_SPEC_TRANSLATE_H
#define KS_SPEC_TRANSLATE_H

#include "spec/cuda_analyze.h"
#include "util/util.h"

#include <jansson.h>

typedef struct ks_translation {
  char target[48];  /* target id ("opencl-generic") */
  char backend[16]; /* "opencl", "metal", "c" */
  ks_buf code;      /* OpenCL C, C, or for metal a Python module for MLX */
  /* opencl/c: [{name, line, launch}]; metal: [{name, line, input_names,
   * output_names, input_dtypes, output_dtypes, header, source, grid,
   * threadgroup}] */
  json_t *kernels;
  json_t *todos; /* [{concept, line, message}] */
  int n_todos;
} ks_translation;

/* Translates a parsed CUDA model for target ("opencl", "metal", "c" or a
 * target id of one of those backends). KS_ERR_INPUT for another target. */
ks_code ks_translate(const ks_cu_model *m, const char *target,
                     ks_translation *out, ks_err *err);
void ks_translation_free(ks_translation *t);

#endif
