/* candidate.h — one candidate file (DESIGN.md: Candidate file): source plus
 * the `// ksearch:` header (backend, entry, tunable params, launch geometry)
 * and the parameter values chosen for this evaluation. */
#ifndef KS_CANDIDATE_H
#define KS_CANDIDATE_H

#include "ksearch.h"

#define KS_MAX_PARAMS 16
#define KS_MAX_PARAM_VALUES 32
/* A parameter value is shorter than this (header and --param alike). */
#define KS_PARAM_VALUE_MAX 32
#define KS_PARAM_VALUE_MAX_TEXT "31"

typedef struct ks_param_decl {
  char name[64];
  char values[KS_MAX_PARAM_VALUES][32];
  int n_values;
} ks_param_decl;

typedef struct ks_param_value {
  char name[64];
  char value[64];
} ks_param_value;

typedef struct ks_candidate {
  char path[1024]; /* for messages; "<memory>" when built from a string */
  char backend[16];
  char entry[64];
  char launch[512]; /* raw launch line, GPU backends only */
  char *source;     /* owned */
  ks_param_decl decls[KS_MAX_PARAMS];
  int n_decls;
  ks_param_value set[KS_MAX_PARAMS]; /* values used for this build */
  int n_set;
} ks_candidate;

/* Parses the header. Defaults: backend "c", entry = default_entry. */
ks_code ks_candidate_parse(const char *source, const char *path,
                           const char *default_entry, ks_candidate *c,
                           ks_err *err);
ks_code ks_candidate_load(const char *path, const char *default_entry,
                          ks_candidate *c, ks_err *err);
/* The one rule for parameter values, which become -DNAME=VALUE: 1..31
 * characters from letters, digits, _ . + -. NULL when v passes, else what is
 * wrong ("is empty", ...). */
const char *ks_param_value_check(const char *v);
/* Sets NAME=VALUE. A declared parameter only accepts its declared values;
 * an undeclared one is accepted as a plain macro. */
ks_code ks_candidate_set_param(ks_candidate *c, const char *name,
                               const char *value, ks_err *err);
/* Declared parameters still unset take their first value. */
void ks_candidate_fill_defaults(ks_candidate *c);
const char *ks_candidate_param(const ks_candidate *c, const char *name);
/* Index of `value` among d's declared values; -1 if not declared (or "") */
int ks_param_value_index(const ks_param_decl *d, const char *value);
/* {"VEC": "8", ...} as canonical JSON text (sorted keys), owned by caller. */
char *ks_candidate_params_json(const ks_candidate *c);
/* Content hash of the source and params. */
uint64_t ks_candidate_hash(const ks_candidate *c);
void ks_candidate_free(ks_candidate *c);

#endif
