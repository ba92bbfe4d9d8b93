/* cuda_model.h — the structure of a CUDA source file as the analyzer and the
 * translators need it (DESIGN.md: Spec and concept catalogue): its
 * functions (kernels, device helpers, host code) with their parameters and
 * bodies, its kernel launches (<<<grid, block, smem>>>) and dim3 variables.
 * A light parse over tokens, not a C++ front end: it understands the
 * shapes kernels are written in and reports what it cannot follow. */
#ifndef KS_SPEC_CUDA_MODEL_H
#define KS_SPEC_CUDA_MODEL_H

#include "spec/lexer.h"

#define KS_CU_MAX_PARAMS 32
#define KS_CU_MAX_LAUNCHES 16
#define KS_CU_MAX_DIM3 16

typedef struct ks_cu_param {
  char name[64];
  char elem[64]; /* element type without qualifiers: "float", "unsigned int" */
  bool is_pointer, is_const;
  int first, last; /* token range of the whole parameter */
} ks_cu_param;

typedef struct ks_cu_func {
  char name[64];
  int line;
  bool is_global, is_device, is_host, is_template;
  int decl_first; /* first token of the declaration (qualifiers, template) */
  int name_tok, lparen, rparen;
  int lbrace, rbrace; /* body */
  int n_params;
  ks_cu_param params[KS_CU_MAX_PARAMS];
  char launch_bounds[64]; /* first argument of __launch_bounds__, or "" */
} ks_cu_func;

typedef struct ks_cu_launch {
  char kernel[64];
  int line;
  char grid[160], block[160], smem[64];
} ks_cu_launch;

typedef struct ks_cu_dim3 {
  char name[64];
  int n;
  char c[3][96]; /* constructor arguments, missing ones "1" */
} ks_cu_dim3;

typedef struct ks_cu_model {
  const char *path;
  const char *src;
  ks_toks toks;
  int n_funcs, cap_funcs;
  ks_cu_func *funcs; /* in source order */
  int *by_name;      /* indexes of funcs sorted by name (lookups by name) */
  int n_launches;
  ks_cu_launch launches[KS_CU_MAX_LAUNCHES];
  int n_dim3;
  ks_cu_dim3 dim3s[KS_CU_MAX_DIM3];
} ks_cu_model;

/* Parses CUDA source. KS_ERR_INPUT, naming path and line, when it does not
 * tokenize, has unbalanced brackets, or holds no __global__ function (then
 * it is not a CUDA kernel file), or holds a NUL byte before len (the file's
 * length as read). src must outlive the model. */
ks_code ks_cu_parse(const char *src, size_t len, const char *path,
                    ks_cu_model *m, ks_err *err);
void ks_cu_model_free(ks_cu_model *m);

/* The function whose body holds token i, or NULL. */
const ks_cu_func *ks_cu_func_at(const ks_cu_model *m, int i);
const ks_cu_func *ks_cu_func_named(const ks_cu_model *m, const char *name);
/* The element type of a variable as declared in function f (a parameter or
 * a local), and whether it is __shared__. False when not found. */
bool ks_cu_var_type(const ks_cu_model *m, const ks_cu_func *f, const char *name,
                    char *elem, size_t n, bool *is_shared);
/* Source text of tokens [a, b] with whitespace runs collapsed to one space. */
void ks_cu_text(const ks_cu_model *m, int a, int b, char *buf, size_t n);
/* The launch of kernel k (first one), or NULL. */
const ks_cu_launch *ks_cu_launch_of(const ks_cu_model *m, const char *k);
/* The dim3 variable called name, or NULL. */
const ks_cu_dim3 *ks_cu_dim3_named(const ks_cu_model *m, const char *name);

#endif
