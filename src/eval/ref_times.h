/* ref_times.h — the reference's timings stored beside its outputs
 * (DESIGN.md: Evaluation, "Reference timing").
 *
 * The speedup's base is the anchor timed beside every candidate; the
 * evaluator's own figure of the reference only sizes time limits and the
 * anchor's share, and stands in where the anchor could not run. So the
 * reference is timed once per (reference folder, machine, thread count)
 * and the figures are kept in the reference folder; later evaluators read
 * them and run the reference only for outputs that are not cached yet. */
#ifndef KS_EVAL_REF_TIMES_H
#define KS_EVAL_REF_TIMES_H

#include "ksearch.h"

#include <stdbool.h>

/* The file of this machine and thread count in ref_dir. */
void ks_ref_times_path(const char *ref_dir, int threads, char *path, size_t n);

/* Reads the stored figures of every workload not skipped. false (and
 * nothing filled) when the file is missing, unreadable or lacks one. */
bool ks_ref_times_load(const char *path, const ks_task *task, const bool *skip,
                       double *median_ns, double *min_ns);

/* Writes the figures of the workloads not skipped (temp file + rename). */
ks_code ks_ref_times_save(const char *path, const ks_task *task,
                          const bool *skip, const double *median_ns,
                          const double *min_ns, ks_err *err);

#endif
