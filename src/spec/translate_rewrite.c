/* translate_rewrite.c — the token walk of the rewriting engine
 * (translate_internal.h): verbatim gaps, from_cuda renames and call templates
 * ($1..$9 for arguments, $T and $AS for the element type and address space
 * of the first argument), address spaces of local pointer declarations and
 * casts, C++ casts, and function bodies. What it asks about the source
 * (spaces, concepts, TODO marks) is in translate_common.c. */
#include "spec/rules.h"
#include "spec/translate_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ rewriting */

static void emit_tok(ks_tr *x, int i) {
  ks_buf_append(x->out, x->ts->src + x->ts->t[i].off, (size_t)x->ts->t[i].len);
}

static const char *fc_to(const json_t *v) {
  return json_is_string(v) ? json_string_value(v)
                           : json_string_value(json_object_get(v, "to"));
}

static const char *atomic_type(const char *elem) {
  if (!strcmp(elem, "float"))
    return "float";
  if (!strcmp(elem, "int") || !strcmp(elem, "int32_t"))
    return "int";
  if (!strcmp(elem, "unsigned") || !strcmp(elem, "unsigned int") ||
      !strcmp(elem, "uint") || !strcmp(elem, "uint32_t"))
    return "uint";
  return NULL;
}

/* Emits template tpl for the call whose '(' is at lp (or none: lp < 0). */
static void emit_template(ks_tr *x, const char *key, const json_t *v, int i,
                          int lp) {
  const char *tpl = fc_to(v);
  int fa[16], la[16], n = lp >= 0 ? ks_tr_args(x->ts, lp, fa, la) : 0;
  char *args[16] = {0};
  x->nest++;
  for (int k = 0; k < n && k < 16; k++)
    args[k] = ks_tr_string(x, fa[k], la[k] + 1);
  x->nest--;
  int line = x->ts->t[i].line;
  ks_buf tmp;
  ks_buf_init(&tmp);
  for (const char *p = tpl; *p; p++) {
    if (p[0] == '$' && p[1] >= '1' && p[1] <= '9') {
      int k = p[1] - '1';
      ks_buf_puts(&tmp, k < n && args[k] ? args[k] : "");
      p++;
    } else if (p[0] == '$' && (p[1] == 'T' || (p[1] == 'A' && p[2] == 'S'))) {
      bool is_t = p[1] == 'T';
      char sp = n ? ks_tr_space_of(x, fa[0], la[0] + 1) : 0;
      int b = n ? ks_tr_base_ident(x->ts, fa[0], la[0] + 1) : -1;
      char name[64] = "", elem[64] = "";
      bool shared = false;
      if (b >= 0)
        ks_tok_text(x->ts, b, name, sizeof name);
      if (b >= 0 && x->fn)
        ks_cu_var_type(x->m, x->fn, name, elem, sizeof elem, &shared);
      const char *w = is_t ? atomic_type(elem) : ks_tr_space_word(x, sp);
      if (!w || !*w) {
        w = is_t ? "float" : "device";
        ks_tr_todo(x, "atomics", line,
                   "%s of the atomic's target (%s) not known; check the "
                   "cast",
                   is_t ? "element type" : "address space",
                   name[0] ? name : "?");
      }
      ks_buf_puts(&tmp, w);
      p += is_t ? 1 : 2;
    } else {
      ks_buf_append(&tmp, p, 1);
    }
  }
  ks_buf_puts(x->out, tmp.data ? tmp.data : "");
  ks_buf_free(&tmp);
  const char *todo = json_string_value(json_object_get(v, "todo"));
  if (todo) {
    /* the message may name arguments too */
    char msg[512];
    size_t o = 0;
    for (const char *p = todo; *p && o + 1 < sizeof msg; p++) {
      if (p[0] == '$' && p[1] >= '1' && p[1] <= '9') {
        int k = p[1] - '1';
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s",
                              k < n && args[k] ? args[k] : "?");
        if (o >= sizeof msg)
          o = sizeof msg - 1;
        p++;
      } else {
        msg[o++] = *p;
      }
    }
    msg[o] = 0;
    const char *c = json_string_value(json_object_get(v, "concept"));
    ks_tr_todo(x, c, line, "%s: %s", key, msg);
  }
  for (int k = 0; k < n && k < 16; k++)
    free(args[k]);
  ks_tr_flush(x);
}

static bool decl_start(const ks_toks *ts, int i) {
  int p = ks_tok_prev(ts, i);
  if (p < 0)
    return true;
  if (ks_tok_is(ts, p, ";") || ks_tok_is(ts, p, "{") || ks_tok_is(ts, p, "}"))
    return true;
  return ks_tok_is(ts, p, "(") && ks_tok_is(ts, ks_tok_prev(ts, p), "for");
}

/* [const] type... [const] *+ [__restrict__] name (= init | ; | ,) */
static void pointer_decl(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  int j = i;
  while (ks_tok_is(ts, j, "const") || ks_tok_is(ts, j, "volatile"))
    j++;
  if (!ks_tr_type_word(ts, j))
    return;
  while (ks_tr_type_word(ts, j) || ks_tok_is(ts, j, "const"))
    j++;
  if (!ks_tok_is(ts, j, "*"))
    return;
  while (ks_tok_is(ts, j, "*") || ks_tok_is(ts, j, "const") ||
         ks_tok_is(ts, j, "__restrict__") || ks_tok_is(ts, j, "restrict"))
    j++;
  if (j >= end || ts->t[j].kind != KS_TOK_IDENT)
    return;
  int name = j;
  char sp = 0;
  if (ks_tok_is(ts, name + 1, "=")) {
    int e = name + 2;
    while (e < end && !ks_tok_is(ts, e, ";") && !ks_tok_is(ts, e, ","))
      e = ts->t[e].match > e ? ts->t[e].match + 1 : e + 1;
    sp = ks_tr_space_of(x, name + 2, e);
  }
  char nm[64];
  ks_tok_text(ts, name, nm, sizeof nm);
  const char *w = ks_tr_space_word(x, sp);
  if (!w) {
    ks_tr_todo(x, "coalesced_access", ts->t[name].line,
               "pointer %s needs an address space (%s or %s); it was not "
               "inferred from its initializer",
               nm, x->space_global, x->space_shared);
    return;
  }
  if (*w) {
    ks_buf_puts(x->out, w);
    ks_buf_puts(x->out, " ");
  }
  if (x->n_ptrs < KS_TR_MAX_PTRS) {
    ks_strlcpy(x->ptr_name[x->n_ptrs], nm, 64);
    x->ptr_space[x->n_ptrs++] = sp;
  }
}

/* ( [const] type [const] *+ ) operand : a pointer cast needs a space */
static int pointer_cast(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  int rp = ts->t[i].match;
  if (rp < 0 || rp >= end)
    return -1;
  int j = i + 1;
  while (ks_tok_is(ts, j, "const") || ks_tok_is(ts, j, "volatile"))
    j++;
  if (!ks_tr_type_word(ts, j))
    return -1;
  while (ks_tr_type_word(ts, j) || ks_tok_is(ts, j, "const"))
    j++;
  if (!ks_tok_is(ts, j, "*"))
    return -1;
  while (ks_tok_is(ts, j, "*") || ks_tok_is(ts, j, "const"))
    j++;
  if (j != rp)
    return -1;
  char sp = ks_tr_space_of(x, rp + 1, end);
  const char *w = ks_tr_space_word(x, sp);
  ks_buf_puts(x->out, "(");
  if (!w)
    ks_tr_todo(x, "vector_loads_128", ts->t[i].line,
               "this pointer cast needs an address space (%s or %s)",
               x->space_global, x->space_shared);
  else if (*w)
    ks_buf_printf(x->out, "%s ", w);
  return i + 1;
}

/* reinterpret_cast<T>(e) / static_cast<T>(e) / const_cast<T>(e) */
static int cxx_cast(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  if (!ks_tok_is(ts, i + 1, "<"))
    return -1;
  int gt = i + 2;
  while (gt < end && !ks_tok_is(ts, gt, ">"))
    gt++;
  int lp = gt + 1;
  if (!ks_tok_is(ts, lp, "(") || ts->t[lp].match < 0)
    return -1;
  int rp = ts->t[lp].match;
  bool ptr = false;
  for (int k = i + 2; k < gt; k++)
    ptr |= ks_tok_is(ts, k, "*");
  const char *w = "";
  if (ptr) {
    w = ks_tr_space_word(x, ks_tr_space_of(x, lp + 1, rp));
    if (!w) {
      ks_tr_todo(x, "vector_loads_128", ts->t[i].line,
                 "this pointer cast needs an address space (%s or %s)",
                 x->space_global, x->space_shared);
      w = "";
    }
  }
  x->nest++;
  char *type = ks_tr_string(x, i + 2, gt);
  char *e = ks_tr_string(x, lp + 1, rp);
  x->nest--;
  if (x->cpp) {
    char kind[32];
    ks_tok_text(ts, i, kind, sizeof kind);
    ks_buf_printf(x->out, "%s<%s%s%s>(%s)", kind, w, *w ? " " : "", type, e);
  } else {
    ks_buf_printf(x->out, "((%s%s%s)(%s))", w, *w ? " " : "", type, e);
  }
  free(type);
  free(e);
  ks_tr_flush(x);
  return rp + 1;
}

static int tr_ident(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  char w[128];
  ks_tok_text(ts, i, w, sizeof w);
  const json_t *fc = x->t->from_cuda;
  bool member = ks_tok_is(ts, i - 1, ".") || ks_tok_is(ts, i - 1, "->");
  if (member) {
    emit_tok(x, i);
    return i + 1;
  }
  if (x->fn && x->space_global[0] && decl_start(ts, i))
    pointer_decl(x, i, end);
  if (ks_tok_is(ts, i, "reinterpret_cast") || ks_tok_is(ts, i, "static_cast") ||
      ks_tok_is(ts, i, "const_cast")) {
    int r = cxx_cast(x, i, end);
    if (r >= 0)
      return r;
  }
  /* a.b member forms: threadIdx.x */
  if (ks_tok_is(ts, i + 1, ".") && i + 2 < end &&
      ts->t[i + 2].kind == KS_TOK_IDENT) {
    char key[200], m[64];
    ks_tok_text(ts, i + 2, m, sizeof m);
    snprintf(key, sizeof key, "%s.%s", w, m);
    const json_t *v = json_object_get(fc, key);
    if (v) {
      emit_template(x, key, v, i, -1);
      return i + 3;
    }
  }
  /* calls: name/N templates take arguments */
  if (ks_tok_is(ts, i + 1, "(") && ts->t[i + 1].match > 0 &&
      ts->t[i + 1].match < end) {
    int fa[16], la[16];
    int n = ks_tr_args(ts, i + 1, fa, la);
    char key[200];
    snprintf(key, sizeof key, "%s/%d", w, n);
    /* a name/N template replaces the whole call */
    const json_t *v = json_object_get(fc, key);
    if (v) {
      emit_template(x, key, v, i, i + 1);
      return ts->t[i + 1].match + 1;
    }
  }
  const json_t *v = json_object_get(fc, w);
  if (v && !strchr(fc_to(v), '$')) {
    emit_template(x, w, v, i, -1);
    return i + 1;
  }
  char what[192], why[256];
  const ks_spec_rule *r =
      ks_spec_rule_at(x->t, ts, i, what, sizeof what, why, sizeof why);
  if (r) {
    ks_tr_todo(x, ks_tr_concept_for(x, w, ts->t[i].line), ts->t[i].line,
               "%s has no literal form on %s: %s", what, x->t->id, why);
  }
  emit_tok(x, i);
  return i + 1;
}

static int tr_token(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  if (x->hook) {
    int r = x->hook(x, i, end);
    if (r >= 0)
      return r;
  }
  if (ts->t[i].kind == KS_TOK_IDENT)
    return tr_ident(x, i, end);
  if (x->fn && x->space_global[0] && ks_tok_is(ts, i, "(")) {
    int r = pointer_cast(x, i, end);
    if (r >= 0)
      return r;
  }
  emit_tok(x, i);
  return i + 1;
}

void ks_tr_range(ks_tr *x, int a, int b) {
  const ks_toks *ts = x->ts;
  if (a >= b)
    return;
  int prev_end = ts->t[a].off;
  bool dropping = false;
  for (int i = a; i < b;) {
    if (x->skip[i]) {
      if (!dropping) {
        /* the gap before the dropped directive, then a note */
        ks_buf_append(x->out, ts->src + prev_end,
                      (size_t)(ts->t[i].off - prev_end));
        int j = i;
        while (j + 1 < b && x->skip[j + 1])
          j++;
        ks_buf_printf(x->out,
                      "/* ksearch translate: dropped the __CUDA_ARCH__ "
                      "branch (CUDA lines %d-%d) */",
                      ts->t[i].line, ts->t[j].line);
      }
      dropping = true;
      prev_end = ks_tok_end(ts, i);
      i++;
      continue;
    }
    dropping = false;
    if (ts->t[i].off > prev_end)
      ks_buf_append(x->out, ts->src + prev_end,
                    (size_t)(ts->t[i].off - prev_end));
    int next = tr_token(x, i, b);
    if (next <= i)
      next = i + 1;
    prev_end = ks_tok_end(ts, next - 1);
    i = next;
  }
}

char *ks_tr_string(ks_tr *x, int a, int b) {
  ks_buf tmp, *saved = x->out;
  ks_buf_init(&tmp);
  x->out = &tmp;
  x->nest++;
  ks_tr_range(x, a, b);
  x->nest--;
  x->out = saved;
  char *s = ks_strdup(tmp.data ? tmp.data : "");
  ks_buf_free(&tmp);
  /* trim */
  size_t l = strlen(s);
  while (l && isspace((unsigned char)s[l - 1]))
    s[--l] = 0;
  size_t k = 0;
  while (isspace((unsigned char)s[k]))
    k++;
  memmove(s, s + k, l - k + 1);
  return s;
}

void ks_tr_body(ks_tr *x, const ks_cu_func *f, const char *prologue) {
  const ks_toks *ts = x->ts;
  ks_buf_puts(x->out, "{");
  if (prologue)
    ks_buf_puts(x->out, prologue);
  if (f->lbrace + 1 < f->rbrace) {
    ks_tr_copy_gap(x, ks_tok_end(ts, f->lbrace), ts->t[f->lbrace + 1].off);
    ks_tr_range(x, f->lbrace + 1, f->rbrace);
    ks_tr_copy_gap(x, ks_tok_end(ts, f->rbrace - 1), ts->t[f->rbrace].off);
  } else {
    ks_tr_copy_gap(x, ks_tok_end(ts, f->lbrace), ts->t[f->rbrace].off);
  }
  ks_buf_puts(x->out, "}");
}
