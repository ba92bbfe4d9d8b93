/* class_spec.h — specs/classes/<class>.json: for one kernel class, the
 * decisions a plan makes in order (the first picks the template, the others
 * name template parameters), the initial priority of each decision in each
 * bottleneck regime, and the math constraints (DESIGN.md: Spec). The
 * built-in planner grows the world model one decision per tree level. */
#ifndef KS_CLASS_SPEC_H
#define KS_CLASS_SPEC_H

#include "ksearch.h"

#define KS_MAX_DECISIONS 12
#define KS_MAX_DECISION_PARAMS 4

typedef enum {
  KS_REGIME_MEMORY,
  KS_REGIME_COMPUTE,
  KS_REGIME_LATENCY,
  KS_REGIME_COUNT
} ks_regime;
const char *ks_regime_name(ks_regime r);

typedef struct ks_decision {
  char name[64];
  bool is_template;
  char params[KS_MAX_DECISION_PARAMS][64];
  int n_params;
  char concepts[4][48];
  int n_concepts;
  char description[256];
  double priority[KS_REGIME_COUNT];
  /* "start": the value a family's first attempt gives params[k] when the
   * template offers it ("" = the template's first value): the class's prior
   * for decisions whose best choice does not depend on the workload */
  char start[KS_MAX_DECISION_PARAMS][32];
} ks_decision;

typedef struct ks_class_spec {
  char klass[64];
  char path[1024]; /* "" when built from defaults */
  int n_decisions;
  ks_decision d[KS_MAX_DECISIONS];
  char constraints[8][256];
  int n_constraints;
} ks_class_spec;

/* Loads specs/classes/<klass>.json from the data folder; a missing file
 * gives the default spec (template, then no named decisions) and KS_OK; a
 * malformed one is KS_ERR_INPUT naming the field. */
ks_code ks_class_spec_load(const char *klass, ks_class_spec *spec, ks_err *err);
/* Index of a parameter among d->params, -1 if d does not name it. */
int ks_class_spec_param_index(const ks_decision *d, const char *param);
/* Index of the decision that owns a parameter, -1 if none. */
int ks_class_spec_decision_of(const ks_class_spec *spec, const char *param);

#endif
