/* seed.h — `ksearch run --seed-cuda FILE.cu` (DESIGN.md: Spec and concept
 * catalogue): the concepts the CUDA analyzer finds in a kernel become
 * knowledge for the planners. The built-in planner raises the priority of
 * plans (template families and later decisions) whose concepts the CUDA
 * kernel uses and records the mapping in the root's notes; the LLM planner
 * can put the same notes and the CUDA source into its prompts. */
#ifndef KS_SPEC_SEED_H
#define KS_SPEC_SEED_H

#include "ksearch.h"

#define KS_SEED_MAX 64

typedef struct ks_spec_seed {
  char path[1024];
  int n;
  char concept[KS_SEED_MAX][48]; /* detected concept ids, catalogue order */
  int line[KS_SEED_MAX];         /* first line of each in the CUDA file */
  /* what raises plans: the detected concepts that are not generic (a
   * concept's "seed": {"generic": true}, e.g. thread_parallel: every kernel
   * has it) plus the concepts that carry them on the CPU side ("related") */
  int n_boost;
  char boost[KS_SEED_MAX][48];
  char *source; /* the CUDA file */
  char *notes;  /* the mapping in words: concept, lines, form on backend */
} ks_spec_seed;

/* Reads and analyzes path; the notes give each concept's form on backend
 * ("c", "opencl", "mlx"/"metal"). KS_ERR_INPUT (naming the file) when it is
 * not CUDA. */
ks_code ks_spec_seed_load(const char *path, const char *backend,
                          ks_spec_seed **out, ks_err *err);
void ks_spec_seed_free(ks_spec_seed *s);
/* Whether concept_id raises plans (see boost). */
bool ks_spec_seed_has(const ks_spec_seed *s, const char *concept_id);
/* Priority bonus for a plan step with these concepts: 0.15 per concept
 * that raises plans, at most 0.3; 0 when s is NULL. */
double ks_spec_seed_bonus(const ks_spec_seed *s, const char *const *concepts,
                          int n);

#endif
