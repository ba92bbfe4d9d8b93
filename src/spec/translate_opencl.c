/* translate_opencl.c — CUDA to OpenCL C (see translate.h). Kernels become
 * __kernel functions with __global pointer parameters, device functions
 * static inline functions whose pointer parameters take the address space
 * their callers pass, host code is dropped, and the kernel launches become
 * `// ksearch: launch` lines for the opencl backend. Warp primitives are
 * emulated lane for lane through a __local scratch array (helpers in the
 * prelude), so kernels written for warps of 32 keep their meaning on any
 * OpenCL device, PoCL's CPU device included. */
#include "spec/translate_internal.h"

#include <stdlib.h>
#include <string.h>

static const char k_warp_prelude[] =
    "// ---- ksearch translate: CUDA warp primitives for OpenCL C ----\n"
    "// A warp is 32 consecutive work-items (x fastest, as CUDA numbers "
    "threads);\n"
    "// values move through __local memory between two barriers, so every\n"
    "// work-item of the work-group must reach each call, as with "
    "barrier().\n"
    "#ifndef KS_GROUP_MAX\n"
    "#define KS_GROUP_MAX 1024 /* the largest work-group size used */\n"
    "#endif\n"
    "#define KS_OVL __attribute__((overloadable))\n"
    "static inline int ks_lid(void) {\n"
    "  return (int)(get_local_id(0) + get_local_size(0) *\n"
    "               (get_local_id(1) + get_local_size(1) * "
    "get_local_id(2)));\n"
    "}\n"
    "static inline int ks_gsize(void) {\n"
    "  return (int)(get_local_size(0) * get_local_size(1) * "
    "get_local_size(2));\n"
    "}\n"
    "static inline int ks_xchg(__local int *s, int v, int src_lane) {\n"
    "  int lid = ks_lid(), src = lid - lid % 32 + src_lane;\n"
    "  s[lid] = v;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int r = src < ks_gsize() ? s[src] : v;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  return r;\n"
    "}\n"
    "/* source lanes with CUDA's width semantics (w a power of two <= 32) */\n"
    "static inline int ks_lane_xor(int m, int w) {\n"
    "  int l = ks_lid() % 32, s = l ^ m;\n"
    "  return (s & ~(w - 1)) == (l & ~(w - 1)) ? s : l;\n"
    "}\n"
    "static inline int ks_lane_down(int d, int w) {\n"
    "  int l = ks_lid() % 32, s = l + d;\n"
    "  return s < (l & ~(w - 1)) + w ? s : l;\n"
    "}\n"
    "static inline int ks_lane_up(int d, int w) {\n"
    "  int l = ks_lid() % 32, s = l - d;\n"
    "  return s >= (l & ~(w - 1)) ? s : l;\n"
    "}\n"
    "static inline int ks_lane_idx(int i, int w) {\n"
    "  return ((ks_lid() % 32) & ~(w - 1)) + (i & (w - 1));\n"
    "}\n"
    "#define KS_SHFL(NAME, LANE)                                              "
    "      \\\n"
    "  static inline KS_OVL float NAME(__local int *s, float v, int a, int w) "
    "{     \\\n"
    "    return as_float(ks_xchg(s, as_int(v), LANE(a, w)));                 "
    "      \\\n"
    "  }                                                                     "
    "      \\\n"
    "  static inline KS_OVL int NAME(__local int *s, int v, int a, int w) {   "
    "      \\\n"
    "    return ks_xchg(s, v, LANE(a, w));                                   "
    "      \\\n"
    "  }                                                                     "
    "      \\\n"
    "  static inline KS_OVL uint NAME(__local int *s, uint v, int a, int w) { "
    "      \\\n"
    "    return as_uint(ks_xchg(s, as_int(v), LANE(a, w)));                  "
    "      \\\n"
    "  }\n"
    "KS_SHFL(ks_shfl_xor, ks_lane_xor)\n"
    "KS_SHFL(ks_shfl_down, ks_lane_down)\n"
    "KS_SHFL(ks_shfl_up, ks_lane_up)\n"
    "KS_SHFL(ks_shfl_idx, ks_lane_idx)\n"
    "/* votes and integer sums over the warp: op 0 any, 1 all, 2 ballot, 3 sum "
    "*/\n"
    "static inline int ks_warp_op(__local int *s, int p, int op) {\n"
    "  int lid = ks_lid(), base = lid - lid % 32, n = ks_gsize();\n"
    "  s[lid] = p;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int r = op == 1 ? 1 : 0;\n"
    "  for (int k = 0; k < 32 && base + k < n; k++) {\n"
    "    int q = s[base + k];\n"
    "    if (op == 0) r |= q != 0;\n"
    "    else if (op == 1) r &= q != 0;\n"
    "    else if (op == 2) r |= (int)((uint)(q != 0) << k);\n"
    "    else r += q;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  return r;\n"
    "}\n"
    "#define ks_warp_any(s, p) ks_warp_op((s), (p) != 0, 0)\n"
    "#define ks_warp_all(s, p) ks_warp_op((s), (p) != 0, 1)\n"
    "#define ks_warp_ballot(s, p) ((uint)ks_warp_op((s), (p) != 0, 2))\n"
    "#define ks_warp_sum(s, v) ks_warp_op((s), (v), 3)\n"
    "// ---- end of the warp primitives ----\n\n";

static const char k_atomic_prelude[] =
    "// ---- ksearch translate: atomicAdd for OpenCL C 1.2 (float through\n"
    "// atomic_cmpxchg on the bits; int and uint through atomic_add) ----\n"
    "#ifndef KS_OVL\n"
    "#define KS_OVL __attribute__((overloadable))\n"
    "#endif\n"
    "#define KS_ATOMIC_ADD_F(AS)                                              "
    "      \\\n"
    "  static inline KS_OVL float ks_atomic_add(volatile AS float *p, float "
    "v) {   \\\n"
    "    uint old = as_uint(*p), assumed;                                    "
    "      \\\n"
    "    do {                                                                "
    "      \\\n"
    "      assumed = old;                                                    "
    "      \\\n"
    "      old = atomic_cmpxchg((volatile AS uint *)p, assumed,              "
    "      \\\n"
    "                           as_uint(as_float(assumed) + v));             "
    "      \\\n"
    "    } while (old != assumed);                                           "
    "      \\\n"
    "    return as_float(old);                                               "
    "      \\\n"
    "  }                                                                     "
    "      \\\n"
    "  static inline KS_OVL int ks_atomic_add(volatile AS int *p, int v) {    "
    "      \\\n"
    "    return atomic_add(p, v);                                            "
    "      \\\n"
    "  }                                                                     "
    "      \\\n"
    "  static inline KS_OVL uint ks_atomic_add(volatile AS uint *p, uint v) { "
    "      \\\n"
    "    return atomic_add(p, v);                                            "
    "      \\\n"
    "  }\n"
    "KS_ATOMIC_ADD_F(__global)\n"
    "KS_ATOMIC_ADD_F(__local)\n"
    "// ---- end of atomicAdd ----\n\n";

/* ------------------------------------------------------------ analysis */

/* A CUDA name whose OpenCL form needs the warp scratch array. */
static bool needs_scratch(const ks_tr *x, int i) {
  if (x->ts->t[i].kind != KS_TOK_IDENT || !ks_tok_is(x->ts, i + 1, "("))
    return false;
  char w[96];
  ks_tok_text(x->ts, i, w, sizeof w);
  size_t l = strlen(w);
  const char *k;
  json_t *v;
  json_object_foreach(x->t->from_cuda, k, v) {
    const char *to = json_is_string(v) ? json_string_value(v) : NULL;
    if (to && strstr(to, "ks_scratch") && !strncmp(k, w, l) && k[l] == '/')
      return true;
  }
  return false;
}

static bool uses_scratch(const ks_tr *x, const ks_cu_func *f) {
  return ks_tr_uses(x, f, needs_scratch);
}

/* Whether token i of f runs under a thread-dependent condition: an if, a
 * ?: or a loop whose condition reads the thread index (directly or through
 * a variable computed from it: lane, warp, tid). A warp primitive there is
 * fine on CUDA (lanes mask out) but the barriers of its OpenCL emulation
 * need every work-item of the group, the same number of times. */
#define MAX_TAINT 64
typedef struct ks_tr_taint {
  int n;
  char name[MAX_TAINT][64];
} taint;

static bool tainted_tok(const ks_toks *ts, const taint *tn, int k) {
  if (ks_tok_is(ts, k, "threadIdx"))
    return true;
  for (int j = 0; j < tn->n; j++)
    if (ks_tok_is(ts, k, tn->name[j]) && !ks_tok_is(ts, k - 1, "."))
      return true;
  return false;
}

static bool tainted_range(const ks_toks *ts, const taint *tn, int a, int b) {
  for (int k = a; k <= b; k++)
    if (tainted_tok(ts, tn, k))
      return true;
  return false;
}

/* variables assigned from the thread index, to a fixed point */
static void compute_taint(const ks_toks *ts, const ks_cu_func *f, taint *tn) {
  tn->n = 0;
  for (bool grew = true; grew;) {
    grew = false;
    for (int k = f->lbrace + 1; k + 1 < f->rbrace; k++) {
      if (ts->t[k].kind != KS_TOK_IDENT || !ks_tok_is(ts, k + 1, "=") ||
          tainted_tok(ts, tn, k) || tn->n == MAX_TAINT)
        continue;
      int e = k + 2;
      while (e < f->rbrace && !ks_tok_is(ts, e, ";") && !ks_tok_is(ts, e, ","))
        e = ts->t[e].match > e ? ts->t[e].match + 1 : e + 1;
      if (tainted_range(ts, tn, k + 2, e - 1)) {
        ks_tok_text(ts, k, tn->name[tn->n++], 64);
        grew = true;
      }
    }
  }
}

static bool cond_paren(const ks_toks *ts, const taint *tn, int rparen,
                       bool loops) {
  int lp = ts->t[rparen].match;
  if (lp < 0)
    return false;
  int head = ks_tok_prev(ts, lp);
  bool branch =
      ks_tok_is(ts, head, "if") ||
      (loops && (ks_tok_is(ts, head, "for") || ks_tok_is(ts, head, "while")));
  return branch && tainted_range(ts, tn, lp + 1, rparen - 1);
}

/* Scans back from i over its own statement, then jumps from block to
 * enclosing block (x->encl): earlier statements are never conditions of i,
 * and skipping them keeps a body of N warp calls linear. */
static bool in_conditional(ks_tr *x, const ks_cu_func *f, int i) {
  const ks_toks *ts = x->ts;
  if (x->taint_fn != f || !x->taint) { /* once per function */
    if (!x->taint)
      x->taint = ks_xmalloc(sizeof *x->taint);
    compute_taint(ts, f, x->taint);
    x->taint_fn = f;
  }
  const taint *tn = x->taint;
  bool in_stmt = true; /* still in the statement holding token i */
  int stmt_from = i;
  for (int k = i - 1; k > f->lbrace; k--) {
    if (!in_stmt) {
      /* only the brace opening this block matters now */
      k = x->encl[k + 1] + 1;
      in_stmt = true;
      if (k - 1 <= f->lbrace)
        break;
      continue; /* k-- lands on that `{`, handled below */
    }
    if (ks_tok_is(ts, k, "}") && ts->t[k].match > 0) {
      k = ts->t[k].match; /* an earlier block: skipped whole */
      in_stmt = false;
      continue;
    }
    if (ks_tok_is(ts, k, ")") && ts->t[k].match > 0) {
      if (in_stmt && cond_paren(ts, tn, k, true))
        return true; /* if (c) stmt / for (...) stmt */
      k = ts->t[k].match;
      continue;
    }
    if (ks_tok_is(ts, k, ";")) {
      in_stmt = false;
    } else if (in_stmt && ks_tok_is(ts, k, "?")) {
      stmt_from = k;
      while (stmt_from > f->lbrace && !ks_tok_is(ts, stmt_from - 1, ";") &&
             !ks_tok_is(ts, stmt_from - 1, "{") &&
             !ks_tok_is(ts, stmt_from - 1, "}"))
        stmt_from--;
      if (tainted_range(ts, tn, stmt_from, k - 1))
        return true;
    } else if (ks_tok_is(ts, k, "{") && ts->t[k].match > i) {
      int p = ks_tok_prev(ts, k); /* an enclosing block: what opened it? */
      if (ks_tok_is(ts, p, ")") && cond_paren(ts, tn, p, true))
        return true;
      if (ks_tok_is(ts, p, "else")) {
        /* the else of `if (c) {...} else {` : the if's condition decides */
        int q = ks_tok_prev(ts, p);
        if (ks_tok_is(ts, q, "}") && ts->t[q].match > 0 &&
            ks_tok_is(ts, ks_tok_prev(ts, ts->t[q].match), ")") &&
            cond_paren(ts, tn, ks_tok_prev(ts, ts->t[q].match), false))
          return true;
      }
      in_stmt = true; /* the statement the block belongs to */
    }
  }
  return false;
}

/* ------------------------------------------------------------ hook */

static int ocl_hook(ks_tr *x, int i, int end) {
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
                  "/* ksearch translate: #include %s dropped (OpenCL C "
                  "builtins need no header) */",
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
  if (ks_tok_is(ts, i, "nullptr")) {
    ks_buf_puts(x->out, "0");
    return i + 1;
  }
  if (ks_tok_is(ts, i, "template") || ks_tok_is(ts, i, "auto") ||
      ks_tok_is(ts, i, "namespace") || ks_tok_is(ts, i, "using")) {
    char w[32];
    ks_tok_text(ts, i, w, sizeof w);
    ks_tr_todo(x, "literal", t->line,
               "C++ `%s` has no OpenCL C form: instantiate by hand (macros "
               "for template parameters)",
               w);
    return -1;
  }
  if (f && ks_tok_is(ts, i, "extern") && ks_tok_is(ts, i + 1, "__shared__")) {
    int e = i;
    while (e < end && !ks_tok_is(ts, e, ";"))
      e++;
    ks_buf_puts(x->out, "/* ksearch translate: the extern __shared__ array "
                        "is a __local kernel argument now */");
    return e + 1;
  }
  if (f && ks_tok_is(ts, i, "__shared__")) {
    if (!f->is_global)
      ks_tr_todo(x, "shared_memory_tiling", t->line,
                 "__local variables live at kernel scope in OpenCL C: "
                 "declare it in the kernel and pass a __local pointer");
    else if (ks_tr_body_depth(x, f, i) > 0)
      ks_tr_todo(x, "shared_memory_tiling", t->line,
                 "__local variables live at kernel scope in OpenCL C: move "
                 "this declaration to the top of the kernel body");
    return -1; /* renamed by from_cuda */
  }
  if (f && needs_scratch(x, i) && in_conditional(x, f, i))
    ks_tr_todo(x, "warp_shuffle_reduction", t->line,
               "this warp primitive runs under a condition on the thread "
               "index: its OpenCL emulation holds barriers, so every "
               "work-item of the group must reach it as often as the others; "
               "make the condition uniform or hoist the call");
  /* calls of device functions that use the warp scratch get it first */
  if (ks_tok_is(ts, i + 1, "(")) {
    char name[64];
    ks_tok_text(ts, i, name, sizeof name);
    const ks_cu_func *g = ks_cu_func_named(x->m, name);
    if (g && !g->is_global && g->name_tok != i && uses_scratch(x, g)) {
      if (f && in_conditional(x, f, i))
        ks_tr_todo(x, "warp_shuffle_reduction", t->line,
                   "%s uses warp primitives and runs under a condition on "
                   "the thread index: their OpenCL emulation holds barriers, "
                   "so every work-item of the group must reach it as often "
                   "as the others; make the condition uniform",
                   name);
      bool empty = ts->t[i + 1].match == i + 2;
      ks_buf_printf(x->out, "%s(ks_scratch%s", name, empty ? "" : ", ");
      return i + 2;
    }
  }
  return -1;
}

/* ------------------------------------------------------------ functions */

static bool has_space(const char *s) {
  return strstr(s, "__global") || strstr(s, "__local") ||
         strstr(s, "__constant") || strstr(s, "__private");
}

/* extern __shared__ T name[]; in the kernel body -> "__local T *name" */
static void extern_shared_params(ks_tr *x, const ks_cu_func *f, ks_buf *b) {
  const ks_toks *ts = x->ts;
  for (int i = f->lbrace + 1; i < f->rbrace; i++) {
    if (!ks_tok_is(ts, i, "extern") || !ks_tok_is(ts, i + 1, "__shared__"))
      continue;
    int e = i + 2, name = -1, type = -1;
    while (e < f->rbrace && !ks_tok_is(ts, e, ";")) {
      if (ts->t[e].kind == KS_TOK_IDENT && !ks_tok_is(ts, e, "__align__")) {
        if (type < 0)
          type = e;
        name = e;
      }
      e++;
    }
    if (name < 0 || type < 0 || name == type)
      continue;
    char tw[64], nw[64];
    ks_tok_text(ts, type, tw, sizeof tw);
    ks_tok_text(ts, name, nw, sizeof nw);
    ks_buf_printf(b, ", __local %s *%s", tw, nw);
    ks_tr_todo(x, "shared_memory_tiling", ts->t[i].line,
               "dynamic shared memory %s is the kernel argument `__local %s "
               "*%s`: the host sets its size with clSetKernelArg(kernel, "
               "index, bytes, NULL)",
               nw, tw, nw);
  }
}

static void emit_params(ks_tr *x, const ks_cu_func *f, ks_buf *b) {
  for (int p = 0; p < f->n_params; p++) {
    const ks_cu_param *pr = &f->params[p];
    char *text = ks_tr_string(x, pr->first, pr->last + 1);
    const char *sp = "";
    if (pr->is_pointer && !has_space(text)) {
      char s = f->is_global ? 'g' : ks_tr_param_space(x, f, p);
      sp = s == 'l' ? "__local " : s == 'p' ? "" : "__global ";
      if (!s)
        ks_tr_todo(x, "shared_memory_tiling", x->ts->t[pr->first].line,
                   "pointer parameter %s of %s: callers pass different "
                   "address spaces; assumed __global (write one copy per "
                   "space)",
                   pr->name, f->name);
    }
    ks_buf_printf(b, "%s%s%s", p ? ", " : "", sp, text);
    free(text);
  }
}

static void emit_function(ks_tr *x, const ks_cu_func *f, bool scratch_param) {
  const ks_toks *ts = x->ts;
  ks_tr_enter(x, f);
  ks_buf head;
  ks_buf_init(&head);
  if (f->is_template)
    ks_tr_todo(x, "literal", f->line,
               "template %s: OpenCL C has no templates; instantiate it by "
               "hand with macros",
               f->name);
  if (f->is_global) {
    ks_buf_printf(&head, "__kernel void %s(", f->name);
  } else {
    /* return type: the declaration minus CUDA qualifiers */
    ks_buf_puts(&head, "static inline ");
    for (int i = f->decl_first; i < f->name_tok; i++) {
      static const char *const drop[] = {
          "__device__", "__host__",     "__forceinline__", "inline",
          "static",     "__noinline__", "template"};
      bool d = false;
      for (size_t k = 0; k < sizeof drop / sizeof *drop; k++)
        d |= ks_tok_is(ts, i, drop[k]);
      if (d || ts->t[i].in_pp || ts->t[i].kind == KS_TOK_PP ||
          ts->t[i].kind == KS_TOK_PP_END)
        continue;
      char *w = ks_tr_string(x, i, i + 1);
      ks_buf_printf(&head, "%s ", w);
      free(w);
    }
    ks_buf_printf(&head, "%s(", f->name);
    if (scratch_param)
      ks_buf_puts(&head, f->n_params ? "__local int *ks_scratch, "
                                     : "__local int *ks_scratch");
  }
  emit_params(x, f, &head);
  if (f->is_global)
    extern_shared_params(x, f, &head);
  ks_buf_puts(&head, ")");
  ks_buf_puts(x->out, head.data);
  ks_buf_free(&head);
  ks_tr_copy_gap(x, ks_tok_end(ts, f->rparen), ts->t[f->lbrace].off);
  /* between ) and { there may be attributes (const); keep only the brace */
  char prologue[160] = "";
  if (f->is_global && uses_scratch(x, f))
    snprintf(prologue, sizeof prologue,
             "\n  __local int ks_scratch[%s]; /* warp shuffles */",
             f->launch_bounds[0] ? f->launch_bounds : "KS_GROUP_MAX");
  ks_tr_body(x, f, prologue);
  ks_tr_enter(x, NULL);
}

/* ------------------------------------------------------------ file */

static int cmp_func(const void *a, const void *b) {
  const ks_cu_func *const *x = a, *const *y = b;
  return (*x)->decl_first - (*y)->decl_first;
}

static void launch_lines(ks_tr *x, ks_buf *hdr, const char **entry) {
  const ks_cu_model *m = x->m;
  *entry = NULL;
  for (int i = 0; i < m->n_launches; i++) {
    const ks_cu_func *k = ks_cu_func_named(m, m->launches[i].kernel);
    if (!k || !k->is_global)
      continue;
    if (!*entry)
      *entry = k->name;
    char g[3][160], b[3][160];
    if (!ks_tr_geometry(x, k->name, g, b))
      continue;
    int dims = 1;
    for (int d = 1; d < 3; d++)
      if (strcmp(g[d], "1") || strcmp(b[d], "1"))
        dims = d + 1;
    bool plain = true;
    for (int d = 0; d < dims; d++)
      plain &= ks_tr_plain_expr(g[d]) && ks_tr_plain_expr(b[d]);
    ks_buf line;
    ks_buf_init(&line);
    ks_buf_printf(&line, "launch%s%s global=(",
                  m->n_launches > 1 ? " kernel=" : "",
                  m->n_launches > 1 ? k->name : "");
    for (int d = 0; d < dims; d++)
      ks_buf_printf(&line, "%s(%s)*(%s)", d ? "," : "", g[d], b[d]);
    ks_buf_puts(&line, ") local=(");
    for (int d = 0; d < dims; d++)
      ks_buf_printf(&line, "%s%s", d ? "," : "", b[d]);
    ks_buf_puts(&line, ")");
    if (plain)
      ks_buf_printf(hdr, "// ksearch: %s\n", line.data);
    else
      ks_tr_todo(x, "thread_parallel", m->launches[i].line,
                 "the launch of %s is not a plain expression over the task's "
                 "axes; write it as `// ksearch: %s`",
                 k->name, line.data);
    ks_buf_free(&line);
  }
}

ks_code ks_translate_opencl(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_opencl(ks_tr *x, ks_translation *out, ks_err *err) {
  (void)err;
  const ks_cu_model *m = x->m;
  const ks_toks *ts = x->ts;
  x->hook = ocl_hook;
  x->space_global = "__global";
  x->space_shared = "__local";
  x->space_private = "";
  x->cpp = false;
  /* the body first, into its own buffer: the prelude depends on it */
  ks_buf body;
  ks_buf_init(&body);
  x->out = &body;
  const ks_cu_func **fs = ks_xmalloc(sizeof *fs * (size_t)(m->n_funcs + 1));
  for (int i = 0; i < m->n_funcs; i++)
    fs[i] = &m->funcs[i];
  qsort(fs, (size_t)m->n_funcs, sizeof *fs, cmp_func);
  int cursor = 0, prev_end = 0;
  for (int k = 0; k < m->n_funcs; k++) {
    const ks_cu_func *f = fs[k];
    if (f->decl_first > cursor) {
      ks_tr_copy_gap(x, prev_end, ts->t[cursor].off);
      ks_tr_range(x, cursor, f->decl_first);
      prev_end = ks_tok_end(ts, f->decl_first - 1);
    }
    ks_tr_copy_gap(x, prev_end, ts->t[f->decl_first].off);
    if (!f->is_global && !f->is_device) {
      ks_buf_printf(x->out,
                    "/* ksearch translate: host function %s (CUDA lines "
                    "%d-%d) omitted; the launch geometry is in the "
                    "header */",
                    f->name, ts->t[f->decl_first].line, ts->t[f->rbrace].line);
    } else {
      emit_function(x, f, !f->is_global && uses_scratch(x, f));
      json_t *kj = json_pack("{s:s,s:i}", "name", f->name, "line", f->line);
      if (f->is_global)
        json_array_append_new(out->kernels, kj);
      else
        json_decref(kj);
    }
    cursor = f->rbrace + 1;
    prev_end = ks_tok_end(ts, f->rbrace);
  }
  if (cursor < ts->n) {
    ks_tr_copy_gap(x, prev_end, ts->t[cursor].off);
    ks_tr_range(x, cursor, ts->n);
    prev_end = ks_tok_end(ts, ts->n - 1);
  }
  ks_tr_copy_gap(x, prev_end, (int)strlen(ts->src));
  free(fs);
  /* header: candidate metadata, provenance, helpers */
  ks_buf *o = &out->code;
  const char *entry = NULL;
  ks_buf launches;
  ks_buf_init(&launches);
  x->out = &launches;
  launch_lines(x, &launches, &entry);
  if (!entry)
    for (int i = 0; i < m->n_funcs && !entry; i++)
      if (m->funcs[i].is_global)
        entry = m->funcs[i].name;
  ks_buf_printf(o, "// ksearch: backend=opencl entry=%s\n", entry);
  ks_buf_puts(o, launches.data ? launches.data : "");
  if (!m->n_launches) {
    x->out = o;
    ks_tr_todo(x, "thread_parallel", 1,
               "no kernel launch (<<<grid, block>>>) in the CUDA file: add "
               "`// ksearch: launch global=(...) local=(...)`");
  }
  ks_buf_printf(o,
                "// Translated from %s by `ksearch translate --to opencl`: "
                "the CUDA common\n// subset rewritten literally; "
                "KSEARCH-TODO marks what has no literal form.\n\n",
                m->path);
  ks_buf_free(&launches);
  const char *bd = body.data ? body.data : "";
  if (strstr(bd, "ks_shfl_") || strstr(bd, "ks_warp_") ||
      strstr(bd, "ks_scratch"))
    ks_buf_puts(o, k_warp_prelude);
  if (strstr(bd, "ks_atomic_add"))
    ks_buf_puts(o, k_atomic_prelude);
  ks_buf_puts(o, bd);
  ks_buf_free(&body);
  x->out = o;
  json_t *kv;
  size_t ki;
  json_array_foreach(out->kernels, ki, kv) {
    char g[3][160], b[3][160];
    const char *name = json_string_value(json_object_get(kv, "name"));
    if (ks_tr_geometry(x, name, g, b))
      json_object_set_new(kv, "launch",
                          json_pack("{s:[s,s,s],s:[s,s,s]}", "grid_blocks",
                                    g[0], g[1], g[2], "block", b[0], b[1],
                                    b[2]));
  }
  return KS_OK;
}
