/* target.c — loading specs/targets/<id>.json (see spec.h): "extends"
 * merging, the check that every fact names its source, the validator's
 * rules, run-time CPU feature detection and the measured roofline. */
#include "backend/roofline.h"
#include "spec/spec.h"
#include "util/util.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

const char *ks_spec_dir(void) {
  static char dir[PATH_MAX];
  if (!dir[0])
    snprintf(dir, sizeof dir, "%.*s/specs", PATH_MAX - 8, ks_data_dir());
  return dir;
}

/* ------------------------------------------------------------ CPU flags */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_cpu_flags;    /* " flag flag ... " from /proc/cpuinfo */
static char *g_cpu_override; /* tests */
static bool g_cpu_read;

static void read_cpu_flags(void) {
  if (g_cpu_read)
    return;
  g_cpu_read = true;
  char *text = NULL;
  if (ks_read_file("/proc/cpuinfo", &text, NULL, NULL) != KS_OK)
    return;
  /* x86 says "flags", arm64 says "Features" */
  char *line = strstr(text, "\nflags");
  if (!line)
    line = strstr(text, "\nFeatures");
  if (line) {
    char *colon = strchr(line, ':');
    char *end = colon ? strchr(colon, '\n') : NULL;
    if (colon && end) {
      size_t n = (size_t)(end - colon - 1);
      g_cpu_flags = ks_xmalloc(n + 3);
      g_cpu_flags[0] = ' ';
      memcpy(g_cpu_flags + 1, colon + 1, n);
      g_cpu_flags[n + 1] = ' ';
      g_cpu_flags[n + 2] = 0;
    }
  }
  free(text);
}

static bool builtin_has(const char *flag) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (!strcmp(flag, "avx"))
    return __builtin_cpu_supports("avx");
  if (!strcmp(flag, "avx2"))
    return __builtin_cpu_supports("avx2");
  if (!strcmp(flag, "fma"))
    return __builtin_cpu_supports("fma");
  if (!strcmp(flag, "avx512f"))
    return __builtin_cpu_supports("avx512f");
  if (!strcmp(flag, "avx512bw"))
    return __builtin_cpu_supports("avx512bw");
  if (!strcmp(flag, "avx512vl"))
    return __builtin_cpu_supports("avx512vl");
  if (!strcmp(flag, "avx512dq"))
    return __builtin_cpu_supports("avx512dq");
  if (!strcmp(flag, "sse4_1"))
    return __builtin_cpu_supports("sse4.1");
  if (!strcmp(flag, "sse4_2"))
    return __builtin_cpu_supports("sse4.2");
#else
  (void)flag;
#endif
  return false;
}

static bool in_list(const char *list, const char *flag) {
  char pat[64];
  snprintf(pat, sizeof pat, " %s ", flag);
  return strstr(list, pat) != NULL;
}

bool ks_cpu_has(const char *flag) {
  pthread_mutex_lock(&g_lock);
  bool r;
  if (g_cpu_override) {
    r = in_list(g_cpu_override, flag);
  } else {
    read_cpu_flags();
    r = g_cpu_flags ? in_list(g_cpu_flags, flag) : builtin_has(flag);
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

void ks_cpu_flags_override(const char *flags) {
  pthread_mutex_lock(&g_lock);
  free(g_cpu_override);
  g_cpu_override = NULL;
  if (flags) {
    size_t n = strlen(flags);
    g_cpu_override = ks_xmalloc(n + 3);
    snprintf(g_cpu_override, n + 3, " %s ", flags);
  }
  pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------ loading */

static const struct {
  const char *name, *id;
} k_short[] = {{"c", "c-x86_64"},
               {"opencl", "opencl-generic"},
               {"cuda", "cuda-sm90"},
               {"metal", "metal-apple"},
               {"mlx", "mlx"}};

const char *ks_spec_target_id(const char *name) {
  for (size_t i = 0; i < sizeof k_short / sizeof *k_short; i++)
    if (!strcmp(name, k_short[i].name))
      return k_short[i].id;
  return name;
}

static bool valid_id(const char *s) {
  if (!*s || strlen(s) >= 48)
    return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_'))
      return false;
  return true;
}

/* Every leaf fact ({"value": ...}) names its source. */
static ks_code check_facts(const json_t *facts, const char *path, char *where,
                           size_t wn, ks_err *err) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)facts, k, v) {
    size_t l = strlen(where);
    snprintf(where + l, wn - l, ".%s", k);
    if (!json_is_object(v)) {
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: %s: a fact is an object {\"value\", \"source\"} "
                        "(or a group of facts)",
                        path, where);
    }
    if (json_object_get(v, "value")) {
      const char *src = json_string_value(json_object_get(v, "source"));
      if (!src || !*src)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s: %s.source: missing; every fact names a vendor "
                          "document or \"measured by ksearch roofline\"",
                          path, where);
    } else {
      ks_code rc = check_facts(v, path, where, wn, err);
      if (rc)
        return rc;
    }
    where[l] = 0;
  }
  return KS_OK;
}

static json_t *load_doc(const char *id, int depth, char *path_out, size_t pn,
                        ks_err *err) {
  if (!valid_id(id)) {
    ks_err_set(err, KS_ERR_INPUT,
               "unknown target \"%s\"; use c, opencl, cuda, metal, mlx or the "
               "id of a file in %s/targets",
               id, ks_spec_dir());
    return NULL;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%.3000s/targets/%s.json", ks_spec_dir(), id);
  if (path_out)
    ks_strlcpy(path_out, path, pn);
  if (!ks_file_exists(path)) {
    ks_err_set(err, KS_ERR_INPUT,
               "unknown target \"%s\": no %s; use c, opencl, cuda, metal, "
               "mlx or the id of a file in %s/targets (set KSEARCH_HOME if "
               "the data folder is elsewhere)",
               id, path, ks_spec_dir());
    return NULL;
  }
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  if (!doc) {
    ks_err_set(err, KS_ERR_INPUT, "%s: line %d: %s", path, je.line, je.text);
    return NULL;
  }
  const char *jid = json_string_value(json_object_get(doc, "id"));
  if (!jid || strcmp(jid, id)) {
    ks_err_set(err, KS_ERR_INPUT, "%s: id: \"%s\" must equal the file name",
               path, jid ? jid : "(missing)");
    json_decref(doc);
    return NULL;
  }
  char where[512] = "facts";
  json_t *facts = json_object_get(doc, "facts");
  if (!json_is_object(facts) ||
      check_facts(facts, path, where, sizeof where, err)) {
    if (!json_is_object(facts))
      ks_err_set(err, KS_ERR_INPUT, "%s: facts: missing object", path);
    json_decref(doc);
    return NULL;
  }
  const char *parent = json_string_value(json_object_get(doc, "extends"));
  if (!parent)
    return doc;
  if (depth > 4) {
    ks_err_set(err, KS_ERR_INPUT, "%s: extends: chain too deep (a cycle?)",
               path);
    json_decref(doc);
    return NULL;
  }
  json_t *base = load_doc(parent, depth + 1, NULL, 0, err);
  if (!base) {
    ks_err_prefix(err, "%s: extends: ", path);
    json_decref(doc);
    return NULL;
  }
  /* child over parent: facts and from_cuda key by key; rule lists append */
  json_object_update(json_object_get(base, "facts"), facts);
  json_t *bfc = json_object_get(base, "from_cuda");
  json_t *dfc = json_object_get(doc, "from_cuda");
  if (json_is_object(bfc) && json_is_object(dfc))
    json_object_update(bfc, dfc);
  else if (json_is_object(dfc))
    json_object_set(base, "from_cuda", dfc);
  json_t *bp = json_object_get(base, "primitives");
  json_t *dp = json_object_get(doc, "primitives");
  if (!json_is_object(bp)) {
    bp = json_object();
    json_object_set_new(base, "primitives", bp);
  }
  const char *k;
  json_t *v;
  json_object_foreach(dp, k, v) {
    json_t *b = json_object_get(bp, k);
    if (json_is_array(b) && json_is_array(v))
      json_array_extend(b, v);
    else
      json_object_set(bp, k, v);
  }
  json_object_foreach(doc, k, v) {
    if (strcmp(k, "facts") && strcmp(k, "from_cuda") && strcmp(k, "primitives"))
      json_object_set(base, k, v);
  }
  json_object_del(base, "extends");
  json_object_set_new(base, "extends_chain", json_string(parent));
  json_decref(doc);
  return base;
}

static const struct {
  const char *key;
  ks_rule_kind kind;
} k_rule_keys[] = {
    {"ident", KS_RULE_IDENT},    {"prefix", KS_RULE_PREFIX},
    {"regex", KS_RULE_REGEX},    {"qualified", KS_RULE_QUALIFIED},
    {"ptx", KS_RULE_PTX},        {"punct", KS_RULE_PUNCT},
    {"include", KS_RULE_INCLUDE}};

static ks_code parse_rule(const json_t *v, const char *path, const char *list,
                          size_t i, ks_spec_rule *r, ks_err *err) {
  memset(r, 0, sizeof *r);
  int found = 0;
  for (size_t k = 0; k < sizeof k_rule_keys / sizeof *k_rule_keys; k++) {
    const char *m = json_string_value(json_object_get(v, k_rule_keys[k].key));
    if (m) {
      r->kind = k_rule_keys[k].kind;
      ks_strlcpy(r->match, m, sizeof r->match);
      found++;
    }
  }
  const char *use = json_string_value(json_object_get(v, "use"));
  if (found != 1 || !use)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: primitives.%s[%zu]: needs exactly one of ident, "
                      "prefix, regex, qualified, ptx, punct, include, and "
                      "\"use\" (the nearest valid alternative)",
                      path, list, i);
  ks_strlcpy(r->use, use, sizeof r->use);
  const char *pr = json_string_value(json_object_get(v, "pragma"));
  const char *cpu = json_string_value(json_object_get(v, "cpu"));
  if (pr)
    ks_strlcpy(r->pragma, pr, sizeof r->pragma);
  if (cpu)
    ks_strlcpy(r->cpu, cpu, sizeof r->cpu);
  if (!strcmp(list, "requires") && !pr && !cpu)
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: primitives.requires[%zu]: name the \"pragma\" or "
                      "\"cpu\" flag that allows it",
                      path, i);
  if (r->kind == KS_RULE_REGEX) {
    regex_t *re = ks_xmalloc(sizeof *re);
    if (regcomp(re, r->match, REG_EXTENDED | REG_NOSUB)) {
      free(re);
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: primitives.%s[%zu].regex: not a POSIX extended "
                        "regular expression: %s",
                        path, list, i, r->match);
    }
    r->re = re;
  }
  return KS_OK;
}

/* Renders a from_cuda template for a suggestion: $1 $2 ... become a b ... */
static void render_template(const char *tpl, char *out, size_t n) {
  size_t o = 0;
  for (const char *p = tpl; *p && o + 1 < n; p++) {
    if (p[0] == '$' && p[1] >= '1' && p[1] <= '9') {
      out[o++] = (char)('a' + (p[1] - '1'));
      p++;
    } else if (p[0] == '$' && (p[1] == 'T' || p[1] == 'A')) {
      const char *w = p[1] == 'T' ? "T" : "AS";
      for (; *w && o + 1 < n; w++)
        out[o++] = *w;
      p++;
      if (p[0] == 'A' && p[1] == 'S')
        p++;
    } else {
      out[o++] = *p;
    }
  }
  out[o] = 0;
}

/* The literal text a from_cuda entry maps to: a string, or {"to": ...}. */
static const char *fc_to(const json_t *v) {
  if (json_is_string(v))
    return json_string_value(v);
  return json_string_value(json_object_get(v, "to"));
}

static ks_code build_rules(ks_spec_target *t, ks_err *err) {
  json_t *prim = json_object_get(t->json, "primitives");
  json_t *forb = json_object_get(prim, "forbidden");
  json_t *req = json_object_get(prim, "requires");
  size_t nfc = json_object_size(t->from_cuda);
  size_t cap = json_array_size(forb) + json_array_size(req) + nfc;
  t->rules = ks_xcalloc(cap ? cap : 1, sizeof *t->rules);
  size_t i;
  const char *k;
  json_t *v;
  /* the target's own rules first, in file order: the first match decides */
  json_array_foreach(forb, i, v) {
    ks_code rc =
        parse_rule(v, t->path, "forbidden", i, &t->rules[t->n_rules], err);
    if (rc)
      return rc;
    t->n_rules++;
  }
  json_array_foreach(req, i, v) {
    ks_code rc =
        parse_rule(v, t->path, "requires", i, &t->rules[t->n_rules], err);
    if (rc)
      return rc;
    t->n_rules++;
  }
  /* then from_cuda: CUDA names no rule above covers get their literal form
   * (entries naming translator helpers, ks_*, suggest nothing to a person) */
  json_object_foreach(t->from_cuda, k, v) {
    const char *to = fc_to(v);
    if (!to)
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: from_cuda.%s: a string or {\"to\": ...}", t->path,
                        k);
    if (strstr(to, "ks_"))
      continue;
    char name[96];
    ks_strlcpy(name, k, sizeof name);
    char *slash = strchr(name, '/');
    if (slash)
      *slash = 0;
    bool dup = false;
    for (int j = 0; j < t->n_rules && !dup; j++)
      dup = !strcmp(t->rules[j].match, name);
    if (dup)
      continue;
    ks_spec_rule *r = &t->rules[t->n_rules++];
    r->kind = strstr(name, "::") ? KS_RULE_QUALIFIED : KS_RULE_IDENT;
    ks_strlcpy(r->match, name, sizeof r->match);
    if (*to)
      render_template(to, r->use, sizeof r->use);
    else
      ks_strlcpy(r->use, "nothing: drop it", sizeof r->use);
  }
  json_array_foreach(json_object_get(prim, "unsupported_extensions"), i, v) {
    if (json_is_string(v) && t->n_unsupported < 16)
      ks_strlcpy(t->unsupported_ext[t->n_unsupported++], json_string_value(v),
                 48);
  }
  return KS_OK;
}

static void target_free(ks_spec_target *t) {
  for (int i = 0; i < t->n_rules; i++)
    if (t->rules[i].re) {
      regfree(t->rules[i].re);
      free(t->rules[i].re);
    }
  free(t->rules);
  json_decref(t->json);
  free(t);
}

static ks_code target_load(const char *id, ks_spec_target **out, ks_err *err) {
  ks_spec_target *t = ks_xcalloc(1, sizeof *t);
  t->json = load_doc(id, 0, t->path, sizeof t->path, err);
  if (!t->json) {
    free(t);
    return err ? err->code : KS_ERR_INPUT;
  }
  ks_strlcpy(t->id, id, sizeof t->id);
  const char *be = json_string_value(json_object_get(t->json, "backend"));
  const char *lang = json_string_value(json_object_get(t->json, "language"));
  const char *name = json_string_value(json_object_get(t->json, "name"));
  if (!be || !lang || !name) {
    ks_err_set(err, KS_ERR_INPUT, "%s: backend, language and name are needed",
               t->path);
    target_free(t);
    return KS_ERR_INPUT;
  }
  ks_strlcpy(t->backend, be, sizeof t->backend);
  ks_strlcpy(t->language, lang, sizeof t->language);
  ks_strlcpy(t->name, name, sizeof t->name);
  t->from_cuda = json_object_get(t->json, "from_cuda");
  ks_code rc = build_rules(t, err);
  if (rc) {
    target_free(t);
    return rc;
  }
  *out = t;
  return KS_OK;
}

#define MAX_CACHED 16
static ks_spec_target *g_targets[MAX_CACHED];
static int g_n_targets;

ks_code ks_spec_target_get(const char *name, const ks_spec_target **out,
                           ks_err *err) {
  const char *id = ks_spec_target_id(name);
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < g_n_targets; i++)
    if (!strcmp(g_targets[i]->id, id)) {
      *out = g_targets[i];
      pthread_mutex_unlock(&g_lock);
      return KS_OK;
    }
  ks_spec_target *t = NULL;
  ks_code rc = target_load(id, &t, err);
  if (!rc) {
    if (g_n_targets < MAX_CACHED)
      g_targets[g_n_targets++] = t;
    /* beyond the cache the target leaks; there are a handful of targets */
    *out = t;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* ------------------------------------------------------------ facts */

static void add_detected_isa(const ks_spec_target *t, json_t *facts) {
  json_t *levels = json_object_get(t->json, "isa_levels");
  if (!json_is_array(levels))
    return;
  json_t *have = json_array();
  const char *best = NULL;
  size_t i;
  json_t *v;
  json_array_foreach(levels, i, v) {
    bool ok = true;
    size_t k;
    json_t *f;
    json_array_foreach(json_object_get(v, "cpu_flags"), k, f) {
      ok &= json_is_string(f) && ks_cpu_has(json_string_value(f));
    }
    const char *name = json_string_value(json_object_get(v, "name"));
    if (ok && name) {
      json_array_append_new(have, json_string(name));
      if (!best)
        best = name; /* levels are listed widest first */
    }
  }
  json_object_set_new(facts, "isa_detected",
                      json_pack("{s:o,s:s?,s:s}", "value", have, "widest", best,
                                "source",
                                "detected at run time (__builtin_cpu_supports, "
                                "/proc/cpuinfo flags)"));
}

static void add_roofline(const ks_spec_target *t, json_t *facts) {
  if (strcmp(t->backend, "c"))
    return;
  char path[PATH_MAX];
  ks_err e;
  ks_roofline r;
  json_t *j = NULL;
  if (ks_roofline_cache_path("c", 0, path, sizeof path, &e) == KS_OK &&
      ks_file_exists(path))
    j = json_load_file(path, 0, NULL);
  if (j && ks_roofline_from_json(j, &r, &e) == KS_OK) {
    const char *src = "measured by ksearch roofline";
    json_object_set_new(facts, "bandwidth_gbps",
                        json_pack("{s:f,s:s,s:s}", "value", r.bandwidth_gbps,
                                  "unit", "GB/s", "source", src));
    json_object_set_new(facts, "peak_gflops_fp32",
                        json_pack("{s:f,s:s,s:s}", "value", r.peak_gflops,
                                  "unit", "GFLOP/s", "source", src));
    json_object_set_new(
        facts, "roofline_threads",
        json_pack("{s:i,s:s}", "value", r.threads, "source", src));
  } else {
    json_object_set_new(
        facts, "bandwidth_gbps",
        json_pack("{s:n,s:s,s:s}", "value", "source",
                  "measured by ksearch roofline", "note",
                  "not measured on this machine yet: run `ksearch roofline`"));
  }
  json_decref(j);
}

json_t *ks_spec_target_facts(const ks_spec_target *t) {
  json_t *facts = json_deep_copy(json_object_get(t->json, "facts"));
  add_detected_isa(t, facts);
  add_roofline(t, facts);
  return facts;
}
