/* templates.c — see templates.h. */
#include "search/templates.h"
#include "util/util.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* family= and concepts= come from the same header lines the candidate parser
 * reads; it ignores keys it does not own, so they are read here. */
static void read_extras(ks_template *t) {
  const char *s = t->cand.source;
  while ((s = strstr(s, "// ksearch:"))) {
    const char *end = strchr(s, '\n');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char line[1024];
    if (len >= sizeof line)
      len = sizeof line - 1;
    memcpy(line, s, len);
    line[len] = 0;
    char *save = NULL;
    for (char *kv = strtok_r(line + 11, " \t", &save); kv;
         kv = strtok_r(NULL, " \t", &save)) {
      if (!strncmp(kv, "family=", 7))
        ks_strlcpy(t->family, kv + 7, sizeof t->family);
      else if (!strncmp(kv, "concepts=", 9)) {
        char *s2 = NULL;
        for (char *c = strtok_r(kv + 9, ",", &s2);
             c && t->n_concepts < KS_MAX_CONCEPTS; c = strtok_r(NULL, ",", &s2))
          ks_strlcpy(t->concepts[t->n_concepts++], c, 48);
      }
    }
    s += len;
  }
}

ks_code ks_templates_load(const ks_task *task, const char *backend,
                          ks_template_set *set, ks_err *err) {
  memset(set, 0, sizeof *set);
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.3000s/templates/%s", task->dir, backend);
  DIR *d = opendir(dir);
  char *names[256];
  int n = 0;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
      /* NAME.c, NAME.cl for OpenCL C or NAME.cu for CUDA C (editors and
       * clang-format then know the language) */
      size_t l = strlen(e->d_name);
      bool c_file = l > 2 && !strcmp(e->d_name + l - 2, ".c");
      bool cl_file = l > 3 && !strcmp(e->d_name + l - 3, ".cl");
      bool cu_file = l > 3 && !strcmp(e->d_name + l - 3, ".cu");
      if ((c_file || cl_file || cu_file) && e->d_name[0] != '.')
        names[n++] = ks_strdup(e->d_name);
    }
    closedir(d);
  }
  if (n == 0)
    return ks_err_set(
        err, KS_ERR_INPUT,
        "%s: nothing to search: task %s has no templates for backend %s. Add "
        "a tunable kernel there (a candidate file with `// ksearch: param "
        "NAME in V1,V2` lines, see docs/DESIGN.md: Candidate file), or use "
        "the LLM planner (--planner llm) once it is available",
        dir, task->name, backend);
  qsort(names, (size_t)n, sizeof *names, cmp);
  ks_code rc = KS_OK;
  for (int i = 0; i < n; i++) {
    if (!rc && set->n >= KS_MAX_TEMPLATES)
      rc = ks_err_set(err, KS_ERR_INPUT, "%s: more than %d templates", dir,
                      KS_MAX_TEMPLATES);
    if (!rc) {
      ks_template *t = &set->t[set->n];
      memset(t, 0, sizeof *t);
      char path[PATH_MAX];
      snprintf(path, sizeof path, "%.3000s/%s", dir, names[i]);
      rc = ks_candidate_load(path, task->name, &t->cand, err);
      if (!rc && strcmp(t->cand.backend, backend))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "%s: says backend=%s but lies in templates/%s; move it "
                        "or fix its header",
                        path, t->cand.backend, backend);
      if (!rc) {
        ks_strlcpy(t->name, names[i], sizeof t->name);
        *strrchr(t->name, '.') = 0; /* drop .c, .cl or .cu */
        ks_strlcpy(t->family, t->name, sizeof t->family);
        read_extras(t);
        set->n++;
      } else if (t->cand.source) {
        ks_candidate_free(&t->cand);
      }
    }
    free(names[i]);
  }
  if (rc)
    ks_templates_free(set);
  return rc;
}

void ks_templates_free(ks_template_set *set) {
  for (int i = 0; i < set->n; i++)
    ks_candidate_free(&set->t[i].cand);
  set->n = 0;
}

const ks_template *ks_templates_find(const ks_template_set *set,
                                     const char *name) {
  for (int i = 0; i < set->n; i++)
    if (!strcmp(set->t[i].name, name))
      return &set->t[i];
  return NULL;
}

double ks_template_space(const ks_template *t) {
  double n = 1;
  for (int i = 0; i < t->cand.n_decls; i++)
    n *= t->cand.decls[i].n_values;
  return n;
}
