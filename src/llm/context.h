/* context.h — the facts the LLM planner's prompts quote (issue 4, prompts):
 * the task (signature, shapes, tolerances, reference), the target (roofline,
 * sandbox rules, class constraints), concepts, templates, and evaluation
 * results (status, failing workload, compiler errors, timings with speedups
 * and roofline fractions). Every text is malloc'd and bounded.
 *
 * Measured values are always printed with a decimal point ("1.250 ms",
 * "3.00x"): the call cache masks decimal numbers in its key (llm.h), so two
 * runs of the same search that measure slightly different times still ask
 * the same questions and a replay finds its answers. */
#ifndef KS_LLM_CONTEXT_H
#define KS_LLM_CONTEXT_H

#include "backend/roofline.h"
#include "search/class_spec.h"
#include "search/templates.h"

#include <jansson.h>

/* Name, statement, class, the exact C signature of the entry point, inputs,
 * outputs, scalars, workloads, tolerances, cost model and (with_reference)
 * the reference source. */
char *ks_llm_task_text(const ks_task *t, bool with_reference);
/* Name, statement and signature only. */
char *ks_llm_task_short(const ks_task *t);
/* Target facts: backend, device, ISA, threads, bandwidth and peak; what the
 * sandbox forbids; the class's math constraints. roof and spec may be NULL. */
char *ks_llm_spec_text(const char *backend, const ks_roofline *roof,
                       const ks_class_spec *spec);
/* One line per concept id, with its description when specs/concepts/ID.json
 * exists. */
char *ks_llm_concepts_text(char *const *ids, int n);
/* The task's templates as starting points (name, family, concepts). */
char *ks_llm_templates_text(const ks_template_set *tpls);
/* An evaluation result (the JSON of `ksearch eval --json`): status, error,
 * and per workload correctness, time, speedup, GB/s and roofline fraction. */
char *ks_llm_result_text(const ks_task *t, const json_t *result);
/* Per-workload timings of a result only ("none" when it was not timed). */
char *ks_llm_timings_text(const ks_task *t, const json_t *result);
/* A compiler log for a prompt: build-folder paths shortened to the file
 * name, at most max bytes (head kept: the first error matters most). */
char *ks_llm_compiler_text(const char *log, size_t max);
/* At most max bytes of s, cut on a UTF-8 boundary with a note. */
char *ks_llm_clip(const char *s, size_t max);

#endif
