/* prompts.c — loading and rendering the prompt files (prompts.h). */
#include "llm/prompts.h"
#include "util/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *ks_prompts_dir(void) {
  static char dir[PATH_MAX];
  const char *env = getenv("KSEARCH_PROMPTS_DIR");
  if (env && *env)
    ks_strlcpy(dir, env, sizeof dir);
  else
    snprintf(dir, sizeof dir, "%.*s/src/llm/prompts", PATH_MAX - 32,
             ks_data_dir());
  return dir;
}

ks_code ks_prompt_load(const char *name, char **text, ks_err *err) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s.txt", ks_prompts_dir(), name);
  *text = NULL;
  if (!ks_file_exists(path))
    return ks_err_set(err, KS_ERR_ENV,
                      "%s: prompt file missing; the LLM planner reads its "
                      "prompts from <data folder>/src/llm/prompts (set "
                      "KSEARCH_HOME or KSEARCH_PROMPTS_DIR)",
                      path);
  return ks_read_file(path, text, NULL, err);
}

static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

ks_code ks_prompt_render(const char *tmpl, const char *file,
                         const ks_prompt_var *vars, int n_vars, char **out,
                         ks_err *err) {
  *out = NULL;
  ks_buf b;
  ks_buf_init(&b);
  const char *p = tmpl;
  while (*p) {
    const char *open = strstr(p, "{{");
    if (!open) {
      ks_buf_puts(&b, p);
      break;
    }
    ks_buf_append(&b, p, (size_t)(open - p));
    const char *q = open + 2;
    while (name_char(*q))
      q++;
    if (q == open + 2 || strncmp(q, "}}", 2)) {
      /* not a placeholder ("{{" in an example): keep it as it is */
      ks_buf_append(&b, open, 2);
      p = open + 2;
      continue;
    }
    size_t len = (size_t)(q - open - 2);
    int k = -1;
    for (int i = 0; i < n_vars; i++)
      if (strlen(vars[i].name) == len && !strncmp(vars[i].name, open + 2, len))
        k = i;
    if (k < 0 || !vars[k].value) {
      ks_buf_free(&b);
      return ks_err_set(err, KS_ERR_INTERNAL,
                        "%s: placeholder {{%.*s}} has no value; use one of "
                        "the placeholders this prompt is given",
                        file, (int)len, open + 2);
    }
    ks_buf_puts(&b, vars[k].value);
    p = q + 2;
  }
  *out = b.data ? b.data : ks_strdup("");
  return KS_OK;
}
