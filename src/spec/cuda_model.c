/* cuda_model.c — see cuda_model.h. Walks the tokens of each scope: a
 * namespace or extern "C" block is transparent, a '{' after a parameter list
 * is a function body, any other brace block (struct, initializer) is
 * skipped. */
#include "spec/cuda_model.h"
#include "util/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static bool is_code(const ks_toks *ts, int i) {
  return i >= 0 && i < ts->n && !ts->t[i].in_pp && ts->t[i].kind != KS_TOK_PP &&
         ts->t[i].kind != KS_TOK_PP_END;
}

void ks_cu_text(const ks_cu_model *m, int a, int b, char *buf, size_t n) {
  size_t o = 0;
  if (n)
    buf[0] = 0;
  for (int i = a; i <= b && i < m->toks.n; i++) {
    if (!is_code(&m->toks, i))
      continue;
    const ks_tok *t = &m->toks.t[i];
    /* a space only where the source had one */
    if (o && i > a && t->off > ks_tok_end(&m->toks, i - 1) && o + 1 < n)
      buf[o++] = ' ';
    for (int k = 0; k < t->len && o + 1 < n; k++)
      buf[o++] = m->src[t->off + k];
  }
  if (n)
    buf[o < n ? o : n - 1] = 0;
}

static const char *const k_qual[] = {
    "const",      "volatile", "__restrict__",      "restrict",
    "__restrict", "struct",   "__grid_constant__", "register"};

static bool is_qualifier(const char *w) {
  for (size_t i = 0; i < sizeof k_qual / sizeof *k_qual; i++)
    if (!strcmp(w, k_qual[i]))
      return true;
  return false;
}

static void parse_param(ks_cu_model *m, int a, int b, ks_cu_param *p) {
  const ks_toks *ts = &m->toks;
  memset(p, 0, sizeof *p);
  p->first = a;
  p->last = b;
  int name = -1;
  for (int i = a; i <= b; i++) {
    if (ts->t[i].kind == KS_TOK_IDENT)
      name = i;
    if (ks_tok_is(ts, i, "["))
      break; /* float x[] : the name precedes the brackets */
    if (ks_tok_is(ts, i, "*") || ks_tok_is(ts, i, "&"))
      p->is_pointer |= ks_tok_is(ts, i, "*");
  }
  for (int i = a; i <= b; i++)
    if (ks_tok_is(ts, i, "["))
      p->is_pointer = true;
  if (name >= 0)
    ks_tok_text(ts, name, p->name, sizeof p->name);
  size_t o = 0;
  for (int i = a; i <= b; i++) {
    if (i == name || ts->t[i].kind != KS_TOK_IDENT)
      continue;
    char w[64];
    ks_tok_text(ts, i, w, sizeof w);
    if (!strcmp(w, "const"))
      p->is_const = true;
    if (is_qualifier(w))
      continue;
    o += (size_t)snprintf(p->elem + o,
                          o < sizeof p->elem ? sizeof p->elem - o : 0, "%s%s",
                          o ? " " : "", w);
    if (o >= sizeof p->elem)
      o = sizeof p->elem - 1;
  }
  /* const after the star qualifies the pointer, not the data */
  p->is_const = false;
  for (int i = a; i <= b && !ks_tok_is(ts, i, "*"); i++)
    if (ks_tok_is(ts, i, "const"))
      p->is_const = true;
}

static void add_func(ks_cu_model *m, int decl_first, int name_tok, int lp,
                     int rp, int lb) {
  const ks_toks *ts = &m->toks;
  if (m->n_funcs == m->cap_funcs) {
    m->cap_funcs = m->cap_funcs ? m->cap_funcs * 2 : 16;
    m->funcs = realloc(m->funcs, (size_t)m->cap_funcs * sizeof *m->funcs);
    if (!m->funcs)
      abort();
  }
  ks_cu_func *f = &m->funcs[m->n_funcs++];
  memset(f, 0, sizeof *f);
  ks_tok_text(ts, name_tok, f->name, sizeof f->name);
  f->line = ts->t[name_tok].line;
  f->decl_first = decl_first;
  f->name_tok = name_tok;
  f->lparen = lp;
  f->rparen = rp;
  f->lbrace = lb;
  f->rbrace = ts->t[lb].match;
  for (int i = decl_first; i < name_tok; i++) {
    if (!is_code(ts, i))
      continue;
    f->is_global |= ks_tok_is(ts, i, "__global__");
    f->is_device |= ks_tok_is(ts, i, "__device__");
    f->is_host |= ks_tok_is(ts, i, "__host__");
    f->is_template |= ks_tok_is(ts, i, "template");
    if (ks_tok_is(ts, i, "__launch_bounds__") && ks_tok_is(ts, i + 1, "(")) {
      int e = i + 2;
      while (e < ts->t[i + 1].match && !ks_tok_is(ts, e, ","))
        e++;
      ks_cu_text(m, i + 2, e - 1, f->launch_bounds, sizeof f->launch_bounds);
    }
  }
  if (ts->t[lp].match != lp + 1) {
    int a = lp + 1;
    for (int i = lp + 1; i <= rp; i++) {
      bool end = i == rp;
      if (!end && ks_tok_is(ts, i, ",")) {
        end = true;
      } else if (!end && (ks_tok_is(ts, i, "(") || ks_tok_is(ts, i, "["))) {
        i = ts->t[i].match;
        continue;
      }
      if (end && i > a && f->n_params < KS_CU_MAX_PARAMS) {
        if (!(i - a == 1 && ks_tok_is(ts, a, "void")))
          parse_param(m, a, i - 1, &f->params[f->n_params++]);
        a = i + 1;
      }
    }
  }
}

/* Is the '{' at lb a function body? Returns the ')' of its parameters. */
static int body_params(const ks_toks *ts, int lb) {
  int j = ks_tok_prev(ts, lb);
  while (j >= 0 && (ks_tok_is(ts, j, "const") || ks_tok_is(ts, j, "noexcept") ||
                    ks_tok_is(ts, j, "override")))
    j = ks_tok_prev(ts, j);
  if (j < 0 || !ks_tok_is(ts, j, ")") || ts->t[j].match < 0)
    return -1;
  int lp = ts->t[j].match;
  int name = ks_tok_prev(ts, lp);
  if (name < 0 || ts->t[name].kind != KS_TOK_IDENT)
    return -1;
  static const char *const k_stmt[] = {"if",     "for",    "while", "switch",
                                       "return", "sizeof", "catch"};
  for (size_t k = 0; k < sizeof k_stmt / sizeof *k_stmt; k++)
    if (ks_tok_is(ts, name, k_stmt[k]))
      return -1;
  return j;
}

/* Namespaces nest; deeper than this (only a hostile file) is not read. */
#define MAX_SCOPE_DEPTH 64

static void parse_scope(ks_cu_model *m, int from, int to, int depth) {
  const ks_toks *ts = &m->toks;
  int decl = -1;
  for (int i = from; i < to; i++) {
    if (!is_code(ts, i))
      continue;
    if (decl < 0)
      decl = i;
    if (ks_tok_is(ts, i, ";")) {
      decl = -1;
      continue;
    }
    if (ks_tok_is(ts, i, "(") || ks_tok_is(ts, i, "[")) {
      if (ts->t[i].match > i)
        i = ts->t[i].match;
      continue;
    }
    if (!ks_tok_is(ts, i, "{"))
      continue;
    int end = ts->t[i].match;
    if (end < 0)
      return;
    int rp = body_params(ts, i);
    int p = ks_tok_prev(ts, i);
    bool ns = (p >= 0 && ks_tok_is(ts, p, "namespace")) ||
              (p >= 1 && ks_tok_is(ts, ks_tok_prev(ts, p), "namespace")) ||
              (p >= 0 && ts->t[p].kind == KS_TOK_STRING &&
               ks_tok_is(ts, ks_tok_prev(ts, p), "extern"));
    if (ns) {
      if (depth < MAX_SCOPE_DEPTH)
        parse_scope(m, i + 1, end, depth + 1);
      decl = -1;
    } else if (rp >= 0) {
      int lp = ts->t[rp].match;
      add_func(m, decl, ks_tok_prev(ts, lp), lp, rp, i);
      decl = -1;
    }
    i = end; /* struct bodies and initializers: skipped */
  }
}

static void find_launches(ks_cu_model *m) {
  const ks_toks *ts = &m->toks;
  for (int i = 1; i < ts->n && m->n_launches < KS_CU_MAX_LAUNCHES; i++) {
    if (!ks_tok_is(ts, i, "<<<") || ts->t[i - 1].kind != KS_TOK_IDENT)
      continue;
    int e = i + 1;
    while (e < ts->n && !ks_tok_is(ts, e, ">>>") && !ks_tok_is(ts, e, ";"))
      e++;
    if (!ks_tok_is(ts, e, ">>>"))
      continue;
    ks_cu_launch *l = &m->launches[m->n_launches++];
    memset(l, 0, sizeof *l);
    ks_tok_text(ts, i - 1, l->kernel, sizeof l->kernel);
    l->line = ts->t[i].line;
    int a = i + 1, part = 0;
    for (int k = i + 1; k <= e; k++) {
      if (k < e && (ks_tok_is(ts, k, "(") || ks_tok_is(ts, k, "{")) &&
          ts->t[k].match > k) {
        k = ts->t[k].match;
        continue;
      }
      if (k == e || ks_tok_is(ts, k, ",")) {
        char *dst = part == 0 ? l->grid : part == 1 ? l->block : l->smem;
        size_t dn = part == 0   ? sizeof l->grid
                    : part == 1 ? sizeof l->block
                                : sizeof l->smem;
        if (part < 3)
          ks_cu_text(m, a, k - 1, dst, dn);
        part++;
        a = k + 1;
      }
    }
  }
}

/* dim3 name(a, b, c); dim3 name = dim3(a, b); dim3 name{a, b}; */
static void find_dim3(ks_cu_model *m) {
  const ks_toks *ts = &m->toks;
  for (int i = 0; i + 2 < ts->n && m->n_dim3 < KS_CU_MAX_DIM3; i++) {
    if (!ks_tok_is(ts, i, "dim3") || ts->t[i + 1].kind != KS_TOK_IDENT)
      continue;
    int o = i + 2;
    if (ks_tok_is(ts, o, "=") && ks_tok_is(ts, o + 1, "dim3"))
      o += 2;
    if (!(ks_tok_is(ts, o, "(") || ks_tok_is(ts, o, "{")) || ts->t[o].match < 0)
      continue;
    ks_cu_dim3 *d = &m->dim3s[m->n_dim3++];
    memset(d, 0, sizeof *d);
    ks_tok_text(ts, i + 1, d->name, sizeof d->name);
    int a = o + 1;
    for (int k = o + 1; k <= ts->t[o].match; k++) {
      if (k < ts->t[o].match && ks_tok_is(ts, k, "(") && ts->t[k].match > k) {
        k = ts->t[k].match;
        continue;
      }
      if ((k == ts->t[o].match || ks_tok_is(ts, k, ",")) && d->n < 3) {
        if (k > a)
          ks_cu_text(m, a, k - 1, d->c[d->n++], sizeof d->c[0]);
        a = k + 1;
      }
    }
    for (int k = d->n; k < 3; k++)
      strcpy(d->c[k], "1");
  }
}

/* Lookups by name run once per call site: sorted, so a file with many
 * functions and many calls stays linear-logarithmic, not quadratic. */
static const ks_cu_model *g_sort_model; /* qsort has no context argument */
static int cmp_name(const void *a, const void *b) {
  const ks_cu_func *f = g_sort_model->funcs;
  int x = *(const int *)a, y = *(const int *)b;
  int c = strcmp(f[x].name, f[y].name);
  return c ? c : x - y; /* the first of equal names first */
}

static void index_names(ks_cu_model *m) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  m->by_name = ks_xmalloc(sizeof(int) * (size_t)(m->n_funcs + 1));
  for (int i = 0; i < m->n_funcs; i++)
    m->by_name[i] = i;
  pthread_mutex_lock(&lock);
  g_sort_model = m;
  qsort(m->by_name, (size_t)m->n_funcs, sizeof(int), cmp_name);
  g_sort_model = NULL;
  pthread_mutex_unlock(&lock);
}

ks_code ks_cu_parse(const char *src, size_t len, const char *path,
                    ks_cu_model *m, ks_err *err) {
  memset(m, 0, sizeof *m);
  m->path = path;
  m->src = src;
  ks_code rc = ks_lex_n(src, len, &m->toks, err);
  if (rc)
    return ks_err_prefix(err, "%s: ", path);
  if (m->toks.unbalanced_line) {
    ks_cu_model_free(m);
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: line %d: unbalanced bracket (an unmatched (, [ or "
                      "{); fix the source so that it compiles with nvcc",
                      path, m->toks.unbalanced_line);
  }
  parse_scope(m, 0, m->toks.n, 0);
  index_names(m);
  find_launches(m);
  find_dim3(m);
  bool kernel = false;
  for (int i = 0; i < m->n_funcs; i++)
    kernel |= m->funcs[i].is_global;
  if (!kernel) {
    ks_cu_model_free(m);
    return ks_err_set(err, KS_ERR_INPUT,
                      "%s: no __global__ kernel found; ksearch translate "
                      "takes CUDA C++ source (.cu) with at least one "
                      "__global__ function",
                      path);
  }
  return KS_OK;
}

void ks_cu_model_free(ks_cu_model *m) {
  ks_toks_free(&m->toks);
  free(m->funcs);
  free(m->by_name);
  m->funcs = NULL;
  m->by_name = NULL;
  m->n_funcs = m->cap_funcs = 0;
}

const ks_cu_func *ks_cu_func_at(const ks_cu_model *m, int i) {
  /* functions are in source order and do not nest: binary search */
  int lo = 0, hi = m->n_funcs - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    const ks_cu_func *f = &m->funcs[mid];
    if (f->lbrace >= 0 && i > f->lbrace && i < f->rbrace)
      return f;
    int at = f->lbrace >= 0 ? f->lbrace : f->name_tok;
    if (i <= at)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return NULL;
}

const ks_cu_func *ks_cu_func_named(const ks_cu_model *m, const char *name) {
  if (!m->by_name)
    return NULL;
  int lo = 0, hi = m->n_funcs - 1, found = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = strcmp(m->funcs[m->by_name[mid]].name, name);
    if (c >= 0) {
      if (!c)
        found = mid;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return found < 0 ? NULL : &m->funcs[m->by_name[found]];
}

static bool type_like(const ks_toks *ts, int i) {
  static const char *const k_types[] = {
      "float",  "double", "int",  "unsigned", "long",   "short",
      "char",   "bool",   "half", "__half",   "size_t", "uint",
      "float2", "float4", "int2", "int4",     "uint4",  "__nv_bfloat16"};
  if (i < 0 || ts->t[i].kind != KS_TOK_IDENT)
    return false;
  for (size_t k = 0; k < sizeof k_types / sizeof *k_types; k++)
    if (ks_tok_is(ts, i, k_types[k]))
      return true;
  char w[64];
  ks_tok_text(ts, i, w, sizeof w);
  size_t l = strlen(w);
  return l > 2 && !strcmp(w + l - 2, "_t");
}

bool ks_cu_var_type(const ks_cu_model *m, const ks_cu_func *f, const char *name,
                    char *elem, size_t n, bool *is_shared) {
  *is_shared = false;
  for (int p = 0; p < f->n_params; p++)
    if (!strcmp(f->params[p].name, name)) {
      ks_strlcpy(elem, f->params[p].elem, n);
      return true;
    }
  const ks_toks *ts = &m->toks;
  for (int i = f->lbrace + 1; i < f->rbrace; i++) {
    if (!ks_tok_is(ts, i, name))
      continue;
    int t = i - 1;
    while (t > f->lbrace && ks_tok_is(ts, t, "*"))
      t--;
    while (t > f->lbrace &&
           (ks_tok_is(ts, t, "__restrict__") || ks_tok_is(ts, t, "const")))
      t--;
    if (!type_like(ts, t))
      continue;
    ks_tok_text(ts, t, elem, n);
    for (int k = t; k > f->lbrace && !ks_tok_is(ts, k, ";") &&
                    !ks_tok_is(ts, k, "{") && !ks_tok_is(ts, k, "}");
         k--)
      *is_shared |= ks_tok_is(ts, k, "__shared__");
    return true;
  }
  return false;
}

const ks_cu_launch *ks_cu_launch_of(const ks_cu_model *m, const char *k) {
  for (int i = 0; i < m->n_launches; i++)
    if (!strcmp(m->launches[i].kernel, k))
      return &m->launches[i];
  return NULL;
}

const ks_cu_dim3 *ks_cu_dim3_named(const ks_cu_model *m, const char *name) {
  for (int i = 0; i < m->n_dim3; i++)
    if (!strcmp(m->dim3s[i].name, name))
      return &m->dim3s[i];
  return NULL;
}
