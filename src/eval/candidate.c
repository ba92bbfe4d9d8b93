/* candidate.c — parsing the `// ksearch:` header of a candidate file.
 *
 * The header is plain comments so that the file stays one a person can read,
 * copy and compile by hand (DESIGN.md: Candidate file). Parameters reach the
 * code as -D macros at build time, so a header value and a --param value
 * pass the same check (ks_param_value_check) before they reach a compiler's
 * command line.
 */
#include "eval/candidate.h"
#include "util/util.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = 0;
  return s;
}

const char *ks_param_value_check(const char *v) {
  if (!v || !*v)
    return "is empty";
  size_t n = strlen(v);
  if (n >= KS_PARAM_VALUE_MAX)
    return "is longer than " KS_PARAM_VALUE_MAX_TEXT " characters";
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)v[i];
    if (!(isalnum(ch) || ch == '_' || ch == '.' || ch == '+' || ch == '-'))
      return "has a character other than letters, digits, _ . + -";
  }
  return NULL;
}

static ks_code parse_line(ks_candidate *c, char *line, int lineno,
                          ks_err *err) {
  char *p = trim(line);
  if (!strncmp(p, "param ", 6)) {
    p = trim(p + 6);
    char *in = strstr(p, " in ");
    size_t pl = strlen(p);
    if (!in && pl > 3 && !strcmp(p + pl - 3, " in"))
      in = p + pl - 3; /* "NAME in" with no values: reported below */
    if (!in)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s:%d: param line must read `// ksearch: param NAME "
                        "in V1,V2,...`",
                        c->path, lineno);
    bool no_values = in[3] == 0;
    *in = 0;
    char *name = trim(p), *vals = no_values ? in + 3 : trim(in + 4);
    if (!ks_is_c_ident(name) || strlen(name) >= 64)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s:%d: parameter name \"%s\" must be a C identifier "
                        "(it becomes a -D macro)",
                        c->path, lineno, name);
    if (c->n_decls >= KS_MAX_PARAMS)
      return ks_err_set(err, KS_ERR_INPUT, "%s:%d: more than %d parameters",
                        c->path, lineno, KS_MAX_PARAMS);
    for (int i = 0; i < c->n_decls; i++)
      if (!strcmp(c->decls[i].name, name))
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s:%d: parameter %s declared twice", c->path, lineno,
                          name);
    ks_param_decl *d = &c->decls[c->n_decls];
    memset(d, 0, sizeof *d);
    ks_strlcpy(d->name, name, sizeof d->name);
    /* split by hand: strtok would hide an empty value ("8,,16") */
    for (char *v = vals; v && *vals;) {
      char *comma = strchr(v, ',');
      if (comma)
        *comma = 0;
      v = trim(v);
      if (d->n_values >= KS_MAX_PARAM_VALUES)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s:%d: parameter %s: at most %d values", c->path,
                          lineno, name, KS_MAX_PARAM_VALUES);
      const char *why = ks_param_value_check(v);
      if (why)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s:%d: parameter %s: value \"%.40s\" %s; values "
                          "are short tokens (numbers or identifiers) "
                          "separated by single commas",
                          c->path, lineno, name, v, why);
      if (ks_param_value_index(d, v) >= 0)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s:%d: parameter %s lists %s twice; list each "
                          "value once",
                          c->path, lineno, name, v);
      ks_strlcpy(d->values[d->n_values++], v, 32);
      v = comma ? comma + 1 : NULL;
    }
    if (d->n_values == 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s:%d: parameter %s has no values; list at least one "
                        "after `in`",
                        c->path, lineno, name);
    c->n_decls++;
    return KS_OK;
  }
  if (!strncmp(p, "launch ", 7)) {
    ks_strlcpy(c->launch, trim(p + 7), sizeof c->launch);
    return KS_OK;
  }
  /* cuda: TMA tensor maps, read by backend/cuda/tensormap.c */
  if (!strncmp(p, "tensormap ", 10))
    return KS_OK;
  /* mlx: the line between a kernel's helpers (header) and its body */
  if (!strcmp(trim(p), "body"))
    return KS_OK;
  /* key=value pairs: backend=c entry=rmsnorm */
  char *save = NULL;
  for (char *kv = strtok_r(p, " \t", &save); kv;
       kv = strtok_r(NULL, " \t", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s:%d: cannot read \"%s\" in the ksearch header; "
                        "expected key=value, `param NAME in ...`, `launch "
                        "...` or `tensormap ...`",
                        c->path, lineno, kv);
    *eq = 0;
    const char *k = kv, *v = eq + 1;
    if (!ks_is_c_ident(k))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s:%d: \"%.40s=\" in the ksearch header: the key "
                        "must be a word such as backend or entry",
                        c->path, lineno, k);
    if (!strcmp(k, "backend"))
      ks_strlcpy(c->backend, v, sizeof c->backend);
    else if (!strcmp(k, "entry")) {
      if (!ks_is_c_ident(v))
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s:%d: entry \"%s\" must be a C identifier", c->path,
                          lineno, v);
      ks_strlcpy(c->entry, v, sizeof c->entry);
    }
    /* other keys (task=, expect=) are for tools and tests; ignored here */
  }
  return KS_OK;
}

ks_code ks_candidate_parse(const char *source, const char *path,
                           const char *default_entry, ks_candidate *c,
                           ks_err *err) {
  memset(c, 0, sizeof *c);
  ks_strlcpy(c->path, path ? path : "<memory>", sizeof c->path);
  strcpy(c->backend, "c");
  ks_strlcpy(c->entry, default_entry ? default_entry : "", sizeof c->entry);
  c->source = ks_strdup(source);
  const char *s = source;
  int lineno = 0;
  while (*s) {
    lineno++;
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    const char *q = s;
    while (q < s + len && isspace((unsigned char)*q))
      q++;
    /* `# ksearch:` too: an MLX ops candidate is Python */
    size_t pre =
        (size_t)(s + len - q) > 11 && !strncmp(q, "// ksearch:", 11)  ? 11
        : (size_t)(s + len - q) > 10 && !strncmp(q, "# ksearch:", 10) ? 10
                                                                      : 0;
    if (pre) {
      char line[1024];
      size_t l = (size_t)(s + len - (q + pre));
      if (l >= sizeof line)
        l = sizeof line - 1;
      memcpy(line, q + pre, l);
      line[l] = 0;
      if (parse_line(c, line, lineno, err)) {
        ks_candidate_free(c);
        return KS_ERR_INPUT;
      }
    }
    s += len + (nl ? 1 : 0);
  }
  if (!c->entry[0]) {
    ks_candidate_free(c);
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: no entry point; add `// ksearch: backend=c "
                      "entry=NAME`",
                      path ? path : "<memory>");
  }
  return KS_OK;
}

ks_code ks_candidate_load(const char *path, const char *default_entry,
                          ks_candidate *c, ks_err *err) {
  char *text;
  size_t len = 0;
  if (ks_read_file(path, &text, &len, err))
    return err->code;
  const char *nul = memchr(text, 0, len);
  if (nul) { /* the C string would end there and hide the rest */
    int line = 1;
    for (const char *p = text; p < nul; p++)
      line += *p == '\n';
    free(text);
    memset(c, 0, sizeof *c);
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s:%d: NUL byte (0x00); a candidate is a text file, "
                      "remove it",
                      path, line);
  }
  ks_code rc = ks_candidate_parse(text, path, default_entry, c, err);
  free(text);
  return rc;
}

ks_code ks_candidate_set_param(ks_candidate *c, const char *name,
                               const char *value, ks_err *err) {
  if (!ks_is_c_ident(name) || strlen(name) >= 64)
    return ks_err_set(err, KS_ERR_INPUT,
                      "--param %s: the name must be a C identifier", name);
  const char *why = ks_param_value_check(value);
  if (why)
    return ks_err_set(err, KS_ERR_INPUT,
                      "--param %s=%.40s: the value %s; values are short "
                      "tokens (numbers or identifiers)",
                      name, value, why);
  for (int i = 0; i < c->n_decls; i++) {
    if (strcmp(c->decls[i].name, name))
      continue;
    if (ks_param_value_index(&c->decls[i], value) < 0) {
      ks_buf b;
      ks_buf_init(&b);
      for (int k = 0; k < c->decls[i].n_values; k++)
        ks_buf_printf(&b, "%s%s", k ? "," : "", c->decls[i].values[k]);
      ks_err_set(err, KS_ERR_INPUT,
                 "--param %s=%s: %s declares %s in %s; pick one of those", name,
                 value, c->path, name, b.data);
      ks_buf_free(&b);
      return KS_ERR_INPUT;
    }
  }
  for (int i = 0; i < c->n_set; i++)
    if (!strcmp(c->set[i].name, name)) {
      ks_strlcpy(c->set[i].value, value, sizeof c->set[i].value);
      return KS_OK;
    }
  if (c->n_set >= KS_MAX_PARAMS)
    return ks_err_set(err, KS_ERR_INPUT, "more than %d parameters",
                      KS_MAX_PARAMS);
  ks_strlcpy(c->set[c->n_set].name, name, 64);
  ks_strlcpy(c->set[c->n_set].value, value, 64);
  c->n_set++;
  return KS_OK;
}

const char *ks_candidate_param(const ks_candidate *c, const char *name) {
  for (int i = 0; i < c->n_set; i++)
    if (!strcmp(c->set[i].name, name))
      return c->set[i].value;
  return NULL;
}

void ks_candidate_fill_defaults(ks_candidate *c) {
  for (int i = 0; i < c->n_decls; i++)
    if (!ks_candidate_param(c, c->decls[i].name))
      ks_candidate_set_param(c, c->decls[i].name, c->decls[i].values[0], NULL);
}

char *ks_candidate_params_json(const ks_candidate *c) {
  json_t *o = json_object();
  for (int i = 0; i < c->n_set; i++)
    json_object_set_new(o, c->set[i].name, json_string(c->set[i].value));
  char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
  json_decref(o);
  return s;
}

uint64_t ks_candidate_hash(const ks_candidate *c) {
  char *pj = ks_candidate_params_json(c);
  uint64_t h = ks_hash_str(c->source, ks_hash_str(pj, 7));
  free(pj);
  return h;
}

void ks_candidate_free(ks_candidate *c) {
  free(c->source);
  c->source = NULL;
}

int ks_param_value_index(const ks_param_decl *d, const char *value) {
  for (int i = 0; value && *value && i < d->n_values; i++)
    if (!strcmp(d->values[i], value))
      return i;
  return -1;
}
