/* translate_mlx.c — CUDA to an MLX candidate (see translate.h; DESIGN.md:
 * Spec, translate; Candidate file, mlx). MLX on Linux runs CUDA itself
 * (mx.fast.cuda_kernel), so nothing is rewritten token by token: the
 * concepts keep their CUDA form. What changes is the frame. MLX writes the
 * __global__ signature and takes only a body, so every kernel of the file
 * becomes a __device__ function in the candidate's header part, and the body
 * calls the entry with KS_ARGS, which the MLX backend defines from the task
 * (its arrays, var axes and scalar values in the C calling convention, each
 * array through a pointer that converts to the kernel's own parameter type).
 * Host code (functions that are neither __global__ nor __device__) is
 * dropped; host headers NVRTC lacks become their libcu++ forms. The launch
 * comes from the file's `// ksearch: launch grid=(G) block=(B) [smem=(S)]`
 * line (a ksearch cuda candidate) or its first <<<G, B, S>>>, and is
 * rewritten in threads: grid=(ceil(G)*(B)) threadgroup=(B). */
#include "spec/translate_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Top-level comma split of "a, f(b, c), d" into at most 3 parts. */
static int split3(const char *s, char out[3][160]) {
  int n = 0, depth = 0;
  size_t k = 0;
  out[0][0] = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '(')
      depth++;
    if (*p == ')')
      depth--;
    if (*p == ',' && depth == 0) {
      if (n == 2)
        return -1;
      out[n][k] = 0;
      n++;
      k = 0;
      continue;
    }
    if (k < 159)
      out[n][k++] = *p;
  }
  out[n][k] = 0;
  return n + 1;
}

/* The value of KEY=(...) in a launch line, or "" (balanced parentheses). */
static void launch_key(const char *line, const char *key, char *out, size_t n) {
  out[0] = 0;
  size_t kl = strlen(key);
  for (const char *p = line; *p; p++) {
    if ((p == line || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=' &&
        p[kl + 1] == '(') {
      const char *v = p + kl + 2;
      int depth = 1;
      const char *e = v;
      while (*e && depth) {
        depth += *e == '(';
        depth -= *e == ')';
        if (depth)
          e++;
      }
      size_t l = (size_t)(e - v) < n - 1 ? (size_t)(e - v) : n - 1;
      memcpy(out, v, l);
      out[l] = 0;
      return;
    }
  }
}

/* grid/block in blocks -> the MLX launch line in threads. */
static bool mlx_launch(const char *grid, const char *block, const char *smem,
                       const char *scratch, ks_buf *out) {
  char g[3][160], b[3][160];
  int ng = split3(grid, g), nb = split3(block, b);
  if (ng < 1 || nb < 1 || ng != nb)
    return false;
  ks_buf_puts(out, "// ksearch: launch grid=(");
  for (int i = 0; i < ng; i++)
    ks_buf_printf(out, "%sceil(%s) * (%s)", i ? ", " : "", g[i], b[i]);
  ks_buf_puts(out, ") threadgroup=(");
  for (int i = 0; i < nb; i++)
    ks_buf_printf(out, "%s%s", i ? ", " : "", b[i]);
  ks_buf_puts(out, ")");
  if (smem && *smem && strcmp(smem, "0"))
    ks_buf_printf(out, " smem=(%s)", smem);
  /* the scratch buffer: one more output of MLX's call, 0xFF-filled as the
   * cuda executor fills its scratch (DESIGN.md: Backend, mlx) */
  if (scratch && *scratch)
    ks_buf_printf(out, " scratch=(%s)", scratch);
  ks_buf_puts(out, "\n");
  return true;
}

/* math.h's constants (the functions are NVRTC builtins) */
#define KS_MATH                                                                \
  "#include <cuda/std/cmath>\n"                                                \
  "#ifndef INFINITY\n#define INFINITY __int_as_float(0x7f800000)\n#endif\n"    \
  "#ifndef NAN\n#define NAN __int_as_float(0x7fffffff)\n#endif"

/* Host headers NVRTC does not have, and what stands in for them. */
static const char *include_for(const char *line) {
  static const struct {
    const char *h, *with;
  } k[] = {{"math.h", KS_MATH},
           {"cmath", KS_MATH},
           {"stdint.h", "#include <cuda/std/cstdint>"},
           {"cstdint", "#include <cuda/std/cstdint>"},
           {"stddef.h", "#include <cuda/std/cstddef>"},
           {"float.h", "#include <cuda/std/cfloat>"},
           {"limits.h", "#include <cuda/std/climits>"},
           {"stdio.h", ""},
           {"stdlib.h", ""},
           {"string.h", ""},
           {"cuda_runtime.h", ""},
           {"cuda.h", ""}};
  const char *p = line;
  while (*p == ' ' || *p == '\t')
    p++;
  if (strncmp(p, "#include", 8))
    return NULL;
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    char a[40], q[40];
    snprintf(a, sizeof a, "<%s>", k[i].h);
    snprintf(q, sizeof q, "\"%s\"", k[i].h);
    if (strstr(p, a) || strstr(p, q))
      return k[i].with;
  }
  return NULL;
}

/* A file that uses INFINITY or NAN without math.h (nvcc defines them for
 * it; NVRTC does not, and MLX's header neither): the KS_MATH guards. */
static bool needs_math_guards(const ks_toks *ts, const char *src) {
  if (strstr(src, "<math.h>") || strstr(src, "<cmath>"))
    return false; /* include_for puts them in its place */
  for (int i = 0; i < ts->n; i++)
    if (ks_tok_is(ts, i, "INFINITY") || ks_tok_is(ts, i, "NAN"))
      return true;
  return false;
}

/* Appends src[a, b) line by line: `// ksearch:` lines out (the new header
 * carries them), host includes replaced. */
static void copy_text(ks_buf *out, const char *src, int a, int b) {
  const char *p = src + a, *end = src + b;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl + 1 : end;
    char line[512];
    size_t l =
        (size_t)(le - p) < sizeof line - 1 ? (size_t)(le - p) : sizeof line - 1;
    memcpy(line, p, l);
    line[l] = 0;
    const char *q = line;
    while (*q == ' ' || *q == '\t')
      q++;
    const char *inc = include_for(line);
    bool at_line_start = p == src || p[-1] == '\n';
    if (at_line_start && !strncmp(q, "// ksearch:", 11)) {
      /* dropped */
    } else if (at_line_start && inc) {
      if (*inc)
        ks_buf_printf(out, "%s\n", inc);
    } else {
      ks_buf_append(out, p, (size_t)(le - p));
    }
    p = le;
  }
}

ks_code ks_translate_mlx(ks_tr *x, ks_translation *out, ks_err *err) {
  const ks_cu_model *m = x->m;
  const ks_toks *ts = x->ts;
  const char *src = m->src;
  /* the header lines of a ksearch cuda candidate */
  char entry[64] = "", launch[512] = "";
  int n_launch_lines = 0;
  ks_buf hdr;
  ks_buf_init(&hdr);
  for (const char *p = src; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    const char *q = p;
    while (q < p + len && (*q == ' ' || *q == '\t'))
      q++;
    if (p + len - q > 11 && !strncmp(q, "// ksearch:", 11)) {
      char line[512];
      size_t l = (size_t)(p + len - q) < sizeof line - 1 ? (size_t)(p + len - q)
                                                         : sizeof line - 1;
      memcpy(line, q, l);
      line[l] = 0;
      const char *e = strstr(line, "entry=");
      if (e && !entry[0])
        sscanf(e + 6, "%63[A-Za-z0-9_]", entry);
      if (strstr(line, " launch ")) {
        if (!n_launch_lines++)
          ks_strlcpy(launch, line, sizeof launch);
      } else if (!strstr(line, "backend=")) {
        ks_buf_printf(&hdr, "%s\n", line); /* params, family, concepts */
      }
    }
    p = nl ? nl + 1 : NULL;
  }
  const ks_cu_func *kern = NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_global &&
        (!kern || (entry[0] && !strcmp(m->funcs[i].name, entry))))
      kern = &m->funcs[i];
  if (!kern)
    return ks_err_set(err, KS_ERR_INPUT, "%s: no __global__ kernel", m->path);
  ks_strlcpy(entry, kern->name, sizeof entry);
  ks_buf *c = &out->code;
  ks_buf_printf(c, "// ksearch: backend=mlx entry=%s kernel=cuda\n", entry);
  ks_buf_append(c, hdr.data ? hdr.data : "", hdr.len);
  ks_buf_free(&hdr);
  char grid[200], block[200], smem[200];
  bool have = false;
  if (launch[0]) {
    launch_key(launch, "grid", grid, sizeof grid);
    launch_key(launch, "block", block, sizeof block);
    launch_key(launch, "smem", smem, sizeof smem);
    char scratch[200];
    launch_key(launch, "scratch", scratch, sizeof scratch);
    have = grid[0] && block[0] && mlx_launch(grid, block, smem, scratch, c);
  } else if (m->n_launches > 0) {
    const ks_cu_launch *l = &m->launches[0];
    char g[200], b[200];
    ks_strlcpy(g, l->grid, sizeof g);
    ks_strlcpy(b, l->block, sizeof b);
    for (int i = 0; i < m->n_dim3; i++) { /* dim3 grid(...) variables */
      if (!strcmp(m->dim3s[i].name, l->grid))
        snprintf(g, sizeof g, "%s, %s, %s", m->dim3s[i].c[0], m->dim3s[i].c[1],
                 m->dim3s[i].c[2]);
      if (!strcmp(m->dim3s[i].name, l->block))
        snprintf(b, sizeof b, "%s, %s, %s", m->dim3s[i].c[0], m->dim3s[i].c[1],
                 m->dim3s[i].c[2]);
    }
    have = mlx_launch(g, b, l->smem, NULL, c);
  }
  if (!have) {
    ks_buf_puts(c, "// ksearch: launch grid=(1) threadgroup=(1)\n");
    ks_tr_todo(x, "thread_parallel", kern->line,
               "no launch geometry found (no `// ksearch: launch grid=(G) "
               "block=(B)` line, no <<<G, B>>>): write the launch line in "
               "threads, grid=(blocks * threads) threadgroup=(threads)");
  }
  if (n_launch_lines > 1 || m->n_launches > 1)
    ks_tr_todo(x, "persistent_kernel", kern->line,
               "the CUDA file launches %d kernels; an MLX candidate is one "
               "kernel: only %s is launched (fuse the others into it)",
               n_launch_lines > 1 ? n_launch_lines : m->n_launches, entry);
  ks_buf_printf(
      c,
      "//\n// Translated from %s by `ksearch translate --to mlx`: "
      "MLX writes the\n// __global__ signature, so the kernels are "
      "__device__ functions here and the\n// body calls ks_mlx_%s with "
      "KS_ARGS (the task's arrays, var axes and scalars).\n",
      m->path, entry);
  for (size_t i = 0; i < json_array_size(x->todos); i++) {
    json_t *t = json_array_get(x->todos, i);
    ks_buf_printf(c, "// KSEARCH-TODO(%s): %s\n",
                  json_string_value(json_object_get(t, "concept")),
                  json_string_value(json_object_get(t, "message")));
  }
  if (needs_math_guards(ts, src))
    ks_buf_puts(c, KS_MATH "\n");
  /* the source: kernels made device functions, host code out */
  int at = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    const ks_cu_func *f = &m->funcs[i];
    int first = f->decl_first;
    /* extern "C" before the qualifiers */
    if (first >= 2 && ks_tok_is(ts, first - 2, "extern") &&
        ts->t[first - 1].kind == KS_TOK_STRING)
      first -= 2;
    int a = ts->t[first].off;
    int end = ts->t[f->rbrace].off + 1;
    if (a < at)
      continue; /* nested in something already handled */
    copy_text(c, src, at, a);
    if (f->is_global) {
      /* a name of its own: the body runs inside namespace mlx::core::cu */
      ks_buf_printf(c, "__device__ __forceinline__ void ks_mlx_%s", f->name);
      copy_text(c, src, ts->t[f->name_tok].off + ts->t[f->name_tok].len, end);
    } else if (f->is_device) {
      copy_text(c, src, a, end);
    } /* else host code: dropped */
    at = end;
  }
  copy_text(c, src, at, (int)strlen(src));
  ks_buf_printf(c, "\n// ksearch: body\nks_mlx_%s(KS_ARGS);\n", entry);
  json_array_append_new(
      out->kernels, json_pack("{s:s, s:i}", "name", entry, "line", kern->line));
  return KS_OK;
}
