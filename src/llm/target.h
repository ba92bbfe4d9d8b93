/* target.h — what the LLM coder must know about each backend (DESIGN.md:
 * LLM planner and coder, "backends"): one row per backend in a table (the
 * code fence to ask for, how ksearch builds and times the file, the
 * candidate header and launch-line format, the kernel argument convention),
 * the target text of the prompts (those rows plus the facts of
 * specs/targets/, the measured roofline, the task's device baseline, the
 * class's concepts in their native form here and the CUDA seed's mapping),
 * and the check of a coder answer before any compiler runs (header, launch
 * lines for every workload, entry kernel defined, the target's primitive
 * rules).
 *
 * Adding a backend to the LLM coder is adding a row to k_backends in
 * target.c (the MLX backend of branch mlx plugs in there: fence "python",
 * its `mx.fast.*_kernel` body conventions as `format`, grid in threads). */
#ifndef KS_LLM_TARGET_H
#define KS_LLM_TARGET_H

#include "backend/roofline.h"
#include "eval/candidate.h"
#include "llm/precheck.h"
#include "search/class_spec.h"
#include "spec/seed.h"

typedef enum ks_llm_launch_style {
  KS_LLM_LAUNCH_NONE,  /* c: the entry is called with host pointers */
  KS_LLM_LAUNCH_LOCAL, /* opencl: global=/local= work-items */
  KS_LLM_LAUNCH_GRID,  /* cuda: grid= blocks, block= threads */
  KS_LLM_LAUNCH_MLX    /* mlx: grid= threads, threadgroup= threads, body */
} ks_llm_launch_style;

typedef struct ks_llm_backend {
  const char *name;   /* the backend ("c", "opencl", "cuda", "mlx") */
  const char *fence;  /* language of the code block asked for */
  const char *target; /* specs/targets short name (spec/spec.h) */
  const char *build;  /* how ksearch builds, runs and times the file */
  const char *format; /* the candidate file: header, launch, arguments */
  ks_llm_launch_style launch;
} ks_llm_backend;

/* The row of a backend; NULL when the LLM coder cannot write for it yet. */
const ks_llm_backend *ks_llm_backend_find(const char *name);

/* What the target text is drawn from; roof, spec, seed may be NULL. */
typedef struct ks_llm_target_in {
  const ks_llm_backend *be;
  const ks_task *task;
  const ks_roofline *roof;
  const ks_class_spec *spec;
  const ks_spec_seed *seed;
} ks_llm_target_in;

/* The "Target" section of the prompts; malloc'd. */
char *ks_llm_target_text(const ks_llm_target_in *in);

/* The concepts of a plan step, each with its native form on the backend
 * and what has no direct equivalent there; malloc'd. */
char *ks_llm_concept_forms_text(char *const *ids, int n, const char *backend);

/* Checks a coder answer (header already ensured) before any compiler:
 * the header parses as a candidate of this backend (`backend=` the run's),
 * GPU backends name launch lines in their style that evaluate within the
 * device limits on every workload of the backend's device class and
 * define the kernels they launch, and the target's primitive rules pass.
 * Returns the number of violations (up to max filled in v); 0 with *cand
 * parsed (caller frees). A violation's ident is "(header)" for header
 * problems. */
int ks_llm_check_answer(const ks_llm_backend *be, const ks_task *task,
                        const char *src, const char *path, ks_candidate *cand,
                        ks_llm_violation *v, int max);

#endif
