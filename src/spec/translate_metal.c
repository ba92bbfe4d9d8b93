/* translate_metal.c — CUDA to Metal for mx.fast.metal_kernel (see
 * translate.h and specs/targets/mlx.json). MLX writes the kernel signature
 * itself, so each __global__ kernel becomes a body (source=) plus names:
 * const pointers and scalars are inputs (scalars as 0-d arrays), other
 * pointers outputs. Device functions, macros and constants go to header=;
 * a helper that reads thread indices gets them as extra uint3 arguments,
 * since MLX declares attributes only for names the body mentions. The
 * output is a Python module that builds and launches each kernel with the
 * CUDA launch's geometry (MLX grids count threads). */
#include "spec/translate_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_attr_cuda[] = {"threadIdx", "blockIdx", "blockDim",
                                          "gridDim"};
static const char *const k_attr_metal[] = {
    "thread_position_in_threadgroup", "threadgroup_position_in_grid",
    "threads_per_threadgroup", "threadgroups_per_grid"};
#define N_ATTR 4

/* ------------------------------------------------------------ analysis */

static int g_attr; /* the attribute uses_attr looks for */

static bool uses_attr_tok(const ks_tr *x, int i) {
  return ks_tok_is(x->ts, i, k_attr_cuda[g_attr]);
}

/* Bit a of the result: device function f needs attribute a. */
static unsigned attrs_of(const ks_tr *x, const ks_cu_func *f) {
  unsigned m = 0;
  for (int a = 0; a < N_ATTR; a++) {
    g_attr = a;
    if (ks_tr_uses(x, f, uses_attr_tok))
      m |= 1u << a;
  }
  return m;
}

static const char *mx_dtype(const char *elem) {
  static const struct {
    const char *c, *mx;
  } k[] = {{"float", "float32"},       {"half", "float16"},
           {"__half", "float16"},      {"__nv_bfloat16", "bfloat16"},
           {"bfloat", "bfloat16"},     {"int", "int32"},
           {"int32_t", "int32"},       {"unsigned", "uint32"},
           {"unsigned int", "uint32"}, {"uint", "uint32"},
           {"uint32_t", "uint32"},     {"int64_t", "int64"},
           {"long", "int64"},          {"long long", "int64"},
           {"uint64_t", "uint64"},     {"unsigned long long", "uint64"},
           {"short", "int16"},         {"int16_t", "int16"},
           {"uint16_t", "uint16"},     {"char", "int8"},
           {"int8_t", "int8"},         {"uint8_t", "uint8"},
           {"unsigned char", "uint8"}, {"bool", "bool_"},
           {"size_t", "uint64"}};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++)
    if (!strcmp(elem, k[i].c))
      return k[i].mx;
  return NULL;
}

/* ------------------------------------------------------------ hook */

static int metal_hook(ks_tr *x, int i, int end) {
  const ks_toks *ts = x->ts;
  const ks_tok *t = &ts->t[i];
  if (t->kind == KS_TOK_PP) {
    char d[16];
    ks_tr_directive(ts, i, d, sizeof d);
    if (strcmp(d, "include"))
      return -1;
    char h[128];
    ks_tok_text(ts, i + 1, h, sizeof h);
    ks_buf_printf(x->out,
                  "/* ksearch translate: #include %s dropped (MLX includes "
                  "metal_stdlib) */",
                  h);
    return ks_tr_pp_end(ts, i);
  }
  if (t->kind != KS_TOK_IDENT)
    return -1;
  const ks_cu_func *f = x->fn;
  if (ks_tok_is(ts, i, "long") && ks_tok_is(ts, i + 1, "long")) {
    ks_buf_puts(x->out, "long");
    return i + 2;
  }
  if (ks_tok_is(ts, i, "template")) {
    ks_tr_todo(x, "literal", t->line,
               "templates: MLX instantiates kernels through template=[(name, "
               "value)] arguments; write the body for those names");
    return -1;
  }
  if (f && ks_tok_is(ts, i, "extern") && ks_tok_is(ts, i + 1, "__shared__")) {
    ks_tr_todo(x, "shared_memory_tiling", t->line,
               "dynamic shared memory: an mx.fast.metal_kernel body declares "
               "threadgroup arrays of a fixed size (at most 32 KiB in all); "
               "give this one a size (a template argument)");
    return -1;
  }
  if (f && ks_tok_is(ts, i, "__shared__")) {
    if (!f->is_global)
      ks_tr_todo(x, "shared_memory_tiling", t->line,
                 "threadgroup variables live in the kernel body: declare it "
                 "there and pass a threadgroup pointer to this helper");
    else if (ks_tr_body_depth(x, f, i) > 0)
      ks_tr_todo(x, "shared_memory_tiling", t->line,
                 "threadgroup variables belong at kernel scope: move this "
                 "declaration to the top of the body");
    return -1;
  }
  /* calls of helpers that read thread indices get them as arguments */
  if (ks_tok_is(ts, i + 1, "(") && ts->t[i + 1].match > 0 &&
      ts->t[i + 1].match < end) {
    char name[64];
    ks_tok_text(ts, i, name, sizeof name);
    const ks_cu_func *g = ks_cu_func_named(x->m, name);
    unsigned need = g && !g->is_global && g->name_tok != i ? attrs_of(x, g) : 0;
    if (need) {
      int rp = ts->t[i + 1].match;
      x->nest++;
      char *args = ks_tr_string(x, i + 2, rp);
      x->nest--;
      ks_buf_printf(x->out, "%s(%s", name, args);
      bool first = !*args;
      for (int a = 0; a < N_ATTR; a++)
        if (need & (1u << a)) {
          ks_buf_printf(x->out, "%s%s", first ? "" : ", ", k_attr_metal[a]);
          first = false;
        }
      ks_buf_puts(x->out, ")");
      free(args);
      ks_tr_flush(x);
      return rp + 1;
    }
  }
  return -1;
}

/* ------------------------------------------------------------ functions */

static void emit_helper(ks_tr *x, const ks_cu_func *f) {
  const ks_toks *ts = x->ts;
  ks_tr_enter(x, f);
  ks_buf_puts(x->out, "inline ");
  for (int i = f->decl_first; i < f->name_tok; i++) {
    static const char *const drop[] = {"__device__",      "__host__",
                                       "__forceinline__", "inline",
                                       "static",          "__noinline__"};
    bool d = false;
    for (size_t k = 0; k < sizeof drop / sizeof *drop; k++)
      d |= ks_tok_is(ts, i, drop[k]);
    if (d || ts->t[i].in_pp || ts->t[i].kind == KS_TOK_PP ||
        ts->t[i].kind == KS_TOK_PP_END)
      continue;
    char *w = ks_tr_string(x, i, i + 1);
    ks_buf_printf(x->out, "%s ", w);
    free(w);
  }
  ks_buf_printf(x->out, "%s(", f->name);
  int n = 0;
  for (int p = 0; p < f->n_params; p++, n++) {
    const ks_cu_param *pr = &f->params[p];
    char *text = ks_tr_string(x, pr->first, pr->last + 1);
    const char *sp = "";
    if (pr->is_pointer && !strstr(text, "device") &&
        !strstr(text, "threadgroup")) {
      char s = ks_tr_param_space(x, f, p);
      sp = s == 'l' ? "threadgroup " : s == 'p' ? "thread " : "device ";
      if (!s)
        ks_tr_todo(x, "shared_memory_tiling", ts->t[pr->first].line,
                   "pointer parameter %s of %s: callers pass different "
                   "address spaces; assumed device (write one copy per "
                   "space)",
                   pr->name, f->name);
    }
    ks_buf_printf(x->out, "%s%s%s", p ? ", " : "", sp, text);
    free(text);
  }
  unsigned need = attrs_of(x, f);
  for (int a = 0; a < N_ATTR; a++)
    if (need & (1u << a))
      ks_buf_printf(x->out, "%suint3 %s", n++ ? ", " : "", k_attr_metal[a]);
  ks_buf_puts(x->out, ") ");
  ks_tr_body(x, f, NULL);
  ks_buf_puts(x->out, "\n");
  ks_tr_enter(x, NULL);
}

static void py_expr(const char *e, ks_buf *b) {
  /* C integer division becomes Python's // */
  for (const char *p = e; *p; p++) {
    if (*p == '/')
      ks_buf_puts(b, "//");
    else
      ks_buf_append(b, p, 1);
  }
}

/* names an expression uses that are not kernel parameters */
static void free_names(const char *e, const ks_cu_func *k, json_t *names) {
  for (const char *p = e; *p;) {
    if (isalpha((unsigned char)*p) || *p == '_') {
      const char *q = p;
      while (isalnum((unsigned char)*q) || *q == '_')
        q++;
      char w[64];
      snprintf(w, sizeof w, "%.*s", (int)(q - p), p);
      bool param = false;
      for (int i = 0; i < k->n_params; i++)
        param |= !strcmp(k->params[i].name, w);
      bool seen = false;
      size_t j;
      json_t *v;
      json_array_foreach(names, j, v) seen |= !strcmp(json_string_value(v), w);
      if (!param && !seen)
        json_array_append_new(names, json_string(w));
      p = q;
    } else {
      p++;
    }
  }
}

static void upper(const char *s, char *out, size_t n) {
  size_t i = 0;
  for (; s[i] && i + 1 < n; i++)
    out[i] = (char)toupper((unsigned char)s[i]);
  out[i] = 0;
}

/* The kernel's entry in out->kernels and its part of the Python module.
 * body is x->out while this runs: a TODO mark inserted here reallocates it,
 * so its text is read where it is used, never kept across a ks_tr_todo
 * (a kept pointer was a use-after-free the cuda_lexer fuzz target found). */
static const char *body_text(const ks_buf *body) {
  return body->data ? body->data : "";
}

static void emit_kernel(ks_tr *x, const ks_cu_func *k, const ks_buf *body,
                        ks_translation *out, ks_buf *py) {
  json_t *in = json_array(), *outn = json_array(), *ind = json_array(),
         *outd = json_array();
  for (int p = 0; p < k->n_params; p++) {
    const ks_cu_param *pr = &k->params[p];
    const char *dt = mx_dtype(pr->elem);
    if (!dt)
      ks_tr_todo(x, "half_bf16_conversion", k->line,
                 "parameter %s: no MLX dtype for `%s`", pr->name, pr->elem);
    bool output = pr->is_pointer && !pr->is_const;
    json_array_append_new(output ? outn : in, json_string(pr->name));
    json_array_append_new(output ? outd : ind, json_string(dt ? dt : "?"));
  }
  char g[3][160], b[3][160];
  bool geo = ks_tr_geometry(x, k->name, g, b);
  bool plain = geo;
  for (int d = 0; geo && d < 3; d++)
    plain &= ks_tr_plain_expr(g[d]) && ks_tr_plain_expr(b[d]);
  json_t *kj = json_pack("{s:s,s:i,s:O,s:O,s:O,s:O,s:s,s:s}", "name", k->name,
                         "line", k->line, "input_names", in, "output_names",
                         outn, "input_dtypes", ind, "output_dtypes", outd,
                         "source", body_text(body), "header", "");
  if (geo) {
    char gt[3][400];
    for (int d = 0; d < 3; d++)
      if (!strcmp(g[d], "1"))
        snprintf(gt[d], sizeof gt[d], "%s", b[d]);
      else if (!strcmp(b[d], "1"))
        snprintf(gt[d], sizeof gt[d], "%s", g[d]);
      else
        snprintf(gt[d], sizeof gt[d], "(%s)*(%s)", g[d], b[d]);
    json_object_set_new(kj, "grid", json_pack("[s,s,s]", gt[0], gt[1], gt[2]));
    json_object_set_new(kj, "threadgroup",
                        json_pack("[s,s,s]", b[0], b[1], b[2]));
  } else {
    char msg[200];
    snprintf(msg, sizeof msg,
             "no <<<grid, block>>> launch of %s in the CUDA file: pass grid "
             "(threads) and threadgroup by hand",
             k->name);
    ks_tr_note(x, "thread_parallel", k->line, msg);
  }
  json_array_append_new(out->kernels, kj);
  /* Python */
  char up[80];
  upper(k->name, up, sizeof up);
  ks_buf_printf(py, "%s_SOURCE = r\"\"\"\n%s\n\"\"\"\n\n", up, body_text(body));
  ks_buf_printf(py,
                "%s_kernel = mx.fast.metal_kernel(\n    name=\"%s\",\n"
                "    input_names=[",
                k->name, k->name);
  size_t i;
  json_t *v;
  json_array_foreach(in, i, v)
      ks_buf_printf(py, "%s\"%s\"", i ? ", " : "", json_string_value(v));
  ks_buf_puts(py, "],\n    output_names=[");
  json_array_foreach(outn, i, v)
      ks_buf_printf(py, "%s\"%s\"", i ? ", " : "", json_string_value(v));
  ks_buf_printf(py, "],\n    source=%s_SOURCE,\n    header=HEADER,\n)\n\n\n",
                up);
  /* launcher */
  json_t *extra = json_array();
  for (int d = 0; geo && d < 3; d++) {
    free_names(g[d], k, extra);
    free_names(b[d], k, extra);
  }
  ks_buf_printf(py, "def %s(", k->name);
  int np = 0;
  json_array_foreach(in, i, v)
      ks_buf_printf(py, "%s%s", np++ ? ", " : "", json_string_value(v));
  ks_buf_printf(py, "%s*", np ? ", " : "");
  json_array_foreach(outn, i, v)
      ks_buf_printf(py, ", %s_shape", json_string_value(v));
  json_array_foreach(extra, i, v)
      ks_buf_printf(py, ", %s", json_string_value(v));
  ks_buf_puts(py, "):\n");
  if (geo)
    ks_buf_printf(py,
                  "    \"\"\"CUDA launched <<<(%s, %s, %s), (%s, %s, %s)>>>; "
                  "MLX grids count threads.\"\"\"\n",
                  g[0], g[1], g[2], b[0], b[1], b[2]);
  ks_buf_puts(py, "    outputs = ");
  ks_buf_printf(py, "%s_kernel(\n        inputs=[", k->name);
  for (int p = 0, n = 0; p < k->n_params; p++) {
    const ks_cu_param *pr = &k->params[p];
    if (pr->is_pointer && !pr->is_const)
      continue;
    const char *dt = mx_dtype(pr->elem);
    if (pr->is_pointer)
      ks_buf_printf(py, "%s%s", n++ ? ", " : "", pr->name);
    else
      ks_buf_printf(py, "%smx.array(%s, dtype=mx.%s)", n++ ? ", " : "",
                    pr->name, dt ? dt : "float32");
  }
  ks_buf_puts(py, "],\n");
  if (geo && plain) {
    ks_buf_puts(py, "        grid=(");
    for (int d = 0; d < 3; d++) {
      ks_buf_puts(py, d ? ", " : "");
      if (!strcmp(g[d], "1") || !strcmp(b[d], "1")) {
        py_expr(strcmp(g[d], "1") ? g[d] : b[d], py);
      } else {
        ks_buf_puts(py, "(");
        py_expr(g[d], py);
        ks_buf_puts(py, ") * (");
        py_expr(b[d], py);
        ks_buf_puts(py, ")");
      }
    }
    ks_buf_puts(py, "),\n        threadgroup=(");
    for (int d = 0; d < 3; d++) {
      ks_buf_puts(py, d ? ", " : "");
      py_expr(b[d], py);
    }
    ks_buf_puts(py, "),\n");
  } else {
    ks_buf_puts(py, "        grid=GRID,  # KSEARCH-TODO(thread_parallel): the "
                    "CUDA launch is not a plain expression\n"
                    "        threadgroup=THREADGROUP,\n");
  }
  ks_buf_puts(py, "        output_shapes=[");
  json_array_foreach(outn, i, v)
      ks_buf_printf(py, "%s%s_shape", i ? ", " : "", json_string_value(v));
  ks_buf_puts(py, "],\n        output_dtypes=[");
  json_array_foreach(outd, i, v)
      ks_buf_printf(py, "%smx.%s", i ? ", " : "", json_string_value(v));
  ks_buf_printf(py, "],\n    )\n    return outputs%s\n\n\n",
                json_array_size(outn) == 1 ? "[0]" : "");
  json_decref(extra);
  json_decref(in);
  json_decref(outn);
  json_decref(ind);
  json_decref(outd);
}

static int cmp_func(const void *a, const void *b) {
  const ks_cu_func *const *x = a, *const *y = b;
  return (*x)->decl_first - (*y)->decl_first;
}

ks_code ks_translate_metal(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_metal(ks_tr *x, ks_translation *out, ks_err *err) {
  (void)err;
  const ks_cu_model *m = x->m;
  const ks_toks *ts = x->ts;
  x->hook = metal_hook;
  x->space_global = "device";
  x->space_shared = "threadgroup";
  x->space_private = "thread";
  x->cpp = true;
  ks_buf header, py;
  ks_buf_init(&header);
  ks_buf_init(&py);
  const ks_cu_func **fs = ks_xmalloc(sizeof *fs * (size_t)(m->n_funcs + 1));
  for (int i = 0; i < m->n_funcs; i++)
    fs[i] = &m->funcs[i];
  qsort(fs, (size_t)m->n_funcs, sizeof *fs, cmp_func);
  /* header: everything but kernels and host code */
  x->out = &header;
  int cursor = 0, prev_end = 0;
  for (int k = 0; k < m->n_funcs; k++) {
    const ks_cu_func *f = fs[k];
    if (f->decl_first > cursor) {
      ks_tr_copy_gap(x, prev_end, ts->t[cursor].off);
      ks_tr_range(x, cursor, f->decl_first);
      prev_end = ks_tok_end(ts, f->decl_first - 1);
    }
    ks_tr_copy_gap(x, prev_end, ts->t[f->decl_first].off);
    if (f->is_device && !f->is_global)
      emit_helper(x, f);
    cursor = f->rbrace + 1;
    prev_end = ks_tok_end(ts, f->rbrace);
  }
  if (cursor < ts->n) {
    ks_tr_copy_gap(x, prev_end, ts->t[cursor].off);
    ks_tr_range(x, cursor, ts->n);
  }
  /* kernels: the body only */
  ks_buf_printf(&py,
                "\"\"\"CUDA kernels of %s as MLX custom Metal kernels.\n\n"
                "Written by `ksearch translate --to metal`: each __global__ "
                "kernel is an\nmx.fast.metal_kernel body (MLX writes the "
                "signature from input_names and\noutput_names); helpers, "
                "macros and constants are in HEADER. Launch geometry\ncomes "
                "from the CUDA <<<grid, block>>> (MLX grids count threads). "
                "KSEARCH-TODO\ncomments mark what has no literal form.\n"
                "\"\"\"\nimport mlx.core as mx\n\n",
                m->path);
  ks_buf bodies;
  ks_buf_init(&bodies);
  for (int k = 0; k < m->n_funcs; k++) {
    const ks_cu_func *f = fs[k];
    if (!f->is_global)
      continue;
    ks_buf body;
    ks_buf_init(&body);
    x->out = &body;
    ks_tr_enter(x, f);
    if (f->is_template)
      ks_tr_todo(x, "literal", f->line,
                 "template kernel %s: pass its parameters as MLX "
                 "template=[(name, value)] arguments",
                 f->name);
    if (f->lbrace + 1 < f->rbrace) {
      /* keep the first line's indentation, not the brace's newline */
      int from = ks_tok_end(ts, f->lbrace), to = ts->t[f->lbrace + 1].off;
      while (from < to && ts->src[from] != '\n')
        from++;
      ks_tr_copy_gap(x, from < to ? from + 1 : to, to);
      ks_tr_range(x, f->lbrace + 1, f->rbrace);
    }
    ks_tr_enter(x, NULL);
    emit_kernel(x, f, &body, out, &bodies);
    ks_buf_free(&body);
  }
  /* the header goes into each kernel's JSON entry */
  size_t i;
  json_t *kv;
  json_array_foreach(out->kernels, i, kv) {
    json_object_set_new(kv, "header",
                        json_string(header.data ? header.data : ""));
  }
  ks_buf_printf(&py, "HEADER = r\"\"\"\n%s\n\"\"\"\n\n\n",
                header.data ? header.data : "");
  ks_buf_puts(&py, bodies.data ? bodies.data : "");
  ks_buf_puts(&out->code, py.data);
  ks_buf_free(&bodies);
  ks_buf_free(&header);
  ks_buf_free(&py);
  free(fs);
  x->out = &out->code;
  return KS_OK;
}
