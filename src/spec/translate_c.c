/* translate_c.c — CUDA to C (see translate.h). Each kernel becomes a
 * per-thread function over explicit thread and block indices (ks_tid,
 * ks_bid, ks_bdim, ks_gdim) and a launcher that runs the blocks of a grid in
 * parallel with OpenMP and the threads of a block one after another. That
 * is literal only for kernels whose threads do not cooperate: barriers,
 * shared memory and warp shuffles stay in place with KSEARCH-TODO marks
 * pointing at the concept's C form (one CPU thread owns a whole block, SIMD
 * vectors replace the warp). */
#include "spec/translate_internal.h"

#include <stdlib.h>
#include <string.h>

static const char k_prelude[] =
    "#include <float.h>\n"
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n\n"
    "// ---- ksearch translate: the CUDA thread model in C ----\n"
    "typedef struct ks_dim3 {\n  unsigned x, y, z;\n} ks_dim3;\n"
    "static inline float ks_as_float(uint32_t u) {\n"
    "  float f;\n  memcpy(&f, &u, 4);\n  return f;\n}\n"
    "static inline int32_t ks_as_int(float f) {\n"
    "  int32_t i;\n  memcpy(&i, &f, 4);\n  return i;\n}\n"
    "static inline uint32_t ks_as_uint(float f) {\n"
    "  uint32_t u;\n  memcpy(&u, &f, 4);\n  return u;\n}\n"
    "typedef struct float2 {\n  float x, y;\n} float2;\n"
    "typedef struct float4 {\n  float x, y, z, w;\n} float4;\n"
    "static inline float2 ks_make_float2(float x, float y) {\n"
    "  return (float2){x, y};\n}\n"
    "static inline float4 ks_make_float4(float x, float y, float z, float w) "
    "{\n  return (float4){x, y, z, w};\n}\n"
    "// ---- end of the thread model ----\n\n";

/* Names whose use makes the threads of a block cooperate. */
static bool cooperates(const ks_tr *x, int i) {
  static const char *const k[] = {"__syncthreads", "__shared__", "__syncwarp",
                                  "__ballot_sync", "__any_sync", "__all_sync"};
  const ks_toks *ts = x->ts;
  if (ts->t[i].kind != KS_TOK_IDENT)
    return false;
  for (size_t j = 0; j < sizeof k / sizeof *k; j++)
    if (ks_tok_is(ts, i, k[j]))
      return true;
  char w[32];
  ks_tok_text(ts, i, w, sizeof w);
  return !strncmp(w, "__shfl", 6) || !strncmp(w, "__reduce_", 9);
}

static bool thread_index(const ks_tr *x, int i) {
  return ks_tok_is(x->ts, i, "threadIdx") || ks_tok_is(x->ts, i, "blockIdx") ||
         ks_tok_is(x->ts, i, "blockDim") || ks_tok_is(x->ts, i, "gridDim");
}

static int c_hook(ks_tr *x, int i, int end) {
  (void)end;
  const ks_toks *ts = x->ts;
  const ks_tok *t = &ts->t[i];
  if (t->kind == KS_TOK_PP) {
    char d[16], h[128];
    ks_tr_directive(ts, i, d, sizeof d);
    if (strcmp(d, "include"))
      return -1;
    ks_tok_text(ts, i + 1, h, sizeof h);
    if (!strstr(h, "cuda") && !strstr(h, "cooperative") && !strstr(h, "mma"))
      return -1; /* a C header: kept */
    ks_buf_printf(x->out, "/* ksearch translate: #include %s dropped */", h);
    return ks_tr_pp_end(ts, i);
  }
  if (ks_tok_is(ts, i, "nullptr")) {
    ks_buf_puts(x->out, "NULL");
    return i + 1;
  }
  if (ks_tok_is(ts, i, "template") || ks_tok_is(ts, i, "auto")) {
    ks_tr_todo(x, "literal", t->line,
               "C++ `%s` has no C form: instantiate by hand",
               ks_tok_is(ts, i, "auto") ? "auto" : "template");
    return -1;
  }
  return -1;
}

static void emit_type_and_name(ks_tr *x, const ks_cu_func *f,
                               const char *name) {
  const ks_toks *ts = x->ts;
  ks_buf_puts(x->out, "static ");
  if (!f->is_global)
    ks_buf_puts(x->out, "inline ");
  for (int i = f->decl_first; i < f->name_tok && !f->is_global; i++) {
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
  if (f->is_global)
    ks_buf_puts(x->out, "void ");
  ks_buf_printf(x->out, "%s(", name);
}

static void params(ks_tr *x, const ks_cu_func *f, bool lead_comma) {
  for (int p = 0; p < f->n_params; p++) {
    char *text = ks_tr_string(x, f->params[p].first, f->params[p].last + 1);
    ks_buf_printf(x->out, "%s%s", p || lead_comma ? ", " : "", text);
    free(text);
  }
}

static void emit_kernel(ks_tr *x, const ks_cu_func *f) {
  char tname[96];
  snprintf(tname, sizeof tname, "%s_thread", f->name);
  ks_tr_enter(x, f);
  if (ks_tr_uses(x, f, cooperates))
    ks_tr_todo(x, "block_reduction", f->line,
               "the threads of a %s block cooperate (barriers, shared memory "
               "or warp shuffles), so running them one after another is not "
               "the same program: restructure so that one CPU thread owns a "
               "whole block (see the concepts' C forms in the report)",
               f->name);
  emit_type_and_name(x, f, tname);
  ks_buf_puts(
      x->out,
      "ks_dim3 ks_tid, ks_dim3 ks_bid, ks_dim3 ks_bdim, ks_dim3 ks_gdim");
  params(x, f, true);
  ks_buf_puts(x->out, ") ");
  ks_tr_body(x, f, NULL);
  ks_buf_printf(x->out,
                "\n\n/* %s over a CUDA grid: the blocks in parallel (OpenMP), "
                "the threads of a\n * block one after another. */\nvoid %s("
                "ks_dim3 ks_gdim, ks_dim3 ks_bdim",
                f->name, f->name);
  params(x, f, true);
  ks_buf_puts(x->out,
              ") {\n#pragma omp parallel for collapse(3) schedule(static)\n"
              "  for (unsigned bz = 0; bz < ks_gdim.z; bz++)\n"
              "    for (unsigned by = 0; by < ks_gdim.y; by++)\n"
              "      for (unsigned bx = 0; bx < ks_gdim.x; bx++)\n"
              "        for (unsigned tz = 0; tz < ks_bdim.z; tz++)\n"
              "          for (unsigned ty = 0; ty < ks_bdim.y; ty++)\n"
              "            for (unsigned tx = 0; tx < ks_bdim.x; tx++)\n");
  ks_buf_printf(x->out,
                "              %s((ks_dim3){tx, ty, tz}, (ks_dim3){bx, by, "
                "bz}, ks_bdim, ks_gdim",
                tname);
  for (int p = 0; p < f->n_params; p++)
    ks_buf_printf(x->out, ", %s", f->params[p].name);
  ks_buf_puts(x->out, ");\n}");
  ks_tr_enter(x, NULL);
}

static void emit_device(ks_tr *x, const ks_cu_func *f) {
  ks_tr_enter(x, f);
  if (ks_tr_uses(x, f, thread_index))
    ks_tr_todo(x, "thread_parallel", f->line,
               "%s reads thread or block indices: pass ks_tid / ks_bid (and "
               "ks_bdim, ks_gdim) as parameters",
               f->name);
  emit_type_and_name(x, f, f->name);
  params(x, f, false);
  ks_buf_puts(x->out, ") ");
  ks_tr_body(x, f, NULL);
  ks_tr_enter(x, NULL);
}

static int cmp_func(const void *a, const void *b) {
  const ks_cu_func *const *x = a, *const *y = b;
  return (*x)->decl_first - (*y)->decl_first;
}

ks_code ks_translate_c(ks_tr *x, ks_translation *out, ks_err *err);
ks_code ks_translate_c(ks_tr *x, ks_translation *out, ks_err *err) {
  (void)err;
  const ks_cu_model *m = x->m;
  const ks_toks *ts = x->ts;
  x->hook = c_hook;
  x->cpp = false;
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
    if (f->is_global) {
      emit_kernel(x, f);
      json_t *kj = json_pack("{s:s,s:i}", "name", f->name, "line", f->line);
      char g[3][160], b[3][160];
      if (ks_tr_geometry(x, f->name, g, b))
        json_object_set_new(kj, "launch",
                            json_pack("{s:[s,s,s],s:[s,s,s]}", "grid_blocks",
                                      g[0], g[1], g[2], "block", b[0], b[1],
                                      b[2]));
      json_array_append_new(out->kernels, kj);
    } else if (f->is_device) {
      emit_device(x, f);
    } else {
      ks_buf_printf(x->out,
                    "/* ksearch translate: host function %s (CUDA lines "
                    "%d-%d) omitted: call the kernel's launcher with "
                    "(ks_dim3){grid}, (ks_dim3){block} */",
                    f->name, ts->t[f->decl_first].line, ts->t[f->rbrace].line);
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
  ks_buf_printf(&out->code,
                "// Translated from %s by `ksearch translate --to c`: each "
                "kernel is a\n// per-thread function and a launcher over the "
                "grid; KSEARCH-TODO marks what\n// has no literal C form. "
                "This is a starting point, not a ksearch candidate:\n// "
                "candidates follow the task's signature (docs/DESIGN.md).\n\n",
                m->path);
  ks_buf_puts(&out->code, k_prelude);
  ks_buf_puts(&out->code, body.data ? body.data : "");
  ks_buf_free(&body);
  x->out = &out->code;
  return KS_OK;
}
