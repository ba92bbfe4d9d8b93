/* templates.h — the tunable templates of a task (DESIGN.md: Vocabulary,
 * template): every <task>/templates/<backend>/NAME.c is a candidate file whose
 * `// ksearch: param` lines declare the search space, plus `family=` (the
 * algorithmic family, the first decision of a plan) and `concepts=` (ids of
 * the concept catalogue it uses). A user drops a file there and `ksearch run`
 * searches it: bring-your-own tunable kernel, as with Kernel Tuner. */
#ifndef KS_TEMPLATES_H
#define KS_TEMPLATES_H

#include "eval/candidate.h"

#define KS_MAX_TEMPLATES 32
#define KS_MAX_CONCEPTS 16

typedef struct ks_template {
  char name[64];   /* file name without .c */
  char family[64]; /* `family=`, else the name */
  char concepts[KS_MAX_CONCEPTS][48];
  int n_concepts;
  ks_candidate cand; /* parsed file; params declared, none set */
} ks_template;

typedef struct ks_template_set {
  int n;
  ks_template t[KS_MAX_TEMPLATES];
} ks_template_set;

/* Loads <task dir>/templates/<backend>/NAME.c (sorted by name). No templates is
 * KS_ERR_INPUT with what to do about it. */
ks_code ks_templates_load(const ks_task *task, const char *backend,
                          ks_template_set *set, ks_err *err);
void ks_templates_free(ks_template_set *set);
const ks_template *ks_templates_find(const ks_template_set *set,
                                     const char *name);
/* Number of distinct parameter combinations of one template. */
double ks_template_space(const ks_template *t);

#endif
