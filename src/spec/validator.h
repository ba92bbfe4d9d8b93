/* validator.h — rejects primitives a target lacks before any compiler runs
 * (DESIGN.md: Spec and concept catalogue). The code is tokenized (comments,
 * strings and character literals skipped; preprocessor lines understood) and
 * every identifier, qualified name, inline-assembly mnemonic, punctuator and
 * #include is checked against the target's rules in specs/targets: CUDA
 * primitives (__shfl_sync, __syncthreads, threadIdx) in C or OpenCL, cp.async
 * on Metal, simd_shuffle in OpenCL, sub_group_reduce_add without its
 * extension pragma, fork/exec/system/socket/pthread_create in C (the sandbox
 * forbids them anyway), intrinsics of an ISA this machine lacks. Each
 * violation names the nearest valid alternative. Both planners call it. */
#ifndef KS_SPEC_VALIDATOR_H
#define KS_SPEC_VALIDATOR_H

#include "ksearch.h"

typedef struct ks_spec_violation {
  int line;
  char ident[64];
  char suggestion[128];
} ks_spec_violation;

/* target: "c", "opencl", "cuda", "metal" (or a specs/targets id such as
 * "opencl-pocl-cpu" or "mlx"). Returns KS_OK; *n_out = number of violations
 * (0 = clean), at most max, one per (line, identifier), in source order.
 * KS_ERR_INPUT when the target is unknown or the source cannot be tokenized
 * (an unterminated comment or literal: the message names the line). */
ks_code ks_spec_validate(const char *target, const char *source,
                         ks_spec_violation *out, int max, int *n_out,
                         ks_err *err);

#endif
