/* inputs.h — deterministic input generation and output poisoning.
 * Every process that draws the inputs of (task, workload, seed) gets the same
 * bytes: the reference runner and every candidate runner (DESIGN.md:
 * Evaluation, "inputs drawn per seed"). */
#ifndef KS_INPUTS_H
#define KS_INPUTS_H

#include "ksearch.h"

/* Fills buf (numel elements of t->dtype) for the given seed, on every core
 * when the tensor has 4 or more 64 Ki-element chunks. */
void ks_inputs_fill(const ks_task *task, const ks_tensor *t,
                    const ks_workload *w, uint64_t seed, void *buf);
/* The same on at most `threads` threads (<= 0: every core): the bytes are
 * the same for any count. */
void ks_inputs_fill_threads(const ks_task *task, const ks_tensor *t,
                            const ks_workload *w, uint64_t seed, void *buf,
                            int threads);
/* Pre-fills an output with NaN (floats) or a 0xA5 byte pattern (integers),
 * so that an unwritten or read-before-written output cannot pass. */
void ks_output_poison(const ks_tensor *t, void *buf, int64_t numel);

#endif
