/* concepts.c — loading the concept catalogue, specs/concepts/<id>.json (see
 * spec.h). Each file is checked once: an id equal to its file name, a name,
 * the kernel classes it helps, CUDA detection patterns that compile, a form
 * for each of opencl, metal and c, and caveats. */
#include "spec/spec.h"
#include "util/util.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *key;
  ks_detect_kind kind;
} k_detect_keys[] = {{"ident", KS_DETECT_IDENT},
                     {"prefix", KS_DETECT_PREFIX},
                     {"ident_regex", KS_DETECT_IDENT_REGEX},
                     {"regex", KS_DETECT_REGEX},
                     {"ptx", KS_DETECT_PTX}};

static ks_code parse_detect(const json_t *v, const char *path, size_t i,
                            ks_detect *d, ks_err *err) {
  memset(d, 0, sizeof *d);
  int found = 0;
  for (size_t k = 0; k < sizeof k_detect_keys / sizeof *k_detect_keys; k++) {
    const char *m = json_string_value(json_object_get(v, k_detect_keys[k].key));
    if (m) {
      d->kind = k_detect_keys[k].kind;
      ks_strlcpy(d->pattern, m, sizeof d->pattern);
      found++;
    }
  }
  if (found != 1)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: cuda.detect[%zu]: needs exactly one of ident, "
                      "prefix, ident_regex, regex, ptx",
                      path, i);
  if (d->kind == KS_DETECT_REGEX || d->kind == KS_DETECT_IDENT_REGEX) {
    int flags = REG_EXTENDED | REG_NEWLINE;
    if (json_is_true(json_object_get(v, "icase")))
      flags |= REG_ICASE;
    regex_t *re = ks_xmalloc(sizeof *re);
    int rc = regcomp(re, d->pattern, flags);
    if (rc) {
      char msg[128];
      regerror(rc, re, msg, sizeof msg);
      free(re);
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: cuda.detect[%zu]: bad regular expression \"%s\": "
                        "%s (POSIX extended syntax)",
                        path, i, d->pattern, msg);
    }
    d->re = re;
  }
  return KS_OK;
}

static void concept_clear(ks_concept *c) {
  for (int i = 0; i < c->n_detect; i++)
    if (c->detect[i].re) {
      regfree(c->detect[i].re);
      free(c->detect[i].re);
    }
  free(c->detect);
  json_decref(c->json);
  memset(c, 0, sizeof *c);
}

static ks_code need_string(const json_t *o, const char *key, const char *path,
                           const char *where, ks_err *err) {
  const char *s = json_string_value(json_object_get(o, key));
  if (!s || !*s)
    return ks_err_set(err, KS_ERR_INPUT, "%s: %s%s: missing text", path, where,
                      key);
  return KS_OK;
}

static ks_code concept_load(const char *path, const char *id, ks_concept *c,
                            ks_err *err) {
  memset(c, 0, sizeof *c);
  json_error_t je;
  c->json = json_load_file(path, 0, &je);
  if (!c->json)
    return ks_err_set(err, KS_ERR_INPUT, "%s: line %d: %s", path, je.line,
                      je.text);
  const json_t *j = c->json;
  const char *jid = json_string_value(json_object_get(j, "id"));
  ks_code rc = KS_OK;
  if (!jid || strcmp(jid, id))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: id: \"%s\" must equal the file name \"%s\"", path,
                    jid ? jid : "(missing)", id);
  if (!rc)
    rc = need_string(j, "name", path, "", err);
  if (!rc)
    rc = need_string(j, "summary", path, "", err);
  if (!rc && (!json_is_array(json_object_get(j, "classes")) ||
              !json_array_size(json_object_get(j, "classes"))))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: classes: list the kernel classes it helps "
                    "(row_reduction, softmax, scan, attention, matmul, ...)",
                    path);
  const json_t *forms = json_object_get(j, "forms");
  static const char *const k_backends[] = {"cuda", "opencl", "metal", "c"};
  for (size_t b = 0; !rc && b < 4; b++) {
    const json_t *f = json_object_get(forms, k_backends[b]);
    char where[64];
    snprintf(where, sizeof where, "forms.%s.", k_backends[b]);
    rc = need_string(f, "form", path, where, err);
  }
  if (!rc && !json_is_array(json_object_get(j, "caveats")))
    rc = ks_err_set(err, KS_ERR_INPUT, "%s: caveats: missing list", path);
  const json_t *det = json_object_get(json_object_get(j, "cuda"), "detect");
  if (!rc && (!json_is_array(det) || !json_array_size(det)))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: cuda.detect: list at least one pattern that finds "
                    "the concept in CUDA source",
                    path);
  if (!rc) {
    c->detect = ks_xcalloc(json_array_size(det), sizeof *c->detect);
    size_t i;
    json_t *v;
    json_array_foreach(det, i, v) {
      rc = parse_detect(v, path, i, &c->detect[c->n_detect], err);
      if (rc)
        break;
      c->n_detect++;
    }
  }
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(j, "no_direct_equivalent"), i, v) {
    if (rc)
      break;
    char where[64];
    snprintf(where, sizeof where, "no_direct_equivalent[%zu].", i);
    rc = need_string(v, "target", path, where, err);
    if (!rc)
      rc = need_string(v, "what", path, where, err);
    if (!rc)
      rc = need_string(v, "alternative", path, where, err);
  }
  if (rc) {
    concept_clear(c);
    return rc;
  }
  ks_strlcpy(c->id, id, sizeof c->id);
  ks_strlcpy(c->name, json_string_value(json_object_get(j, "name")),
             sizeof c->name);
  return KS_OK;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static ks_code set_load(ks_concept_set *s, ks_err *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "%.1000s/concepts", ks_spec_dir());
  DIR *d = opendir(s->dir);
  if (!d)
    return ks_err_set(err, KS_ERR_ENV,
                      "%s: cannot open the concept catalogue; set "
                      "KSEARCH_HOME to the folder holding specs/",
                      s->dir);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") || e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      names = realloc(names, cap * sizeof *names);
      if (!names)
        abort();
    }
    names[n++] = ks_strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  s->c = ks_xcalloc(n ? n : 1, sizeof *s->c);
  ks_code rc = KS_OK;
  for (size_t i = 0; i < n; i++) {
    if (!rc) {
      char path[PATH_MAX], id[64];
      snprintf(path, sizeof path, "%.2000s/%s", s->dir, names[i]);
      size_t l = strlen(names[i]) - 5; /* without ".json" */
      if (l >= sizeof id)
        l = sizeof id - 1;
      memcpy(id, names[i], l);
      id[l] = 0;
      rc = concept_load(path, id, &s->c[s->n], err);
      if (!rc)
        s->n++;
    }
    free(names[i]);
  }
  free(names);
  if (!rc && s->n == 0)
    rc = ks_err_set(err, KS_ERR_ENV, "%s: holds no concept (*.json)", s->dir);
  if (rc) {
    for (int i = 0; i < s->n; i++)
      concept_clear(&s->c[i]);
    free(s->c);
    memset(s, 0, sizeof *s);
  }
  return rc;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static ks_concept_set g_set;
static bool g_loaded;

ks_code ks_concepts_get(const ks_concept_set **out, ks_err *err) {
  pthread_mutex_lock(&g_lock);
  ks_code rc = KS_OK;
  if (!g_loaded) {
    rc = set_load(&g_set, err);
    g_loaded = rc == KS_OK;
  }
  pthread_mutex_unlock(&g_lock);
  if (!rc)
    *out = &g_set;
  return rc;
}

const ks_concept *ks_concept_find(const ks_concept_set *s, const char *id) {
  for (int i = 0; s && i < s->n; i++)
    if (!strcmp(s->c[i].id, id))
      return &s->c[i];
  return NULL;
}

const char *ks_concept_form(const ks_concept *c, const char *backend) {
  const json_t *f = json_object_get(json_object_get(c->json, "forms"), backend);
  return json_string_value(json_object_get(f, "form"));
}

const json_t *ks_concept_gap(const ks_concept *c, const char *target_id,
                             const char *backend) {
  const json_t *gaps = json_object_get(c->json, "no_direct_equivalent");
  const json_t *by_backend = NULL;
  size_t i;
  json_t *v;
  json_array_foreach(gaps, i, v) {
    const char *t = json_string_value(json_object_get(v, "target"));
    if (t && target_id && !strcmp(t, target_id))
      return v;
    if (t && backend && !strcmp(t, backend) && !by_backend)
      by_backend = v;
  }
  return by_backend;
}
