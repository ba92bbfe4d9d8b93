/* translate_common.c — what the rewriting engine of translate_internal.h
 * knows about a CUDA source before it writes a token: the translation state
 * (init, fini, the function entered), dropped __CUDA_ARCH__ branches, the
 * concept a TODO belongs to and the TODO marks, address spaces of variables,
 * parameters and expressions, which functions use what, and the launch
 * geometry. The token walk itself: translate_rewrite.c. */
#include "spec/rules.h"
#include "spec/translate_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ks_tr_directive(const ks_toks *ts, int i, char *buf, size_t n) {
  char raw[64];
  ks_tok_text(ts, i, raw, sizeof raw);
  const char *p = raw + 1;
  while (*p == ' ' || *p == '\t')
    p++;
  ks_strlcpy(buf, p, n);
}

int ks_tr_pp_end(const ks_toks *ts, int i) {
  while (i < ts->n && ts->t[i].kind != KS_TOK_PP_END)
    i++;
  return i < ts->n ? i : ts->n - 1;
}

void ks_tr_copy_gap(ks_tr *x, int from_off, int to_off) {
  if (to_off > from_off)
    ks_buf_append(x->out, x->ts->src + from_off, (size_t)(to_off - from_off));
}

int ks_tr_body_depth(const ks_tr *x, const ks_cu_func *f, int i) {
  int d = 0;
  for (int b = x->encl[i]; b > f->lbrace; b = x->encl[b])
    d++;
  return d;
}

static void compute_encl(ks_tr *x) {
  const ks_toks *ts = x->ts;
  int *stack = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  int sp = 0;
  x->encl = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  for (int i = 0; i < ts->n; i++) {
    x->encl[i] = sp ? stack[sp - 1] : -1;
    if (ts->t[i].in_pp || ts->t[i].kind != KS_TOK_PUNCT || ts->t[i].len != 1)
      continue;
    char c = ts->src[ts->t[i].off];
    if (c == '{')
      stack[sp++] = i;
    else if (c == '}' && sp)
      sp--;
  }
  free(stack);
}

/* #if / #ifdef on __CUDA_ARCH__: the device branch is for NVIDIA GPUs only,
 * so the translation keeps the #else branch (or nothing). */
static void mark_cuda_arch(ks_tr *x) {
  const ks_toks *ts = x->ts;
  for (int i = 0; i < ts->n; i++) {
    if (ts->t[i].kind != KS_TOK_PP || x->skip[i])
      continue;
    char d[16];
    ks_tr_directive(ts, i, d, sizeof d);
    if (strcmp(d, "if") && strcmp(d, "ifdef"))
      continue;
    int e = ks_tr_pp_end(ts, i);
    bool arch = false;
    for (int k = i + 1; k < e; k++)
      arch |= ks_tok_is(ts, k, "__CUDA_ARCH__");
    if (!arch)
      continue;
    int depth = 0, els = -1, endif = -1;
    for (int k = e + 1; k < ts->n && endif < 0; k++) {
      if (ts->t[k].kind != KS_TOK_PP)
        continue;
      char dk[16];
      ks_tr_directive(ts, k, dk, sizeof dk);
      if (!strncmp(dk, "if", 2))
        depth++;
      else if (!strcmp(dk, "endif") && depth-- == 0)
        endif = k;
      else if (depth == 0 && !strcmp(dk, "elif"))
        break; /* #elif chains stay as they are */
      else if (depth == 0 && !strcmp(dk, "else") && els < 0)
        els = k;
    }
    if (endif < 0)
      continue;
    int drop_to = els >= 0 ? ks_tr_pp_end(ts, els) : ks_tr_pp_end(ts, endif);
    for (int k = i; k <= drop_to; k++)
      x->skip[k] = true;
    for (int k = endif; k <= ks_tr_pp_end(ts, endif); k++)
      x->skip[k] = true;
  }
}

ks_code ks_tr_init(ks_tr *x, const ks_cu_model *m, const ks_spec_target *t,
                   ks_translation *out, ks_err *err) {
  memset(x, 0, sizeof *x);
  ks_code rc = ks_concepts_get(&x->cs, err);
  if (rc)
    return rc;
  x->m = m;
  x->ts = &m->toks;
  x->t = t;
  x->out = &out->code;
  x->todos = out->todos;
  x->pending = json_array();
  x->skip = ks_xcalloc((size_t)m->toks.n + 1, sizeof *x->skip);
  x->space_global = x->space_shared = x->space_private = "";
  compute_encl(x);
  mark_cuda_arch(x);
  return ks_cuda_analyze_model(m, x->cs, &x->rep, err);
}

void ks_tr_fini(ks_tr *x) {
  json_decref(x->pending);
  free(x->skip);
  free(x->encl);
  free(x->taint);
  ks_cuda_report_free(&x->rep);
}

/* The concept a TODO on an identifier belongs to: the identifier's own, else
 * the block-level concept the enclosing function was seen using. */
/* A concept the analyzer found on this very line, most specific first: an
 * inline-PTX line (asm has no concept of its own) is then marked as the
 * ldmatrix, TMA, cp.async or mma it is, not as the function's theme. */
static const char *concept_on_line(const ks_tr *x, int line) {
  static const char *const k_line[] = {"ldmatrix_fragments", "tma_bulk_copy",
                                       "double_buffering_cp_async",
                                       "tensor_core_mma", "paged_gather"};
  for (size_t k = 0; k < sizeof k_line / sizeof *k_line; k++)
    for (int i = 0; i < x->rep.n_hits; i++)
      if (x->rep.hits[i].line == line &&
          !strcmp(x->rep.hits[i].concept->id, k_line[k]))
        return k_line[k];
  return NULL;
}

const char *ks_tr_concept_for(const ks_tr *x, const char *ident, int line) {
  const ks_concept *c = ks_cuda_concept_of_ident(x->cs, ident);
  if (c)
    return c->id;
  const char *on = concept_on_line(x, line);
  if (on)
    return on;
  static const char *const k_pref[] = {
      "shared_memory_tiling", "block_reduction", "chunked_scan",
      "double_buffering_cp_async", "split_kv_flash_decoding"};
  if (!x->fn)
    return NULL;
  ks_tr *w = (ks_tr *)x; /* the memo only: same answer for the same fn */
  if (w->pref_fn == x->fn)
    return w->pref_id;
  w->pref_fn = x->fn;
  w->pref_id = NULL;
  int a = x->ts->t[x->fn->lbrace].line, b = x->ts->t[x->fn->rbrace].line;
  for (size_t k = 0; k < sizeof k_pref / sizeof *k_pref && !w->pref_id; k++)
    for (int i = 0; i < x->rep.n_hits; i++)
      if (x->rep.hits[i].line >= a && x->rep.hits[i].line <= b &&
          !strcmp(x->rep.hits[i].concept->id, k_pref[k])) {
        w->pref_id = k_pref[k];
        break;
      }
  return w->pref_id;
}

void ks_tr_enter(ks_tr *x, const ks_cu_func *f) {
  x->fn = f;
  x->n_ptrs = 0;
}

/* ------------------------------------------------------------ TODO marks */

static void insert_at_line_start(ks_buf *b, const char *text) {
  size_t pos = b->len;
  while (pos > 0 && b->data[pos - 1] != '\n')
    pos--;
  size_t ind = pos;
  while (ind < b->len && (b->data[ind] == ' ' || b->data[ind] == '\t'))
    ind++;
  ks_buf line;
  ks_buf_init(&line);
  ks_buf_append(&line, b->data ? b->data + pos : "", ind - pos);
  ks_buf_printf(&line, "%s\n", text);
  size_t n = line.len;
  ks_buf_append(b, line.data, n); /* grow by n, then shift the tail */
  memmove(b->data + pos + n, b->data + pos, b->len - n - pos);
  memcpy(b->data + pos, line.data, n);
  ks_buf_free(&line);
}

/* One mark per (concept, line): a line with several such names gets the
 * first one's message. */
static bool todo_seen(const json_t *list, const char *concept, int line) {
  size_t i;
  json_t *v;
  json_array_foreach(list, i, v) {
    if (json_integer_value(json_object_get(v, "line")) == line &&
        !strcmp(json_string_value(json_object_get(v, "concept")), concept))
      return true;
  }
  return false;
}

static void emit_todo(ks_tr *x, const char *concept, int line,
                      const char *msg) {
  if (todo_seen(x->todos, concept, line))
    return;
  json_array_append_new(x->todos, json_pack("{s:s,s:i,s:s}", "concept", concept,
                                            "line", line, "message", msg));
  char text[700];
  snprintf(text, sizeof text, "// KSEARCH-TODO(%s): %s (CUDA line %d)", concept,
           msg, line);
  insert_at_line_start(x->out, text);
}

void ks_tr_todo(ks_tr *x, const char *concept, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!concept)
  concept = "literal";
  if (x->nest > 0)
    json_array_append_new(x->pending,
                          json_pack("{s:s,s:i,s:s}", "concept", concept, "line",
                                    line, "message", msg));
  else
    emit_todo(x, concept, line, msg);
}

void ks_tr_note(ks_tr *x, const char *concept, int line, const char *msg) {
  if (!todo_seen(x->todos, concept, line))
    json_array_append_new(x->todos,
                          json_pack("{s:s,s:i,s:s}", "concept", concept, "line",
                                    line, "message", msg));
}

void ks_tr_flush(ks_tr *x) {
  if (x->nest > 0)
    return;
  size_t i;
  json_t *v;
  json_array_foreach(x->pending, i, v) {
    emit_todo(x, json_string_value(json_object_get(v, "concept")),
              (int)json_integer_value(json_object_get(v, "line")),
              json_string_value(json_object_get(v, "message")));
  }
  json_array_clear(x->pending);
}

/* ------------------------------------------------------------ spaces */

bool ks_tr_type_word(const ks_toks *ts, int i) {
  static const char *const k[] = {
      "float",  "double", "int",     "unsigned",     "signed", "long",
      "short",  "char",   "bool",    "half",         "__half", "size_t",
      "uint",   "float2", "float3",  "float4",       "int2",   "int4",
      "uint2",  "uint4",  "half2",   "__half2",      "void",   "uchar",
      "ushort", "ulong",  "double2", "__nv_bfloat16"};
  if (i < 0 || i >= ts->n || ts->t[i].kind != KS_TOK_IDENT)
    return false;
  for (size_t j = 0; j < sizeof k / sizeof *k; j++)
    if (ks_tok_is(ts, i, k[j]))
      return true;
  char w[64];
  ks_tok_text(ts, i, w, sizeof w);
  size_t l = strlen(w);
  return l > 2 && !strcmp(w + l - 2, "_t");
}

const char *ks_tr_space_word(const ks_tr *x, char space) {
  switch (space) {
  case 'g': return x->space_global;
  case 'l': return x->space_shared;
  case 'p': return x->space_private;
  default: return NULL;
  }
}

/* The space of a variable of function f from its declaration: a local
 * pointer takes the space of its initializer, followed to its source. */
static char decl_space(ks_tr *x, const ks_cu_func *f, const char *name,
                       int depth) {
  const ks_toks *ts = x->ts;
  if (!f || depth > 8)
    return 0;
  for (int p = 0; p < f->n_params; p++)
    if (!strcmp(f->params[p].name, name)) {
      if (!f->params[p].is_pointer)
        return 'p';
      return f->is_global ? 'g' : ks_tr_param_space(x, f, p);
    }
  for (int i = f->lbrace + 1; i < f->rbrace; i++) {
    if (!ks_tok_is(ts, i, name) || ks_tok_is(ts, i - 1, ".") ||
        ks_tok_is(ts, i - 1, "->"))
      continue;
    int t = i - 1;
    bool ptr = false;
    while (t > f->lbrace &&
           (ks_tok_is(ts, t, "*") || ks_tok_is(ts, t, "__restrict__") ||
            ks_tok_is(ts, t, "const") || ks_tok_is(ts, t, "restrict"))) {
      ptr |= ks_tok_is(ts, t, "*");
      t--;
    }
    if (!ks_tr_type_word(ts, t))
      continue; /* a use, not the declaration */
    bool shared = false;
    for (int k = t; k > f->lbrace && !ks_tok_is(ts, k, ";") &&
                    !ks_tok_is(ts, k, "{") && !ks_tok_is(ts, k, "}");
         k--)
      shared |= ks_tok_is(ts, k, "__shared__");
    if (shared)
      return 'l';
    if (!ptr)
      return 'p';
    if (!ks_tok_is(ts, i + 1, "="))
      return 0;
    int e = i + 2;
    while (e < f->rbrace && !ks_tok_is(ts, e, ";") && !ks_tok_is(ts, e, ","))
      e = ts->t[e].match > e ? ts->t[e].match + 1 : e + 1;
    int b = ks_tr_base_ident(ts, i + 2, e);
    if (b < 0)
      return 0;
    char src[64];
    ks_tok_text(ts, b, src, sizeof src);
    return decl_space(x, f, src, depth + 1);
  }
  return 0;
}

static char var_space(ks_tr *x, const ks_cu_func *f, const char *name) {
  if (f == x->fn)
    for (int k = 0; k < x->n_ptrs; k++)
      if (!strcmp(x->ptr_name[k], name))
        return x->ptr_space[k];
  return decl_space(x, f, name, 0);
}

/* The identifier an expression starts from: skips ( & * and casts. */
int ks_tr_base_ident(const ks_toks *ts, int a, int b) {
  int i = a;
  while (i < b) {
    if (ks_tok_is(ts, i, "&") || ks_tok_is(ts, i, "*") ||
        ks_tok_is(ts, i, "+") || ks_tok_is(ts, i, "-")) {
      i++;
    } else if (ks_tok_is(ts, i, "(")) {
      /* a cast ( type ... ) is skipped whole; a grouping paren is entered */
      if (ks_tr_type_word(ts, i + 1) || ks_tok_is(ts, i + 1, "const"))
        i = ts->t[i].match + 1;
      else
        i++;
    } else if (ts->t[i].kind == KS_TOK_IDENT) {
      if (ks_tok_is(ts, i, "reinterpret_cast") ||
          ks_tok_is(ts, i, "static_cast")) {
        int gt = i + 1;
        while (gt < b && !ks_tok_is(ts, gt, ">"))
          gt++;
        i = gt + 1;
        continue;
      }
      return i;
    } else {
      return -1;
    }
  }
  return -1;
}

char ks_tr_space_of(ks_tr *x, int a, int b) {
  int i = ks_tr_base_ident(x->ts, a, b);
  if (i < 0 || ks_tok_is(x->ts, i + 1, "("))
    return 0;
  char name[64];
  ks_tok_text(x->ts, i, name, sizeof name);
  return var_space(x, x->fn, name);
}

int ks_tr_args(const ks_toks *ts, int lp, int first[16], int last[16]) {
  int rp = ts->t[lp].match, n = 0;
  if (rp == lp + 1)
    return 0;
  int a = lp + 1;
  for (int i = lp + 1; i <= rp; i++) {
    if (i < rp &&
        (ks_tok_is(ts, i, "(") || ks_tok_is(ts, i, "[") ||
         ks_tok_is(ts, i, "{")) &&
        ts->t[i].match > i) {
      i = ts->t[i].match;
      continue;
    }
    if (i == rp || ks_tok_is(ts, i, ",")) {
      if (n < 16) {
        first[n] = a;
        last[n] = i - 1;
      }
      n++;
      a = i + 1;
    }
  }
  return n;
}

char ks_tr_param_space(ks_tr *x, const ks_cu_func *f, int p) {
  const ks_toks *ts = x->ts;
  char found = 0;
  for (int i = 0; i + 1 < ts->n; i++) {
    if (i == f->name_tok || !ks_tok_is(ts, i, f->name) ||
        !ks_tok_is(ts, i + 1, "(") || ts->t[i + 1].match < 0)
      continue;
    const ks_cu_func *caller = ks_cu_func_at(x->m, i);
    if (!caller || caller == f)
      continue;
    int fa[16], la[16];
    int n = ks_tr_args(ts, i + 1, fa, la);
    if (p >= n || p >= 16)
      continue;
    int b = ks_tr_base_ident(ts, fa[p], la[p] + 1);
    if (b < 0)
      return 0;
    char name[64];
    ks_tok_text(ts, b, name, sizeof name);
    char s = decl_space(x, caller, name, 1);
    if (!s || (found && found != s))
      return 0;
    found = s;
  }
  return found ? found : 'g';
}

/* ------------------------------------------------------------ uses */

/* f and the device functions it reaches, each body read once (a worklist
 * with a visited mark: call graphs with cycles or fan-out stay linear) */
bool ks_tr_uses(const ks_tr *x, const ks_cu_func *f,
                bool (*pred)(const ks_tr *x, int tok)) {
  const ks_toks *ts = x->ts;
  int nf = x->m->n_funcs;
  bool *seen = ks_xcalloc((size_t)nf + 1, sizeof *seen);
  int *work = ks_xmalloc(sizeof(int) * ((size_t)nf + 1));
  int nw = 0;
  bool found = false;
  work[nw++] = (int)(f - x->m->funcs);
  seen[work[0]] = true;
  while (nw && !found) {
    const ks_cu_func *g = &x->m->funcs[work[--nw]];
    if (g->lbrace < 0)
      continue;
    for (int i = g->lbrace + 1; i < g->rbrace && !found; i++) {
      if (x->skip[i])
        continue;
      if (pred(x, i)) {
        found = true;
        break;
      }
      if (ts->t[i].kind == KS_TOK_IDENT && ks_tok_is(ts, i + 1, "(")) {
        char name[64];
        ks_tok_text(ts, i, name, sizeof name);
        const ks_cu_func *h = ks_cu_func_named(x->m, name);
        int hi = h ? (int)(h - x->m->funcs) : -1;
        if (h && !h->is_global && !seen[hi]) {
          seen[hi] = true;
          work[nw++] = hi;
        }
      }
    }
  }
  free(seen);
  free(work);
  return found;
}

/* ------------------------------------------------------------ geometry */

/* object-like #define NAME BODY */
static bool macro_body(const ks_tr *x, const char *name, char *body, size_t n) {
  const ks_toks *ts = x->ts;
  for (int i = 0; i + 1 < ts->n; i++) {
    if (ts->t[i].kind != KS_TOK_PP)
      continue;
    char d[16];
    ks_tr_directive(ts, i, d, sizeof d);
    if (strcmp(d, "define") || !ks_tok_is(ts, i + 1, name))
      continue;
    if (ks_tok_is(ts, i + 2, "(") && ts->t[i + 2].off == ks_tok_end(ts, i + 1))
      return false; /* function-like */
    int e = ks_tr_pp_end(ts, i);
    body[0] = 0;
    size_t o = 0;
    for (int k = i + 2; k < e && o + 1 < n; k++) {
      o += (size_t)snprintf(body + o, n - o, "%s", o ? " " : "");
      char w[96];
      ks_tok_text(ts, k, w, sizeof w);
      o += (size_t)snprintf(body + o, o < n ? n - o : 0, "%s", w);
      if (o >= n)
        o = n - 1;
    }
    return body[0] != 0;
  }
  return false;
}

static void expand_macros(const ks_tr *x, char *e, size_t n) {
  for (int round = 0; round < 8; round++) {
    bool changed = false;
    ks_buf b;
    ks_buf_init(&b);
    for (const char *p = e; *p;) {
      if (isalpha((unsigned char)*p) || *p == '_') {
        const char *q = p;
        while (isalnum((unsigned char)*q) || *q == '_')
          q++;
        char name[96], body[160];
        snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
        if (macro_body(x, name, body, sizeof body)) {
          bool simple = true;
          for (const char *c = body; *c; c++)
            simple &= isalnum((unsigned char)*c) || *c == '_' || *c == '.';
          ks_buf_printf(&b, simple ? "%s" : "(%s)", body);
          changed = true;
        } else {
          ks_buf_append(&b, p, (size_t)(q - p));
        }
        p = q;
      } else {
        ks_buf_append(&b, p, 1);
        p++;
      }
    }
    ks_strlcpy(e, b.data ? b.data : "", n);
    ks_buf_free(&b);
    if (!changed)
      break;
  }
}

static void dims_of(ks_tr *x, const char *text, char out[3][160]) {
  for (int d = 0; d < 3; d++)
    strcpy(out[d], "1");
  const ks_cu_dim3 *v = ks_cu_dim3_named(x->m, text);
  if (v) {
    for (int d = 0; d < 3; d++)
      ks_strlcpy(out[d], v->c[d], sizeof out[d]);
  } else if (!strncmp(text, "dim3(", 5) || !strncmp(text, "dim3 (", 6)) {
    const char *p = strchr(text, '(') + 1;
    int d = 0, depth = 0;
    const char *a = p;
    for (; *p && d < 3; p++) {
      if (*p == '(')
        depth++;
      else if (*p == ')' && depth-- == 0) {
        snprintf(out[d++], sizeof out[0], "%.*s", (int)(p - a), a);
        break;
      } else if (*p == ',' && depth == 0) {
        snprintf(out[d++], sizeof out[0], "%.*s", (int)(p - a), a);
        a = p + 1;
        while (*a == ' ')
          a++;
      }
    }
  } else {
    ks_strlcpy(out[0], text, sizeof out[0]);
  }
  for (int d = 0; d < 3; d++)
    expand_macros(x, out[d], sizeof out[d]);
}

bool ks_tr_geometry(ks_tr *x, const char *k, char grid[3][160],
                    char block[3][160]) {
  const ks_cu_launch *l = ks_cu_launch_of(x->m, k);
  if (!l || !l->grid[0] || !l->block[0])
    return false;
  dims_of(x, l->grid, grid);
  dims_of(x, l->block, block);
  return true;
}

bool ks_tr_plain_expr(const char *e) {
  if (!*e)
    return false;
  for (; *e; e++)
    if (!(isalnum((unsigned char)*e) || strchr("_ +-*/%().", *e)))
      return false;
  return true;
}
