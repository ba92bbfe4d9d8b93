/* launch.c — see launch.h. The candidate parser (eval/candidate.c) keeps only
 * the last launch line; a sequence of kernels needs all of them in order, so
 * they are read again here from the source. */
#include "backend/opencl/launch.h"
#include "task/expr.h"
#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ks_header_parse_exprs(const char *s, int max, ks_expr **out, ks_err *err) {
  int n = 0, depth = 0, rc = -1;
  char part[256];
  size_t len = 0;
  for (const char *p = s;; p++) {
    if (*p == 0 || (*p == ',' && depth == 0)) {
      part[len] = 0;
      const char *t = part;
      while (isspace((unsigned char)*t))
        t++;
      if (!*t || n >= max)
        goto fail;
      if (ks_expr_parse(t, NULL, 0, &out[n], err)) {
        rc = -2;
        goto fail;
      }
      n++;
      len = 0;
      if (*p == 0)
        return n;
      continue;
    }
    if (*p == '(')
      depth++;
    else if (*p == ')')
      depth--;
    if (len + 1 >= sizeof part)
      goto fail;
    part[len++] = *p;
  }
fail:
  for (int i = 0; i < n; i++) {
    ks_expr_free(out[i]);
    out[i] = NULL;
  }
  return rc;
}

static ks_code parse_dims(const char *key, const char *val, ks_expr **out,
                          int *dims, int line, ks_err *err) {
  int n = ks_header_parse_exprs(val, 3, out, err);
  if (n == -2)
    return ks_err_prefix(err, "line %d: %s: ", line, key);
  if (n < 1)
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: %s=(%s): expected 1 to 3 comma-separated "
                      "sizes, e.g. %s=(rows*LOCAL) or %s=(cols, rows)",
                      line, key, val, key, key);
  *dims = n;
  return KS_OK;
}

ks_code ks_header_next_kv(const char **pp, int line, const char *what,
                          const char *expected, char *key, size_t kn, char *val,
                          size_t vn, bool *paren, bool *done, ks_err *err) {
  const char *p = *pp;
  *done = false;
  while (isspace((unsigned char)*p))
    p++;
  if (!*p) {
    *done = true;
    *pp = p;
    return KS_OK;
  }
  size_t kl = 0;
  while (isalpha((unsigned char)*p) && kl + 1 < kn)
    key[kl++] = *p++;
  key[kl] = 0;
  if (*p != '=' || kl == 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: cannot read \"%.60s\" in the %s line; "
                      "expected %s",
                      line, p, what, expected);
  p++;
  size_t vl = 0;
  if (paren)
    *paren = *p == '(';
  if (*p == '(') { /* up to the matching parenthesis; spaces allowed */
    int depth = 0;
    const char *q = p;
    for (; *q; q++) {
      if (*q == '(')
        depth++;
      else if (*q == ')' && --depth == 0)
        break;
    }
    if (*q != ')')
      return ks_err_set(err, KS_ERR_INPUT,
                        "line %d: %s=%.60s: unbalanced parentheses", line, key,
                        p);
    vl = (size_t)(q - p - 1);
    if (vl >= vn)
      vl = vn - 1;
    memcpy(val, p + 1, vl);
    p = q + 1;
  } else { /* a bare token: kernel=NAME or global=rows*64 */
    while (*p && !isspace((unsigned char)*p) && vl + 1 < vn)
      val[vl++] = *p++;
  }
  val[vl] = 0;
  *pp = p;
  return KS_OK;
}

ks_code ks_launch_parse_line(const char *text, const char *default_kernel,
                             int line, ks_launch *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  out->line = line;
  ks_strlcpy(out->kernel, default_kernel ? default_kernel : "",
             sizeof out->kernel);
  bool seen[9] = {false};
  int gdims = 0, ldims = 0;
  const char *p = text;
  ks_code rc = KS_OK;
  while (!rc) {
    char key[32], val[512];
    bool done = false;
    rc = ks_header_next_kv(&p, line, "launch",
                           "kernel=NAME global=(...) local=(...) "
                           "[scratch=(...)] (OpenCL) or kernel=NAME grid=(...) "
                           "block=(...) [smem=(...)] [pdl=(...)] (CUDA), and "
                           "[when=(...)]",
                           key, sizeof key, val, sizeof val, NULL, &done, err);
    if (rc || done)
      break;
    static const char *const keys[] = {"kernel",  "global", "local",
                                       "scratch", "grid",   "block",
                                       "smem",    "when",   "pdl"};
    int k = -1;
    for (int i = 0; i < 9; i++)
      if (!strcmp(key, keys[i]))
        k = i;
    if (k < 0) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "line %d: unknown launch key \"%s\"; use kernel=, "
                      "global=, local=, scratch= (OpenCL) or grid=, block=, "
                      "smem=, pdl= (CUDA), or when=",
                      line, key);
      break;
    }
    if (seen[k]) {
      rc = ks_err_set(err, KS_ERR_INPUT, "line %d: %s= given twice", line, key);
      break;
    }
    /* before parsing: grid=/block= and global=/local= share the slots */
    bool mixed = (k >= 4 && k <= 6 && (seen[1] || seen[2])) ||
                 ((k == 1 || k == 2) && (seen[4] || seen[5] || seen[6]));
    if (mixed) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "line %d: the launch line mixes grid=/block= (CUDA: "
                      "blocks and threads per block) with global=/local= "
                      "(OpenCL: work-items); use one pair",
                      line);
      break;
    }
    seen[k] = true;
    if (k == 0) {
      if (!ks_is_c_ident(val) || strlen(val) >= sizeof out->kernel)
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "line %d: kernel=%s must name a kernel function (an "
                        "identifier of < 64 characters)",
                        line, val);
      else
        ks_strlcpy(out->kernel, val, sizeof out->kernel);
    } else if (k == 1 || k == 4) {
      rc = parse_dims(key, val, out->global, &gdims, line, err);
    } else if (k == 2 || k == 5) {
      rc = parse_dims(key, val, out->local, &ldims, line, err);
    } else if (k == 3) {
      if (ks_expr_parse(val, NULL, 0, &out->scratch, err))
        rc = ks_err_prefix(err, "line %d: scratch: ", line);
    } else if (k == 6) {
      if (ks_expr_parse(val, NULL, 0, &out->smem, err))
        rc = ks_err_prefix(err, "line %d: smem: ", line);
    } else if (k == 7) {
      if (ks_expr_parse(val, NULL, 0, &out->when, err))
        rc = ks_err_prefix(err, "line %d: when: ", line);
    } else {
      if (ks_expr_parse(val, NULL, 0, &out->pdl, err))
        rc = ks_err_prefix(err, "line %d: pdl: ", line);
    }
  }
  /* grid=/block=/smem= (CUDA) or global=/local= (OpenCL), never mixed */
  bool grid = seen[4] || seen[5] || seen[6];
  out->grid_style = grid;
  if (!rc && grid && (seen[1] || seen[2]))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: the launch line mixes grid=/block= (CUDA: "
                    "blocks and threads per block) with global=/local= "
                    "(OpenCL: work-items); use one pair",
                    line);
  if (!rc && grid && !seen[4])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: the launch line has no grid=(...); give the "
                    "number of blocks per dimension, e.g. grid=(rows)",
                    line);
  if (!rc && grid && !seen[5])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: the launch line has no block=(...); give the "
                    "threads per block, e.g. block=(256)",
                    line);
  if (!rc && !grid && seen[8])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: pdl= (CUDA's programmatic dependent launch) "
                    "needs a grid=/block= line; OpenCL has no such launch, "
                    "drop pdl=",
                    line);
  if (!rc && !grid && !seen[1])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: the launch line has no global=(...); give the "
                    "work-items per dimension, e.g. global=(rows*LOCAL)",
                    line);
  if (!rc && !grid && !seen[2])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: the launch line has no local=(...); give the "
                    "work-group size, e.g. local=(LOCAL) (ksearch does not "
                    "let the driver choose, so timings are reproducible)",
                    line);
  if (!rc && gdims != ldims)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: %s has %d dimension%s but %s has %d; "
                    "give both the same number",
                    line, grid ? "grid" : "global", gdims,
                    gdims == 1 ? "" : "s", grid ? "block" : "local", ldims);
  if (!rc && !out->kernel[0])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: no kernel named; add kernel=NAME", line);
  out->dims = gdims;
  if (rc) {
    ks_launch_plan tmp = {.n = 1};
    tmp.k[0] = *out;
    ks_launch_free(&tmp);
    memset(out, 0, sizeof *out);
  }
  return rc;
}

/* Calls fn for every `// ksearch: KEYWORD` line; stops at the first error. */
typedef ks_code (*line_fn)(void *ctx, const char *text, int line, ks_err *err);

static ks_code for_each_keyword_line(const char *source, const char *keyword,
                                     line_fn fn, void *ctx, ks_err *err) {
  size_t kw = strlen(keyword);
  const char *s = source;
  int lineno = 0;
  while (*s) {
    lineno++;
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    const char *q = s;
    while (q < s + len && isspace((unsigned char)*q))
      q++;
    size_t rest = (size_t)(s + len - q);
    if (rest > 11 && !strncmp(q, "// ksearch:", 11)) {
      const char *r = q + 11;
      while (r < s + len && isspace((unsigned char)*r))
        r++;
      if ((size_t)(s + len - r) >= kw + 1 && !strncmp(r, keyword, kw) &&
          isspace((unsigned char)r[kw])) {
        char text[1024];
        size_t tl = (size_t)(s + len - (r + kw + 1));
        if (tl >= sizeof text)
          tl = sizeof text - 1;
        memcpy(text, r + kw + 1, tl);
        text[tl] = 0;
        ks_code rc = fn(ctx, text, lineno, err);
        if (rc)
          return rc;
      }
    }
    s += len + (nl ? 1 : 0);
  }
  return KS_OK;
}

static ks_code for_each_line(const char *source, line_fn fn, void *ctx,
                             ks_err *err) {
  return for_each_keyword_line(source, "launch", fn, ctx, err);
}

typedef struct parse_ctx {
  ks_launch_plan *plan;
  const char *default_kernel;
} parse_ctx;

static ks_code add_line(void *vctx, const char *text, int line, ks_err *err) {
  parse_ctx *c = vctx;
  if (c->plan->n >= KS_LAUNCH_MAX)
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: more than %d launch lines; fuse kernels", line,
                      KS_LAUNCH_MAX);
  ks_code rc = ks_launch_parse_line(text, c->default_kernel, line,
                                    &c->plan->k[c->plan->n], err);
  if (!rc)
    c->plan->n++;
  return rc;
}

ks_code ks_launch_parse(const char *source, const char *path,
                        const char *default_kernel, ks_launch_plan *out,
                        ks_err *err) {
  memset(out, 0, sizeof *out);
  parse_ctx c = {out, default_kernel};
  ks_code rc = for_each_line(source, add_line, &c, err);
  if (!rc && out->n == 0)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "no `// ksearch: launch global=(...) local=(...)` line "
                    "(CUDA: `launch grid=(...) block=(...)`); "
                    "GPU-style kernels need their launch geometry in the "
                    "header (docs/DESIGN.md: Candidate file)");
  if (rc) {
    ks_launch_free(out);
    return ks_err_prefix(err, "%s: ", path ? path : "<memory>");
  }
  return KS_OK;
}

typedef struct lines_ctx {
  char (*lines)[512];
  int *linenos;
  int n, max;
} lines_ctx;

static ks_code copy_line(void *vctx, const char *text, int line, ks_err *err) {
  (void)err;
  lines_ctx *c = vctx;
  if (c->n < c->max) {
    if (c->linenos)
      c->linenos[c->n] = line;
    ks_strlcpy(c->lines[c->n++], text, 512);
  }
  return KS_OK;
}

int ks_launch_lines(const char *source, char lines[][512], int max) {
  return ks_header_lines(source, "launch", lines, NULL, max);
}

int ks_header_lines(const char *source, const char *keyword, char lines[][512],
                    int *linenos, int max) {
  lines_ctx c = {lines, linenos, 0, max};
  for_each_keyword_line(source, keyword, copy_line, &c, NULL);
  return c.n;
}

typedef struct lookup_ctx {
  const ks_task *task;
  const ks_workload *w;
  const ks_param_value *params;
  int n_params;
  char bad[64]; /* a parameter whose value is not a number */
} lookup_ctx;

static bool lookup(void *vctx, const char *name, double *value) {
  lookup_ctx *c = vctx;
  int a = ks_task_axis_index(c->task, name);
  if (a >= 0) {
    *value = (double)c->w->axis[a];
    return true;
  }
  for (int i = 0; i < c->n_params; i++) {
    if (strcmp(c->params[i].name, name))
      continue;
    char *end;
    double v = strtod(c->params[i].value, &end);
    if (end == c->params[i].value || *end) {
      ks_strlcpy(c->bad, name, sizeof c->bad);
      return false;
    }
    *value = v;
    return true;
  }
  return false;
}

static const char *param_text(const lookup_ctx *c, const char *name) {
  for (int i = 0; i < c->n_params; i++)
    if (!strcmp(c->params[i].name, name))
      return c->params[i].value;
  return "";
}

static ks_code eval_size(const ks_expr *e, lookup_ctx *c, const char *what,
                         const ks_launch *k, double *out, ks_err *err) {
  c->bad[0] = 0;
  ks_code rc = ks_expr_eval_lookup(e, lookup, c, out, err);
  if (rc) {
    if (c->bad[0])
      ks_err_set(err, KS_ERR_INPUT,
                 "parameter %s is used in a launch expression but its value "
                 "\"%s\" is not a number",
                 c->bad, param_text(c, c->bad));
    return ks_err_prefix(err,
                         "line %d: kernel %s: %s (names are the task's axes "
                         "and the candidate's parameters): ",
                         k->line, k->kernel, what);
  }
  return KS_OK;
}

ks_code ks_launch_eval_expr(const ks_expr *e, const ks_task *task,
                            const ks_workload *w, const ks_param_value *params,
                            int n_params, double *out, ks_err *err) {
  lookup_ctx c = {task, w, params, n_params, ""};
  ks_code rc = ks_expr_eval_lookup(e, lookup, &c, out, err);
  if (rc && c.bad[0])
    ks_err_set(err, KS_ERR_INPUT,
               "parameter %s is used in a header expression but its value "
               "\"%s\" is not a number",
               c.bad, param_text(&c, c.bad));
  return rc ? KS_ERR_INPUT : KS_OK;
}

ks_code ks_launch_eval(const ks_launch_plan *p, const ks_task *task,
                       const ks_workload *w, const ks_param_value *params,
                       int n_params, ks_launch_geom *out, double *scratch_bytes,
                       ks_err *err) {
  lookup_ctx c = {task, w, params, n_params, ""};
  char wl[256];
  *scratch_bytes = 0;
  for (int i = 0; i < p->n; i++) {
    const ks_launch *k = &p->k[i];
    ks_launch_geom *g = &out[i];
    memset(g, 0, sizeof *g);
    g->dims = k->dims;
    for (int d = 0; d < 3; d++)
      g->global[d] = g->local[d] = 1;
    if (k->when) { /* a launch some shapes or parameters do without */
      double wv;
      if (eval_size(k->when, &c, "when", k, &wv, err))
        return err->code;
      if (wv == 0) {
        g->skip = true;
        continue;
      }
    }
    if (k->pdl) {
      double pv;
      if (eval_size(k->pdl, &c, "pdl", k, &pv, err))
        return err->code;
      g->pdl = pv != 0;
    }
    for (int d = 0; d < k->dims; d++) {
      double gv, lv;
      char what[32];
      snprintf(what, sizeof what, "%s[%d]", k->grid_style ? "grid" : "global",
               d);
      if (eval_size(k->global[d], &c, what, k, &gv, err))
        return err->code;
      snprintf(what, sizeof what, "%s[%d]", k->grid_style ? "block" : "local",
               d);
      if (eval_size(k->local[d], &c, what, k, &lv, err))
        return err->code;
      if (k->grid_style && gv > 0) /* a partial block is a whole one */
        gv = ceil(gv);
      const double limit = 1099511627776.0; /* 2^40 work-items */
      if (!(gv >= 1 && gv < limit) || !(lv >= 1 && lv < limit)) {
        ks_workload_format(task, w, wl, sizeof wl);
        return ks_err_set(err, KS_ERR_INPUT,
                          "line %d: kernel %s: %s[%d] = %g, %s[%d] = "
                          "%g for workload %s; sizes must be at least 1",
                          k->line, k->kernel, k->grid_style ? "grid" : "global",
                          d, gv, k->grid_style ? "block" : "local", d, lv, wl);
      }
      size_t l = (size_t)ceil(lv), gl = (size_t)ceil(gv);
      g->local[d] = l;
      if (k->grid_style) /* grid counts blocks */
        g->global[d] = gl * l;
      else
        g->global[d] = (gl + l - 1) / l * l; /* whole work-groups */
    }
    if (k->smem) {
      double sm;
      if (eval_size(k->smem, &c, "smem", k, &sm, err))
        return err->code;
      if (!(sm >= 0 && sm <= 1048576.0)) {
        ks_workload_format(task, w, wl, sizeof wl);
        return ks_err_set(err, KS_ERR_INPUT,
                          "line %d: smem = %g bytes for workload %s; "
                          "expected 0 to 1 MiB of shared memory per block",
                          k->line, sm, wl);
      }
      g->smem = (size_t)ceil(sm);
    }
    if (k->scratch) {
      double sb;
      if (eval_size(k->scratch, &c, "scratch", k, &sb, err))
        return err->code;
      if (!(sb >= 0 && sb < 68719476736.0)) {
        ks_workload_format(task, w, wl, sizeof wl);
        return ks_err_set(err, KS_ERR_INPUT,
                          "line %d: scratch = %g bytes for workload %s; "
                          "expected 0 to 64 GiB",
                          k->line, sb, wl);
      }
      if (sb > *scratch_bytes)
        *scratch_bytes = ceil(sb);
    }
  }
  return KS_OK;
}

ks_code ks_launch_check_style(const ks_launch_plan *p, bool want_grid,
                              const char *path, ks_err *err) {
  for (int i = 0; i < p->n; i++)
    if (p->k[i].grid_style != want_grid)
      return ks_err_set(
          err, KS_ERR_INPUT, "%s: line %d: %s", path ? path : "<memory>",
          p->k[i].line,
          want_grid ? "CUDA launch lines give grid=(blocks) block=(threads) "
                      "[smem=(bytes)], not global=/local="
                    : "OpenCL launch lines give global=(work-items) "
                      "local=(work-group size), not grid=/block=");
  return KS_OK;
}

int ks_launch_names(const ks_candidate *cand, ks_param_value *names, int max) {
  int n = 0;
  for (int i = 0; i < cand->n_set && n < max; i++)
    names[n++] = cand->set[i];
  const char *s = cand->source;
  while (s && *s && n < max) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    char line[256], name[64], value[64], extra[2];
    if (len < sizeof line) {
      memcpy(line, s, len);
      line[len] = 0;
      char *hash = line;
      while (*hash == ' ' || *hash == '\t')
        hash++;
      if (*hash == '#' &&
          sscanf(hash + 1, " define %63s %63s %1s", name, value, extra) == 2) {
        char *end;
        strtod(value, &end);
        bool taken = false;
        for (int i = 0; i < n; i++)
          taken |= !strcmp(names[i].name, name);
        if (!*end && end != value && !taken && !strchr(name, '(')) {
          ks_strlcpy(names[n].name, name, 64);
          ks_strlcpy(names[n].value, value, 64);
          n++;
        }
      }
    }
    s = nl ? nl + 1 : NULL;
  }
  return n;
}

void ks_launch_local_key(const ks_launch_geom *g, char *buf, size_t n) {
  snprintf(buf, n, "%zu-%zu-%zu", g->local[0], g->local[1], g->local[2]);
}

void ks_launch_free(ks_launch_plan *p) {
  for (int i = 0; i < p->n; i++) {
    for (int d = 0; d < 3; d++) {
      ks_expr_free(p->k[i].global[d]);
      ks_expr_free(p->k[i].local[d]);
    }
    ks_expr_free(p->k[i].scratch);
    ks_expr_free(p->k[i].smem);
    ks_expr_free(p->k[i].when);
    ks_expr_free(p->k[i].pdl);
  }
  memset(p, 0, sizeof *p);
}
