/* edits.h — what a model may change in the world model, and the answer
 * formats of the LLM planner's world-model prompts (issue 4: init, propose,
 * refine, too_hard). The world model itself validates every edit
 * (ks_wm_apply_json, all or nothing, messages naming ops[i]); this layer adds
 * the rules of the planner: only ksearch decides solved/running and records
 * solutions, attempts and evidence; init only inserts; a script has at most
 * KS_LLM_MAX_OPS operations. Errors are sentences a re-ask can quote. */
#ifndef KS_LLM_EDITS_H
#define KS_LLM_EDITS_H

#include "search/world_model.h"

#define KS_LLM_MAX_OPS 40

/* The parts of a world-model answer: {"reflection"?, "analysis"?, "ops"} or
 * a bare array of ops. */
typedef struct ks_llm_edit_answer {
  json_t *ops;      /* borrowed from the answer; an array */
  char *reflection; /* malloc'd; "" when absent */
  char *analysis;   /* malloc'd text of "analysis" (string or object) */
} ks_llm_edit_answer;
void ks_llm_edit_answer_free(ks_llm_edit_answer *a);

/* Reads the answer's shape; require_reflection makes a missing or empty
 * "reflection" an error. */
ks_code ks_llm_edit_answer_read(const json_t *answer, bool require_reflection,
                                ks_llm_edit_answer *out, ks_err *err);
/* Checks the planner rules (see above; inserts_only for init) and applies
 * the script all or nothing. */
ks_code ks_llm_apply_edits(ks_wm *wm, const json_t *ops, bool inserts_only,
                           ks_err *err);

#endif
