/* context.c — see context.h. */
#include "llm/context.h"
#include "task/signature.h"
#include "util/util.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

char *ks_llm_clip(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n <= max)
    return ks_strdup(s);
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
    max--;
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_append(&b, s, max);
  ks_buf_printf(&b, "\n[... %zu more bytes not shown]\n", n - max);
  return b.data;
}

static const char *take(ks_buf *b) { return b->data ? b->data : ""; }

static void shape(ks_buf *b, const ks_task *t, const ks_tensor *x) {
  ks_buf_printf(b, "%s %s[", ks_dtype_name(x->dtype), x->name);
  for (int d = 0; d < x->rank; d++)
    ks_buf_printf(b, "%s%s", d ? ", " : "", t->axes[x->dims[d]].name);
  ks_buf_puts(b, "]");
}

static void task_core(ks_buf *b, const ks_task *t) {
  ks_buf_printf(b, "name: %s (class %s)\nstatement: %s\n", t->name, t->klass,
                t->description);
  ks_buf sig;
  ks_buf_init(&sig);
  ks_signature_c(t, t->name, &sig);
  ks_buf_printf(b, "entry point (exact C signature):\n  %s;\n", take(&sig));
  ks_buf_free(&sig);
}

char *ks_llm_task_short(const ks_task *t) {
  ks_buf b;
  ks_buf_init(&b);
  task_core(&b, t);
  return b.data;
}

char *ks_llm_task_text(const ks_task *t, bool with_reference) {
  ks_buf b;
  ks_buf_init(&b);
  task_core(&b, t);
  ks_buf_puts(&b, "inputs (read only, row-major, contiguous): ");
  for (int i = 0; i < t->n_inputs; i++) {
    ks_buf_puts(&b, i ? ", " : "");
    shape(&b, t, &t->inputs[i]);
  }
  ks_buf_puts(&b, "\noutputs (row-major, contiguous; every element must be "
                  "written): ");
  for (int i = 0; i < t->n_outputs; i++) {
    ks_buf_puts(&b, i ? ", " : "");
    shape(&b, t, &t->outputs[i]);
  }
  ks_buf_puts(&b, "\n");
  for (int i = 0; i < t->n_axes; i++)
    if (t->axes[i].is_const && !t->axes[i].derive)
      ks_buf_printf(&b, "constant axis %s = %lld (not passed; hard-code it)\n",
                    t->axes[i].name, (long long)t->axes[i].value);
  for (int i = 0; i < t->n_axes; i++)
    if (t->axes[i].derive)
      ks_buf_printf(&b,
                    "derived axis %s = %s (not passed; compute it from the "
                    "axes it names)\n",
                    t->axes[i].name, t->axes[i].derive_src);
  for (int i = 0; i < t->n_scalars; i++)
    ks_buf_printf(&b, "scalar %s (%s), passed as an argument\n",
                  t->scalars[i].name, ks_dtype_name(t->scalars[i].dtype));
  ks_buf_puts(&b, "workloads (every one must be correct; the score is the "
                  "geometric-mean speedup over all):\n");
  for (int i = 0; i < t->n_workloads; i++) {
    char wl[256];
    ks_workload_format(t, &t->workloads[i], wl, sizeof wl);
    ks_buf_printf(&b, "  %s\n", wl);
  }
  bool any = false;
  for (int d = 0; d < KS_DTYPE_COUNT; d++) {
    bool used = false;
    for (int i = 0; i < t->n_outputs; i++)
      used |= t->outputs[i].dtype == (ks_dtype)d;
    if (!used || !ks_dtype_is_float((ks_dtype)d))
      continue;
    ks_tolerance tol = ks_task_tolerance(t, (ks_dtype)d);
    ks_buf_printf(&b,
                  "%s%s: |y - ref| <= %g + %g*|ref| per element, and the "
                  "relative L2 error <= %g",
                  any ? "; " : "tolerance: ", ks_dtype_name((ks_dtype)d),
                  tol.atol, tol.rtol, tol.rtol);
    any = true;
  }
  if (any)
    ks_buf_puts(&b, "\n");
  if (t->cost_bytes_src[0] || t->cost_flops_src[0])
    ks_buf_printf(&b, "cost model: bytes = %s; flops = %s\n",
                  t->cost_bytes_src[0] ? t->cost_bytes_src : "?",
                  t->cost_flops_src[0] ? t->cost_flops_src : "?");
  if (with_reference) {
    char *ref = NULL;
    ks_err e;
    if (ks_read_file(t->reference_path, &ref, NULL, &e) == KS_OK) {
      char *c = ks_llm_clip(ref, 12000);
      ks_buf_printf(&b,
                    "reference implementation (plain and correct, not fast):"
                    "\n```c\n%s%s```\n",
                    c, c[0] && c[strlen(c) - 1] == '\n' ? "" : "\n");
      free(c);
      free(ref);
    }
  }
  return b.data;
}

char *ks_llm_spec_text(const char *backend, const ks_roofline *roof,
                       const ks_class_spec *spec) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "backend: %s", backend);
  if (!strcmp(backend, "c"))
    ks_buf_puts(&b, " (C11 with GNU extensions; built with cc -O3 "
                    "-march=native -fopenmp -fPIC -shared -lm; no "
                    "-ffast-math)");
  ks_buf_puts(&b, "\n");
  if (roof) {
    ks_buf_printf(&b,
                  "device: %s; SIMD: %s; %d OpenMP threads\nmeasured: "
                  "memory bandwidth %.1f GB/s, peak FP32 %.1f GFLOP/s\n",
                  roof->device, roof->isa, roof->threads, roof->bandwidth_gbps,
                  roof->peak_gflops);
  }
  ks_buf_puts(&b,
              "allowed: the C standard library's math and memory functions, "
              "OpenMP pragmas and runtime calls, GCC vector extensions, "
              "intrinsics of the SIMD level above (<immintrin.h> / "
              "<arm_neon.h>), static helper functions, stack and heap "
              "memory.\nforbidden (the candidate is rejected before it is "
              "compiled, or killed by the sandbox): fork/exec/system/popen, "
              "pthread_create and other threads of your own, sockets, "
              "writing files, raw syscalls, dlopen, inline assembly, exit.\n");
  if (spec)
    for (int i = 0; i < spec->n_constraints; i++)
      ks_buf_printf(&b, "math constraint: %s\n", spec->constraints[i]);
  return b.data;
}

char *ks_llm_concepts_text(char *const *ids, int n) {
  ks_buf b;
  ks_buf_init(&b);
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%.*s/specs/concepts/%.100s.json",
             PATH_MAX - 160, ks_data_dir(), ids[i]);
    json_t *j = ks_file_exists(path) ? json_load_file(path, 0, NULL) : NULL;
    const char *d = json_string_value(json_object_get(j, "description"));
    if (!d)
      d = json_string_value(json_object_get(j, "summary"));
    char *c = d ? ks_llm_clip(d, 600) : NULL;
    ks_buf_printf(&b, "- %s%s%s\n", ids[i], c ? ": " : "", c ? c : "");
    free(c);
    json_decref(j);
  }
  if (!n)
    ks_buf_puts(&b, "(none named by this step)\n");
  return b.data;
}

char *ks_llm_templates_text(const ks_template_set *tpls) {
  ks_buf b;
  ks_buf_init(&b);
  for (int i = 0; tpls && i < tpls->n; i++) {
    const ks_template *t = &tpls->t[i];
    ks_buf_printf(&b, "- template %s: family %s, %d tunable parameters",
                  t->name, t->family, t->cand.n_decls);
    for (int c = 0; c < t->n_concepts; c++)
      ks_buf_printf(&b, "%s%s", c ? ", " : "; concepts ", t->concepts[c]);
    ks_buf_puts(&b, "\n");
  }
  if (!tpls || !tpls->n)
    ks_buf_puts(&b, "(none: the task has no templates for this backend)\n");
  return b.data;
}

/* ms with a decimal point always (see context.h) */
/* A measured number with `sig` significant digits and always a digit after
 * the point (or an exponent): the LLM call cache masks decimals, and %#g's
 * "858." or "123.x" read as integers there, so a recorded session missed
 * on replay wherever a figure crossed 100 (the H200 session of 2026-12-03) */
static void num(ks_buf *b, double v, int sig) {
  double a = fabs(v);
  if (!isfinite(v) || v == 0) {
    ks_buf_printf(b, "%.1f", v);
    return;
  }
  if (a >= 1e6 || a < 1e-4) {
    ks_buf_printf(b, "%.*e", sig - 1, v);
    return;
  }
  int dec = sig - 1 - (int)floor(log10(a));
  ks_buf_printf(b, "%.*f", dec < 1 ? 1 : dec, v);
}

static void ms(ks_buf *b, double ns) {
  num(b, ns / 1e6, 4);
  ks_buf_puts(b, " ms");
}

static void workload_line(ks_buf *b, const ks_task *t, const json_t *w,
                          size_t i, bool timings_only) {
  json_t *axes = json_object_get(w, "axes");
  const char *k;
  json_t *v;
  ks_buf_puts(b, "  ");
  bool first = true;
  json_object_foreach(axes, k, v) {
    ks_buf_printf(b, "%s%s=%lld", first ? "" : " ", k,
                  (long long)json_integer_value(v));
    first = false;
  }
  if (first && i < (size_t)t->n_workloads) {
    char wl[256];
    ks_workload_format(t, &t->workloads[i], wl, sizeof wl);
    ks_buf_puts(b, wl);
  }
  bool correct = json_is_true(json_object_get(w, "correct"));
  double med = json_number_value(json_object_get(w, "time_ns_median"));
  double ref =
      json_number_value(json_object_get(w, "reference_time_ns_median"));
  const char *reason = json_string_value(json_object_get(w, "reason"));
  if (!timings_only)
    ks_buf_puts(b, correct ? ": correct" : ": WRONG");
  if (med > 0) {
    ks_buf_puts(b, timings_only ? ": " : ", ");
    ms(b, med);
    if (ref > 0) {
      ks_buf_puts(b, " (reference ");
      ms(b, ref);
      ks_buf_puts(b, "), speedup ");
      num(b, json_number_value(json_object_get(w, "speedup")), 3);
      ks_buf_puts(b, "x");
    }
    ks_buf_puts(b, ", ");
    num(b, json_number_value(json_object_get(w, "gbps")), 3);
    ks_buf_printf(b, " GB/s, roofline fraction %#.3f",
                  json_number_value(json_object_get(w, "roofline_fraction")));
  } else if (timings_only) {
    ks_buf_puts(b, ": not timed");
  }
  if (!timings_only && reason && *reason)
    ks_buf_printf(b, " (%s)", reason);
  ks_buf_puts(b, "\n");
}

char *ks_llm_timings_text(const ks_task *t, const json_t *result) {
  ks_buf b;
  ks_buf_init(&b);
  json_t *wls = json_object_get(result, "workloads");
  if (!json_is_true(json_object_get(result, "correct")) ||
      !json_array_size(wls)) {
    ks_buf_puts(&b, "none (no correct, timed result)\n");
    return b.data;
  }
  ks_buf_printf(&b, "score %#.3fx (geometric-mean speedup)\n",
                json_number_value(json_object_get(result, "score")));
  size_t i;
  json_t *w;
  json_array_foreach(wls, i, w) workload_line(&b, t, w, i, true);
  return b.data;
}

char *ks_llm_result_text(const ks_task *t, const json_t *result) {
  ks_buf b;
  ks_buf_init(&b);
  const char *st = json_string_value(json_object_get(result, "status"));
  ks_buf_printf(&b, "status: %s", st ? st : "?");
  if (json_is_true(json_object_get(result, "correct")))
    ks_buf_printf(&b, ", score %#.3fx",
                  json_number_value(json_object_get(result, "score")));
  ks_buf_puts(&b, "\n");
  const char *e = json_string_value(json_object_get(result, "error"));
  if (e && *e) {
    char *c = ks_llm_compiler_text(e, 3000);
    ks_buf_printf(&b, "reason: %s\n", c);
    free(c);
  }
  json_t *wls = json_object_get(result, "workloads");
  bool any_ran = false;
  size_t i;
  json_t *w;
  json_array_foreach(wls, i, w) any_ran |=
      json_number_value(json_object_get(w, "time_ns_median")) > 0 ||
      json_is_true(json_object_get(w, "correct")) ||
      json_object_get(w, "reason");
  if (any_ran) {
    ks_buf_puts(&b, "workloads:\n");
    json_array_foreach(wls, i, w) workload_line(&b, t, w, i, false);
  }
  return b.data;
}

char *ks_llm_compiler_text(const char *log, size_t max) {
  ks_buf b;
  ks_buf_init(&b);
  const char *p = log ? log : "";
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    /* "/home/u/.cache/ksearch/build/0123abcd/candidate.c:3:1: error" ->
     * "candidate.c:3:1: error": paths say nothing to the model and differ
     * between machines */
    const char *line_end = p + len;
    const char *q = p;
    while (q < line_end) {
      const char *slash = NULL;
      if (*q == '/') {
        const char *r = q;
        while (r < line_end && *r != ' ' && *r != ':' && *r != '\n' &&
               *r != '\'' && *r != '"')
          r++;
        int slashes = 0;
        for (const char *s = q; s < r; s++)
          if (*s == '/') {
            slash = s;
            slashes++;
          }
        bool file = slash && slashes >= 2 && slash[1] != '/' &&
                    memchr(slash, '.', (size_t)(r - slash)) != NULL;
        if (file) {
          ks_buf_append(&b, slash + 1, (size_t)(r - slash - 1));
          q = r;
          continue;
        }
      }
      ks_buf_append(&b, q, 1);
      q++;
    }
    p += len;
  }
  char *out = ks_llm_clip(b.data ? b.data : "", max);
  ks_buf_free(&b);
  return out;
}
