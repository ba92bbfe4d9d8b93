/* translate_internal.h — the rewriting engine shared by translate_opencl.c,
 * translate_metal.c and translate_c.c (see translate.h). The engine copies
 * the text between tokens unchanged (whitespace, comments), rewrites tokens
 * with the target's from_cuda table, infers address spaces of pointers, and
 * records KSEARCH-TODO marks; each backend adds its structural rules
 * through one hook and arranges the output file. */
#ifndef KS_SPEC_TRANSLATE_INTERNAL_H
#define KS_SPEC_TRANSLATE_INTERNAL_H

#include "spec/translate.h"

#define KS_TR_MAX_PTRS 128

typedef struct ks_tr ks_tr;

/* Structural rewrite at token i (end: the range's end); emits and returns
 * the index after the consumed tokens, or -1 to leave token i to the
 * engine. */
typedef int (*ks_tr_hook)(ks_tr *x, int i, int end);

struct ks_tr {
  const ks_cu_model *m;
  const ks_toks *ts;
  const ks_spec_target *t;
  const ks_concept_set *cs;
  ks_buf *out;
  json_t *todos;
  json_t *pending; /* TODO marks raised inside a nested rewrite */
  int nest;
  ks_tr_hook hook;
  void *ctx;
  bool *skip;         /* tokens dropped (__CUDA_ARCH__ branches) */
  ks_cuda_report rep; /* the concepts of the file, to name TODO marks */
  /* address-space words: global, shared (local), private; "" = none */
  const char *space_global, *space_shared, *space_private;
  bool cpp; /* the target keeps C++ casts (Metal) */
  /* the function being translated and the pointers declared in it */
  const ks_cu_func *fn;
  /* per token: the innermost `{` enclosing it (-1: none), so that scans
   * for a token's context jump over earlier statements (linear translate) */
  int *encl;
  /* the opencl translator's thread-index taint of fn, computed once per
   * function (translate_opencl.c owns the type) */
  struct ks_tr_taint *taint;
  const ks_cu_func *taint_fn;
  /* concept_for's block-level concept of fn, looked up once per function */
  const ks_cu_func *pref_fn;
  const char *pref_id;
  int n_ptrs;
  char ptr_name[KS_TR_MAX_PTRS][64];
  char ptr_space[KS_TR_MAX_PTRS];
};

/* Sets up x for model m and target t (the catalogue is loaded here). */
ks_code ks_tr_init(ks_tr *x, const ks_cu_model *m, const ks_spec_target *t,
                   ks_translation *out, ks_err *err);
void ks_tr_fini(ks_tr *x);

/* Translates tokens [a, b) into x->out, starting with token a's text. */
void ks_tr_range(ks_tr *x, int a, int b);
/* The same into a fresh string (trimmed); caller frees. */
char *ks_tr_string(ks_tr *x, int a, int b);
/* Enters a function body: resets the pointer map. */
void ks_tr_enter(ks_tr *x, const ks_cu_func *f);
/* Records a TODO mark at the current output line (or queues it while
 * nested); concept NULL = the concept of the identifier, else "literal". */
void ks_tr_todo(ks_tr *x, const char *concept, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records a TODO in the JSON list only (the mark is written elsewhere, e.g.
 * as a Python comment). */
void ks_tr_note(ks_tr *x, const char *concept, int line, const char *msg);
/* Emits the TODO marks queued while nested. */
void ks_tr_flush(ks_tr *x);

/* 'g' global (a pointer parameter), 'l' shared, 'p' private, 0 unknown: the
 * space of the variable an expression [a, b) starts from. */
char ks_tr_space_of(ks_tr *x, int a, int b);
const char *ks_tr_space_word(const ks_tr *x, char space);
/* Whether function f uses (itself or through the device functions it
 * calls) any identifier for which pred is true. */
bool ks_tr_uses(const ks_tr *x, const ks_cu_func *f,
                bool (*pred)(const ks_tr *x, int tok));
/* The space of pointer parameter p of device function f, from its call
 * sites: 'g', 'l', 'p', or 0 when unknown or mixed. */
char ks_tr_param_space(ks_tr *x, const ks_cu_func *f, int p);
/* Index of the token after the call's ')' and the argument ranges of the
 * call whose '(' is at lp; returns the argument count (0..16). */
int ks_tr_args(const ks_toks *ts, int lp, int first[16], int last[16]);
/* Launch geometry of kernel k from the host code: grid and block as three
 * expressions each, macros expanded; false when there is no launch or it
 * cannot be read. */
bool ks_tr_geometry(ks_tr *x, const char *k, char grid[3][160],
                    char block[3][160]);
/* Whether an expression uses only names, numbers and + - * / % ( ). */
bool ks_tr_plain_expr(const char *e);

/* Small shared helpers: the source bytes [from, to) verbatim; a
 * directive's name ("include"); the PP_END of the directive at i; the brace
 * depth of token i inside f's body (0 = the body's own scope). */
void ks_tr_copy_gap(ks_tr *x, int from_off, int to_off);
void ks_tr_directive(const ks_toks *ts, int i, char *buf, size_t n);
int ks_tr_pp_end(const ks_toks *ts, int i);
int ks_tr_body_depth(const ks_tr *x, const ks_cu_func *f, int i);
/* Emits f's body: '{', the gap after it, the translated tokens, the gap
 * before '}' and '}' (prologue, if any, goes right after '{'). */
void ks_tr_body(ks_tr *x, const ks_cu_func *f, const char *prologue);

/* Shared by translate_common.c and translate_rewrite.c: the concept a TODO
 * on an identifier belongs to (its own, else the block-level concept the
 * enclosing function uses; NULL: none); the identifier an expression [a, b)
 * starts from (skipping ( & * and casts; -1: none); whether token i names a
 * type. */
const char *ks_tr_concept_for(const ks_tr *x, const char *ident, int line);
int ks_tr_base_ident(const ks_toks *ts, int a, int b);
bool ks_tr_type_word(const ks_toks *ts, int i);

#endif
