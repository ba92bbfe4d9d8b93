/* precheck.h — a first, small version of the spec validator's primitive check
 * (DESIGN.md: Spec, "the validator rejects a candidate calling a primitive
 * the target lacks, before any compiler runs"), for the C target only, used
 * by the LLM planner until src/spec/validator.h lands: calls the sandbox would
 * kill anyway (processes, exec, shells, sockets, threads of their own, file
 * writes, raw system calls, dynamic loading) and inline assembly. A
 * rejection costs no compile and no evaluation; its list goes into the next
 * debug prompt. Same shape as ks_spec_validate so the switch is one line. */
#ifndef KS_LLM_PRECHECK_H
#define KS_LLM_PRECHECK_H

#include "ksearch.h"

typedef struct ks_llm_violation {
  int line;
  char ident[64];
  char suggestion[128];
} ks_llm_violation;

/* Fills up to max violations; *n_out is how many there are (may exceed
 * max). Targets other than "c" (or "c/...") are not checked (*n_out 0).
 * Comments, string literals and #include lines are not code. */
ks_code ks_llm_precheck(const char *target, const char *source,
                        ks_llm_violation *out, int max, int *n_out,
                        ks_err *err);

#endif
