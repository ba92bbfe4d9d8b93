/* tensormap.c — see tensormap.h. */
#include "backend/cuda/tensormap.h"
#include "backend/opencl/launch.h"
#include "task/expr.h"
#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SYNTAX                                                                 \
  "tensormap NAME of=BUFFER box=(E0, E1) [swizzle=0|32|64|128] "               \
  "[view=(D0, D1)]"

/* "a, max(b,c), d": at most KS_TMAP_RANK expressions (launch.h). Returns
 * the count, -1 with the reason in err. */
static int split_exprs(const char *s, ks_expr **out, int line, const char *key,
                       ks_err *err) {
  int n = ks_header_parse_exprs(s, KS_TMAP_RANK, out, err);
  if (n == -2)
    ks_err_prefix(err, "line %d: %s: ", line, key);
  else if (n < 0)
    ks_err_set(err, KS_ERR_INPUT,
               "line %d: %s=(%s): expected 1 to %d comma-separated sizes "
               "(each under 256 characters), innermost first (%s)",
               line, key, s, KS_TMAP_RANK, SYNTAX);
  return n < 0 ? -1 : n;
}

static void free_one(ks_tmap *m) {
  for (int d = 0; d < KS_TMAP_RANK; d++) {
    ks_expr_free(m->box[d]);
    ks_expr_free(m->view[d]);
  }
  memset(m, 0, sizeof *m);
}

ks_code ks_tmap_parse_line(const char *text, const ks_task *task, int line,
                           ks_tmap *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  out->line = line;
  out->tensor = -1;
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  size_t nl = 0;
  while (p[nl] && !isspace((unsigned char)p[nl]) && p[nl] != '=')
    nl++;
  if (nl == 0 || nl >= sizeof out->name || p[nl] == '=') {
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: a tensormap line starts with the map's name "
                      "(the kernel parameter it becomes): %s",
                      line, SYNTAX);
  }
  memcpy(out->name, p, nl);
  out->name[nl] = 0;
  if (!ks_is_c_ident(out->name))
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: tensormap name \"%s\" must be a C identifier "
                      "(it names the kernel's CUtensorMap parameter): %s",
                      line, out->name, SYNTAX);
  p += nl;
  bool seen[4] = {false};
  ks_code rc = KS_OK;
  while (!rc) {
    char key[32], val[512];
    bool paren = false, done = false;
    rc = ks_header_next_kv(&p, line, "tensormap", SYNTAX, key, sizeof key, val,
                           sizeof val, &paren, &done, err);
    if (rc || done)
      break;
    static const char *const keys[] = {"of", "box", "swizzle", "view"};
    int k = -1;
    for (int i = 0; i < 4; i++)
      if (!strcmp(key, keys[i]))
        k = i;
    if (k < 0) {
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "line %d: unknown tensormap key \"%s\"; use of=, box=, "
                      "swizzle=, view= (interleave is none, out-of-bounds "
                      "elements read as zeros: %s)",
                      line, key, SYNTAX);
      break;
    }
    if (seen[k]) {
      rc = ks_err_set(err, KS_ERR_INPUT, "line %d: %s= given twice", line, key);
      break;
    }
    seen[k] = true;
    if (k == 0) {
      ks_strlcpy(out->of, val, sizeof out->of);
      for (int i = 0; i < task->n_inputs + task->n_outputs; i++) {
        const ks_tensor *t = i < task->n_inputs
                                 ? &task->inputs[i]
                                 : &task->outputs[i - task->n_inputs];
        if (!strcmp(t->name, val))
          out->tensor = i;
      }
      if (out->tensor < 0) {
        char names[512] = "";
        for (int i = 0; i < task->n_inputs + task->n_outputs; i++) {
          const ks_tensor *t = i < task->n_inputs
                                   ? &task->inputs[i]
                                   : &task->outputs[i - task->n_inputs];
          size_t l = strlen(names);
          snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", t->name);
        }
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "line %d: tensormap %s: of=%s is not a tensor of task "
                        "%s; a map can only cover one of its inputs or "
                        "outputs (%s)",
                        line, out->name, val, task->name, names);
      }
    } else if (k == 1 || k == 3) {
      int n = paren ? split_exprs(val, k == 1 ? out->box : out->view, line, key,
                                  err)
                    : -1;
      if (n < 0 && !paren)
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "line %d: %s=%s: give the sizes in parentheses, "
                        "innermost first, e.g. %s=(64, 128) (%s)",
                        line, key, val, key, SYNTAX);
      else if (n < 0)
        rc = err->code;
      else if (k == 1)
        out->rank = n;
      else
        out->n_view = n;
    } else {
      char *end;
      long s = strtol(val, &end, 10);
      if (end == val || *end || (s != 0 && s != 32 && s != 64 && s != 128))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "line %d: swizzle=%s: expected 0, 32, 64 or 128 (the "
                        "swizzle span in bytes; 128 is the layout wgmma's "
                        "128B descriptors read)",
                        line, val);
      else
        out->swizzle = (int)s;
    }
  }
  if (!rc && !seen[0])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: tensormap %s has no of=BUFFER; name the task's "
                    "input or output it covers (%s)",
                    line, out->name, SYNTAX);
  if (!rc && !seen[1])
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: tensormap %s has no box=(...); give the tile "
                    "one copy moves, innermost first, e.g. box=(64, 128)",
                    line, out->name);
  if (!rc) {
    const ks_tensor *t = out->tensor < task->n_inputs
                             ? &task->inputs[out->tensor]
                             : &task->outputs[out->tensor - task->n_inputs];
    int want = out->n_view ? out->n_view : t->rank;
    if (!out->n_view && t->rank > KS_TMAP_RANK)
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "line %d: tensormap %s: %s has %d dimensions, the TMA "
                      "at most %d; regroup it with view=(...)",
                      line, out->name, t->name, t->rank, KS_TMAP_RANK);
    else if (out->rank != want)
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "line %d: tensormap %s: box has %d dimension%s but the "
                      "map has %d (%s); give one box size per dimension, "
                      "innermost first",
                      line, out->name, out->rank, out->rank == 1 ? "" : "s",
                      want,
                      out->n_view ? "its view="
                                  : "the buffer's shape; or "
                                    "regroup it with view=");
  }
  if (rc)
    free_one(out);
  return rc;
}

ks_code ks_tmap_parse(const char *source, const char *path, const ks_task *task,
                      ks_tmap_set *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  char lines[KS_TMAP_MAX + 1][512];
  int nos[KS_TMAP_MAX + 1];
  int n = ks_header_lines(source, "tensormap", lines, nos, KS_TMAP_MAX + 1);
  ks_code rc = KS_OK;
  if (n > KS_TMAP_MAX)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "line %d: more than %d tensormap lines; the kernel takes "
                    "at most %d tensor maps",
                    nos[KS_TMAP_MAX], KS_TMAP_MAX, KS_TMAP_MAX);
  for (int i = 0; !rc && i < n; i++) {
    rc = ks_tmap_parse_line(lines[i], task, nos[i], &out->m[i], err);
    if (rc)
      break;
    out->n++;
    for (int j = 0; j < i; j++)
      if (!strcmp(out->m[j].name, out->m[i].name))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "line %d: tensormap %s is declared twice (line %d); "
                        "each map is one kernel parameter: give it its own "
                        "name",
                        nos[i], out->m[i].name, out->m[j].line);
  }
  if (rc) {
    ks_tmap_free(out);
    return ks_err_prefix(err, "%s: ", path ? path : "<memory>");
  }
  return KS_OK;
}

/* CUtensorMapDataType of a task dtype (cuda.h, CUDA 12/13). */
static int cu_dtype(ks_dtype t) {
  switch (t) {
  case KS_U8: return 0;   /* UINT8 */
  case KS_I32: return 3;  /* INT32 */
  case KS_I64: return 5;  /* INT64 */
  case KS_F16: return 6;  /* FLOAT16 */
  case KS_F32: return 7;  /* FLOAT32 */
  case KS_BF16: return 9; /* BFLOAT16 */
  default: return -1;
  }
}

static ks_code whole(const ks_expr *e, const ks_task *task,
                     const ks_workload *w, const ks_param_value *params,
                     int n_params, const ks_tmap *m, const char *what, int d,
                     double lo, double hi, uint64_t *out, ks_err *err) {
  double v;
  if (ks_launch_eval_expr(e, task, w, params, n_params, &v, err))
    return ks_err_prefix(err,
                         "line %d: tensormap %s: %s[%d] (names are the task's "
                         "axes and the candidate's parameters): ",
                         m->line, m->name, what, d);
  if (!(v >= lo && v <= hi) || v != floor(v)) {
    char wl[256];
    ks_workload_format(task, w, wl, sizeof wl);
    return ks_err_set(err, KS_ERR_INPUT,
                      "line %d: tensormap %s: %s[%d] = %g for workload %s; "
                      "expected a whole number from %.0f to %.0f%s",
                      m->line, m->name, what, d, v, wl, lo, hi,
                      hi == 256 ? " (one TMA copy moves at most 256 elements "
                                  "per dimension: split the tile)"
                                : "");
  }
  *out = (uint64_t)v;
  return KS_OK;
}

ks_code ks_tmap_eval(const ks_tmap_set *s, const ks_task *task,
                     const ks_workload *w, const ks_param_value *params,
                     int n_params, ks_tmap_geom *out, ks_err *err) {
  char wl[256];
  for (int i = 0; i < s->n; i++) {
    const ks_tmap *m = &s->m[i];
    ks_tmap_geom *g = &out[i];
    memset(g, 0, sizeof *g);
    const ks_tensor *t = m->tensor < task->n_inputs
                             ? &task->inputs[m->tensor]
                             : &task->outputs[m->tensor - task->n_inputs];
    g->rank = m->rank;
    g->dtype = cu_dtype(t->dtype);
    g->elem_bytes = (int)ks_dtype_size(t->dtype);
    g->swizzle = m->swizzle == 0    ? 0
                 : m->swizzle == 32 ? 1
                 : m->swizzle == 64 ? 2
                                    : 3;
    uint64_t numel = (uint64_t)ks_tensor_numel(task, t, w);
    g->bytes = numel * (uint64_t)g->elem_bytes;
    if (g->dtype < 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "line %d: tensormap %s: %s is %s, which the TMA has "
                        "no data type for",
                        m->line, m->name, t->name, ks_dtype_name(t->dtype));
    const double dim_max = 4294967296.0; /* 2^32 */
    if (m->n_view) {
      uint64_t prod = 1;
      for (int d = 0; d < m->n_view; d++) {
        if (whole(m->view[d], task, w, params, n_params, m, "view", d, 1,
                  dim_max, &g->dim[d], err))
          return err->code;
        prod = prod > UINT64_MAX / g->dim[d] ? UINT64_MAX : prod * g->dim[d];
      }
      if (prod != numel) {
        ks_workload_format(task, w, wl, sizeof wl);
        return ks_err_set(err, KS_ERR_INPUT,
                          "line %d: tensormap %s: view=(...) holds %llu "
                          "elements but %s has %llu for workload %s; a view "
                          "only regroups the buffer's packed dimensions "
                          "(innermost first: [b,h,s,d] as (d, b*h*s)), so "
                          "their product must be its element count",
                          m->line, m->name, (unsigned long long)prod, t->name,
                          (unsigned long long)numel, wl);
      }
    } else {
      for (int d = 0; d < t->rank; d++) {
        g->dim[d] = (uint64_t)w->axis[t->dims[t->rank - 1 - d]];
        if (g->dim[d] < 1 || (double)g->dim[d] > dim_max) {
          ks_workload_format(task, w, wl, sizeof wl);
          return ks_err_set(err, KS_ERR_INPUT,
                            "line %d: tensormap %s: %s's dimension %d is "
                            "%llu for workload %s; the TMA takes 1 to 2^32",
                            m->line, m->name, t->name, d,
                            (unsigned long long)g->dim[d], wl);
        }
      }
    }
    g->encodable = true;
    uint64_t stride = (uint64_t)g->elem_bytes;
    for (int d = 0; d + 1 < g->rank; d++) {
      stride *= g->dim[d];
      g->stride[d] = stride;
      if (stride % 16)
        g->encodable = false;
      if (stride >= (1ULL << 40)) {
        ks_workload_format(task, w, wl, sizeof wl);
        return ks_err_set(err, KS_ERR_INPUT,
                          "line %d: tensormap %s: a stride of %llu bytes for "
                          "workload %s; the TMA takes strides below 2^40",
                          m->line, m->name, (unsigned long long)stride, wl);
      }
    }
    for (int d = 0; d < g->rank; d++) {
      uint64_t b;
      if (whole(m->box[d], task, w, params, n_params, m, "box", d, 1, 256, &b,
                err))
        return err->code;
      g->box[d] = (uint32_t)b;
    }
    uint64_t inner = (uint64_t)g->box[0] * (uint64_t)g->elem_bytes;
    if (inner % 16) {
      ks_workload_format(task, w, wl, sizeof wl);
      return ks_err_set(err, KS_ERR_INPUT,
                        "line %d: tensormap %s: box[0] = %u elements of %d "
                        "bytes = %llu bytes for workload %s; the innermost "
                        "box must be a multiple of 16 bytes",
                        m->line, m->name, g->box[0], g->elem_bytes,
                        (unsigned long long)inner, wl);
    }
    if (m->swizzle && inner > (uint64_t)m->swizzle) {
      ks_workload_format(task, w, wl, sizeof wl);
      return ks_err_set(err, KS_ERR_INPUT,
                        "line %d: tensormap %s: box[0] = %llu bytes for "
                        "workload %s but swizzle=%d swizzles a %d-byte span; "
                        "the innermost box must fit in it (box[0] <= %d "
                        "elements): split the tile into several copies",
                        m->line, m->name, (unsigned long long)inner, wl,
                        m->swizzle, m->swizzle, m->swizzle / g->elem_bytes);
    }
  }
  return KS_OK;
}

void ks_tmap_free(ks_tmap_set *s) {
  for (int i = 0; i < s->n; i++)
    free_one(&s->m[i]);
  memset(s, 0, sizeof *s);
}
