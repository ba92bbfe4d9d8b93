/* rules.h — one identifier against a target's rules, for the translator:
 * the validator's matching (validator.c) applied to token i alone. */
#ifndef KS_SPEC_RULES_H
#define KS_SPEC_RULES_H

#include "spec/lexer.h"
#include "spec/spec.h"

/* The rule that rejects identifier token i on target t (extension pragmas
 * count as absent), or NULL; *what receives the matched name ("threadIdx.x",
 * "wmma::mma_sync") and why the suggestion. */
const ks_spec_rule *ks_spec_rule_at(const ks_spec_target *t, const ks_toks *ts,
                                    int i, char *what, size_t wn, char *why,
                                    size_t yn);

#endif
