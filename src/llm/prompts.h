/* prompts.h — the LLM planner's prompts are text files with {{placeholders}}
 * (src/llm/prompts/NAME.txt), not strings in C, so they can be read, diffed
 * and tuned without a rebuild. They are found at run time in
 * $KSEARCH_PROMPTS_DIR, else <data folder>/src/llm/prompts (ks_data_dir():
 * the repository root when running build/ksearch). A prompt names each of
 * its placeholders exactly; rendering fails (naming the file and the
 * placeholder) when one has no value, so a typo never reaches a model. */
#ifndef KS_LLM_PROMPTS_H
#define KS_LLM_PROMPTS_H

#include "ksearch.h"

typedef struct ks_prompt_var {
  const char *name; /* without braces */
  const char *value;
} ks_prompt_var;

/* The folder prompts are read from (see above). */
const char *ks_prompts_dir(void);
/* Reads NAME.txt from ks_prompts_dir(); a missing file is KS_ERR_ENV naming
 * the path and KSEARCH_PROMPTS_DIR. */
ks_code ks_prompt_load(const char *name, char **text, ks_err *err);
/* Replaces every {{name}} of tmpl by its value (inserted verbatim, never
 * expanded again); `file` names the template in messages. */
ks_code ks_prompt_render(const char *tmpl, const char *file,
                         const ks_prompt_var *vars, int n_vars, char **out,
                         ks_err *err);

#endif
