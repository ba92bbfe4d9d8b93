/* cuda_analyze.h — finds the catalogue's concepts in CUDA source (DESIGN.md:
 * Spec and concept catalogue). Each concept's detection patterns
 * (identifiers, prefixes, regular expressions over the token text, PTX
 * mnemonics in inline assembly) are matched against the tokens of a .cu
 * file; every hit names its line and what matched. `ksearch translate`
 * reports them with their target forms, and `ksearch run --seed-cuda`
 * raises the priority of plans that use them. */
#ifndef KS_SPEC_CUDA_ANALYZE_H
#define KS_SPEC_CUDA_ANALYZE_H

#include "spec/cuda_model.h"
#include "spec/spec.h"

typedef struct ks_cuda_hit {
  const ks_concept *concept;
  int line;
  char evidence[96]; /* the text that matched */
} ks_cuda_hit;

typedef struct ks_cuda_report {
  int n_hits;
  ks_cuda_hit *hits; /* catalogue order, then line; one per (concept, line) */
} ks_cuda_report;

/* Analyzes a parsed model against the catalogue. */
ks_code ks_cuda_analyze_model(const ks_cu_model *m, const ks_concept_set *cs,
                              ks_cuda_report *out, ks_err *err);
/* Reads and parses path (KS_ERR_INPUT with the reason when it is not CUDA)
 * and analyzes it against the loaded catalogue. */
ks_code ks_cuda_analyze_file(const char *path, ks_cuda_report *out,
                             ks_err *err);
void ks_cuda_report_free(ks_cuda_report *r);

/* Distinct concepts of a report, in catalogue order; returns the count. */
int ks_cuda_report_concepts(const ks_cuda_report *r, const ks_concept **out,
                            int max);
/* The first line a concept was seen on, 0 if never. */
int ks_cuda_report_line(const ks_cuda_report *r, const char *concept_id);
/* The concept whose identifier-like pattern matches ident (for translator
 * TODO marks), or NULL. */
const ks_concept *ks_cuda_concept_of_ident(const ks_concept_set *cs,
                                           const char *ident);

#endif
