/* validator.c — see validator.h. Rules come from the target file
 * (spec/target.c); this file only walks tokens and applies them. */
#include "spec/validator.h"
#include "spec/lexer.h"
#include "spec/rules.h"
#include "spec/spec.h"
#include "util/util.h"

#include <regex.h>
#include <string.h>

#define MAX_PRAGMAS 32

#define MAX_GUARDS 16

/* One level of #if nesting: the macros its live branch is known to have
 * defined (an #ifdef cl_khr_subgroups branch only compiles where the
 * extension exists; an #ifdef __AVX512F__ branch only where the ISA does). */
typedef struct guard {
  char names[4][48];
  int n;
  bool positive; /* false in the #else branch or under an unknown test */
} guard;

typedef struct vstate {
  const ks_spec_target *t;
  const ks_toks *ts;
  char pragmas[MAX_PRAGMAS][48]; /* extensions enabled in the source */
  int n_pragmas;
  guard guards[MAX_GUARDS];
  int depth;
  ks_spec_violation *out;
  int max, n;
} vstate;

/* "#  pragma" -> "pragma" */
static void directive_name(const ks_toks *ts, int i, char *buf, size_t n) {
  char raw[64];
  ks_tok_text(ts, i, raw, sizeof raw);
  const char *p = raw + 1;
  while (*p == ' ' || *p == '\t')
    p++;
  ks_strlcpy(buf, p, n);
}

/* #pragma OPENCL EXTENSION name : enable */
static void collect_pragmas(vstate *v) {
  const ks_toks *ts = v->ts;
  for (int i = 0; i < ts->n; i++) {
    if (ts->t[i].kind != KS_TOK_PP)
      continue;
    char d[32];
    directive_name(ts, i, d, sizeof d);
    if (strcmp(d, "pragma") || !ks_tok_is(ts, i + 1, "OPENCL") ||
        !ks_tok_is(ts, i + 2, "EXTENSION") || !ks_tok_is(ts, i + 4, ":") ||
        !ks_tok_is(ts, i + 5, "enable"))
      continue;
    if (v->n_pragmas < MAX_PRAGMAS)
      ks_tok_text(ts, i + 3, v->pragmas[v->n_pragmas++], 48);
  }
}

static bool pragma_on(const vstate *v, const char *ext) {
  for (int i = 0; i < v->n_pragmas; i++)
    if (!strcmp(v->pragmas[i], ext) || !strcmp(v->pragmas[i], "all"))
      return true;
  return false;
}

/* The macro a compiler defines when it targets a CPU feature. */
static const char *cpu_macro(const char *flag) {
  static const struct {
    const char *flag, *macro;
  } k[] = {{"avx", "__AVX__"},
           {"avx2", "__AVX2__"},
           {"fma", "__FMA__"},
           {"f16c", "__F16C__"},
           {"avx512f", "__AVX512F__"},
           {"avx512_bf16", "__AVX512BF16__"},
           {"avx512_fp16", "__AVX512FP16__"},
           {"avx512_vnni", "__AVX512VNNI__"},
           {"amx_tile", "__AMX_TILE__"},
           {"asimd", "__ARM_NEON"}};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++)
    if (!strcmp(flag, k[i].flag))
      return k[i].macro;
  return NULL;
}

static bool guarded(const vstate *v, const char *name) {
  for (int d = 0; name && d < v->depth && d < MAX_GUARDS; d++)
    for (int k = 0; v->guards[d].positive && k < v->guards[d].n; k++)
      if (!strcmp(v->guards[d].names[k], name))
        return true;
  return false;
}

/* #if / #ifdef / #ifndef / #elif / #else / #endif at PP token i */
static void track_conditional(vstate *v, int i, const char *d) {
  const ks_toks *ts = v->ts;
  if (!strcmp(d, "endif")) {
    if (v->depth > 0)
      v->depth--;
    return;
  }
  if (!strcmp(d, "else") || !strcmp(d, "elif")) {
    if (v->depth > 0 && v->depth <= MAX_GUARDS)
      v->guards[v->depth - 1].positive = false;
    return;
  }
  if (strcmp(d, "if") && strcmp(d, "ifdef") && strcmp(d, "ifndef"))
    return;
  guard g = {.n = 0, .positive = strcmp(d, "ifndef") != 0};
  bool negated = false;
  for (int k = i + 1; k < ts->n && ts->t[k].kind != KS_TOK_PP_END; k++) {
    if (ks_tok_is(ts, k, "!") || ks_tok_is(ts, k, "||"))
      negated = true;
    if (ts->t[k].kind != KS_TOK_IDENT || ks_tok_is(ts, k, "defined"))
      continue;
    bool named =
        !strcmp(d, "ifdef") || ks_tok_is(ts, k - 1, "defined") ||
        (ks_tok_is(ts, k - 1, "(") && ks_tok_is(ts, k - 2, "defined")) ||
        (!strcmp(d, "if") && k == i + 1 && ts->t[k + 1].kind == KS_TOK_PP_END);
    if (named && g.n < 4)
      ks_tok_text(ts, k, g.names[g.n++], 48);
  }
  if (negated)
    g.positive = false;
  if (v->depth < MAX_GUARDS)
    v->guards[v->depth] = g;
  v->depth++;
}

static bool unsupported(const ks_spec_target *t, const char *ext) {
  for (int i = 0; i < t->n_unsupported; i++)
    if (!strcmp(t->unsupported_ext[i], ext))
      return true;
  return false;
}

static void report(vstate *v, int line, const char *ident,
                   const char *suggestion) {
  for (int i = 0; i < v->n; i++)
    if (v->out[i].line == line && !strcmp(v->out[i].ident, ident))
      return;
  if (v->n >= v->max)
    return;
  ks_spec_violation *o = &v->out[v->n++];
  o->line = line;
  ks_strlcpy(o->ident, ident, sizeof o->ident);
  ks_strlcpy(o->suggestion, suggestion, sizeof o->suggestion);
}

/* Whether a matched rule allows its use here; if not, fills the suggestion. */
static bool allowed(const vstate *v, const ks_spec_rule *r, char *why,
                    size_t wn) {
  if (r->pragma[0] && guarded(v, r->pragma))
    return true; /* compiled only where the extension exists */
  if (r->cpu[0] && guarded(v, cpu_macro(r->cpu)))
    return true; /* compiled only for that ISA */
  if (r->pragma[0]) {
    if (unsupported(v->t, r->pragma)) {
      snprintf(why, wn, "%s (%s lacks %s)", r->use, v->t->id, r->pragma);
      return false;
    }
    if (pragma_on(v, r->pragma))
      return true;
    snprintf(why, wn, "add #pragma OPENCL EXTENSION %s : enable, or %s",
             r->pragma, r->use);
    return false;
  }
  if (r->cpu[0]) {
    if (ks_cpu_has(r->cpu))
      return true;
    snprintf(why, wn, "this CPU lacks %s: %s", r->cpu, r->use);
    return false;
  }
  snprintf(why, wn, "%s", r->use);
  return false;
}

static bool prefix_of(const char *p, const char *s) {
  return !strncmp(s, p, strlen(p));
}

/* The qualified name starting at identifier i ("a::b::c"); *last = index of
 * its last identifier. */
static void qualified_at(const ks_toks *ts, int i, char *buf, size_t n,
                         int *last) {
  ks_tok_text(ts, i, buf, n);
  *last = i;
  while (ks_tok_is(ts, *last + 1, "::") && *last + 2 < ts->n &&
         ts->t[*last + 2].kind == KS_TOK_IDENT) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "::");
    l = strlen(buf);
    ks_tok_text(ts, *last + 2, buf + l, n - l);
    *last += 2;
  }
}

/* The first rule matching identifier i (its decision is final), with the
 * matched name in what; NULL when none matches. */
static const ks_spec_rule *match_ident(const ks_spec_target *t,
                                       const ks_toks *ts, int i, char *what,
                                       size_t wn) {
  if (ks_tok_is(ts, i - 1, ".") || ks_tok_is(ts, i - 1, "->") ||
      ks_tok_is(ts, i - 1, "::"))
    return NULL; /* a member or a qualified tail: checked from its head */
  char id[96], qual[192], member[192];
  int last;
  ks_tok_text(ts, i, id, sizeof id);
  qualified_at(ts, i, qual, sizeof qual, &last);
  member[0] = 0;
  if (ks_tok_is(ts, i + 1, ".") && i + 2 < ts->n &&
      ts->t[i + 2].kind == KS_TOK_IDENT) {
    char m[64];
    ks_tok_text(ts, i + 2, m, sizeof m);
    snprintf(member, sizeof member, "%s.%s", id, m);
  }
  for (int k = 0; k < t->n_rules; k++) {
    const ks_spec_rule *r = &t->rules[k];
    const char *name = id;
    bool hit = false;
    switch (r->kind) {
    case KS_RULE_IDENT:
      if (strchr(r->match, '.')) {
        hit = member[0] && !strcmp(r->match, member);
        name = member;
      } else {
        hit = !strcmp(r->match, id) && last == i;
      }
      break;
    case KS_RULE_PREFIX: hit = prefix_of(r->match, id) && last == i; break;
    case KS_RULE_REGEX:
      hit = last == i && regexec(r->re, id, 0, NULL, 0) == 0;
      break;
    case KS_RULE_QUALIFIED: {
      if (last == i)
        break;
      char with[200];
      snprintf(with, sizeof with, "::%s", r->match);
      hit = prefix_of(r->match, qual) || strstr(qual, with);
      name = qual;
      break;
    }
    default: break;
    }
    if (hit) {
      ks_strlcpy(what, name, wn);
      return r;
    }
  }
  return NULL;
}

static void check_ident(vstate *v, int i) {
  char what[192], why[256];
  const ks_spec_rule *r = match_ident(v->t, v->ts, i, what, sizeof what);
  if (r && !allowed(v, r, why, sizeof why))
    report(v, v->ts->t[i].line, what, why);
}

const ks_spec_rule *ks_spec_rule_at(const ks_spec_target *t, const ks_toks *ts,
                                    int i, char *what, size_t wn, char *why,
                                    size_t yn) {
  vstate v = {.t = t, .ts = ts};
  const ks_spec_rule *r = match_ident(t, ts, i, what, wn);
  return r && !allowed(&v, r, why, yn) ? r : NULL;
}

static void check_kind(vstate *v, int i, ks_rule_kind kind, const char *text) {
  for (int k = 0; k < v->t->n_rules; k++) {
    const ks_spec_rule *r = &v->t->rules[k];
    if (r->kind != kind)
      continue;
    bool hit = kind == KS_RULE_PTX     ? strstr(text, r->match) != NULL
               : kind == KS_RULE_PUNCT ? !strcmp(text, r->match)
                                       : false;
    if (kind == KS_RULE_INCLUDE) {
      size_t lt = strlen(text), lm = strlen(r->match);
      hit = lt >= lm && !strcmp(text + lt - lm, r->match) &&
            (lt == lm || text[lt - lm - 1] == '/');
    }
    if (!hit)
      continue;
    char why[256];
    if (!allowed(v, r, why, sizeof why))
      report(v, v->ts->t[i].line, kind == KS_RULE_PTX ? r->match : text, why);
    return;
  }
}

/* asm("..." : ...) / asm volatile(...): the strings are PTX or x86 asm */
static void check_asm(vstate *v, int i) {
  const ks_toks *ts = v->ts;
  int j = i + 1;
  while (ks_tok_is(ts, j, "volatile") || ks_tok_is(ts, j, "__volatile__"))
    j++;
  if (!ks_tok_is(ts, j, "(") || ts->t[j].match < 0)
    return;
  for (int k = j + 1; k < ts->t[j].match; k++) {
    if (ts->t[k].kind != KS_TOK_STRING)
      continue;
    char s[256];
    ks_tok_text(ts, k, s, sizeof s);
    check_kind(v, k, KS_RULE_PTX, s);
  }
}

static void check_include(vstate *v, int i) {
  const ks_toks *ts = v->ts;
  int h = i + 1;
  if (h >= ts->n ||
      (ts->t[h].kind != KS_TOK_HEADER && ts->t[h].kind != KS_TOK_STRING))
    return;
  char raw[256];
  ks_tok_text(ts, h, raw, sizeof raw);
  size_t l = strlen(raw);
  if (l < 2)
    return;
  raw[l - 1] = 0; /* strip <> or "" */
  check_kind(v, h, KS_RULE_INCLUDE, raw + 1);
}

ks_code ks_spec_validate(const char *target, const char *source,
                         ks_spec_violation *out, int max, int *n_out,
                         ks_err *err) {
  *n_out = 0;
  const ks_spec_target *t;
  ks_code rc = ks_spec_target_get(target, &t, err);
  if (rc)
    return rc;
  ks_toks ts;
  rc = ks_lex(source ? source : "", &ts, err);
  if (rc)
    return ks_err_prefix(err, "validating for %s: ", t->id);
  vstate v = {.t = t, .ts = &ts, .out = out, .max = max > 0 ? max : 0};
  collect_pragmas(&v);
  bool skip_directive = false; /* #if, #pragma...: not code */
  for (int i = 0; i < ts.n; i++) {
    const ks_tok *tk = &ts.t[i];
    switch (tk->kind) {
    case KS_TOK_PP: {
      char d[32];
      directive_name(&ts, i, d, sizeof d);
      skip_directive = strcmp(d, "define") != 0;
      if (!strcmp(d, "include"))
        check_include(&v, i);
      track_conditional(&v, i, d);
      break;
    }
    case KS_TOK_PP_END: skip_directive = false; break;
    case KS_TOK_IDENT:
      if (skip_directive && tk->in_pp)
        break;
      if (ks_tok_is(&ts, i, "asm") || ks_tok_is(&ts, i, "__asm__") ||
          ks_tok_is(&ts, i, "__asm"))
        check_asm(&v, i);
      check_ident(&v, i);
      break;
    case KS_TOK_PUNCT: {
      if (skip_directive && tk->in_pp)
        break;
      char p[8];
      ks_tok_text(&ts, i, p, sizeof p);
      check_kind(&v, i, KS_RULE_PUNCT, p);
      break;
    }
    default: break;
    }
  }
  ks_toks_free(&ts);
  *n_out = v.n;
  return KS_OK;
}
