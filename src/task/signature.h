/* signature.h — the C calling convention generated from a task (DESIGN.md:
 * Task): inputs as const T *restrict in declared order, then outputs, then
 * var axes as int64_t, then scalars. The shim lets the runner call any
 * kernel through one uniform entry, ks_shim_call, without libffi. */
#ifndef KS_SIGNATURE_H
#define KS_SIGNATURE_H

#include "util/util.h"

/* "void rmsnorm(const float *restrict x, ..., float eps)" */
void ks_signature_c(const ks_task *task, const char *entry, ks_buf *out);
/* A C file defining
 *   void ks_shim_call(void *const *bufs, const int64_t *axes,
 *                     const double *scalars);
 * bufs: inputs then outputs; axes: every axis in task order (const included);
 * scalars in task order. */
void ks_shim_c(const ks_task *task, const char *entry, ks_buf *out);

#endif
