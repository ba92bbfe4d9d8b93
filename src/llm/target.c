/* target.c — see target.h. The per-backend table, the prompts' target text
 * and the check of a coder answer before any compiler. */
#include "llm/target.h"
#include "backend/backend.h"
#include "backend/cuda/tensormap.h"
#include "backend/opencl/launch.h"
#include "llm/context.h"
#include "spec/spec.h"
#include "spec/validator.h"
#include "util/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define BASELINE_MAX 12000 /* bytes of a baseline quoted in a prompt */
#define SEED_MAX 12000     /* bytes of the CUDA seed quoted */

/* One row per backend the LLM coder writes for. mlx: mx.fast.cuda_kernel
 * bodies (Linux GPUs); Metal bodies for Apple are not written by the coder
 * yet (no Mac here to measure them). */
static const ks_llm_backend k_backends[] = {
    {"c", "c", "c",
     "C11 with GNU extensions; built with cc -O3 -march=native -fopenmp -fPIC "
     "-shared -lm (no -ffast-math) and called in-process through a shim; "
     "timed by wall clock around each call, caches evicted before it",
     "the entry point is a C function with exactly the signature of the task "
     "(inputs const T *restrict, outputs T *restrict, var axes int64_t, "
     "scalars), parallelized with OpenMP as you see fit",
     KS_LLM_LAUNCH_NONE},
    {"opencl", "opencl", "opencl",
     "OpenCL C 1.2 program, built by the device's OpenCL compiler with only "
     "the -DPARAM=V options of the header (no -cl-fast-relaxed-math); the "
     "kernels run in launch-line order on one in-order queue; the time that "
     "counts is wall clock from the first enqueue to clFinish (no "
     "transfers: the buffers are already on the device)",
     "kernels are `__kernel void NAME(...)`; arguments in the task's C order "
     "as OpenCL types: inputs `__global const T *`, outputs `__global T *`, "
     "var axes `long`, scalars `float`/`int`/`long`, then `__global uchar "
     "*scratch` when a launch line asks for scratch=; float16/bfloat16 "
     "tensors are `ushort` bit patterns; every kernel of the file takes the "
     "same arguments. One header line per launch, in order (at most 8):\n"
     "// ksearch: launch [kernel=NAME] global=(E[,E[,E]]) local=(E[,E[,E]]) "
     "[scratch=(E)] [when=(E)]\n"
     "E are expressions over the task's axes, the header's params and "
     "numeric #defines (+ - * / % min max cdiv); global and local count "
     "work-items, each global is rounded up to a multiple of local (so "
     "bounds-check); no kernel= launches the entry",
     KS_LLM_LAUNCH_LOCAL},
    {"cuda", "cuda", "cuda",
     "CUDA C++17 device code: nvcc -cubin -O3 -std=c++17 for the device's "
     "own architecture (sm_90a on the H200); no host code of the file ever "
     "runs (no main, no cudaMalloc, no <<<...>>>): ksearch loads the cubin "
     "with the driver API and launches the kernels the launch lines name. "
     "Timing: before every timed call a flush kernel reads twice the L2 "
     "(cold caches), then a CUDA event, every launch in file order on the "
     "default stream, an event, cuCtxSynchronize; the event time is checked "
     "against ksearch's own clock",
     "kernels are `extern \"C\" __global__ void NAME(...)`; arguments in the "
     "task's C order: device pointers for inputs (`const T *`) then outputs "
     "(`T *`), var axes `long`, scalars `float`/`int`/`long`, then `void "
     "*scratch` when a launch line asks for scratch=; bfloat16 tensors are "
     "`__nv_bfloat16` (or `unsigned short` bits), float16 `__half`. One "
     "header line per launch, in order (at most 8):\n"
     "// ksearch: launch [kernel=NAME] grid=(E[,E[,E]]) block=(E[,E[,E]]) "
     "[smem=(E)] [scratch=(E)] [when=(E)] [pdl=(E)] (when=: launched only "
     "where E is not 0; pdl=: where E is not 0 the kernel is a programmatic "
     "dependent launch (sm_90+) that may start while the previous kernel of "
     "the call runs: it must execute `griddepcontrol.wait` before reading "
     "that kernel's results, and the previous kernel may execute "
     "`griddepcontrol.launch_dependents` early)\n"
     "grid counts blocks (a fractional count rounds up), block threads per "
     "block (at most 1024; grid x < 2^31, y and z <= 65535), smem dynamic "
     "shared memory bytes (above 48 KiB the limit is raised for you); E are "
     "expressions over the task's axes, the header's params and numeric "
     "#defines (+ - * / % min max cdiv); no kernel= launches the entry. "
     "TMA tensor maps (optional, at most 8), one header line each:\n"
     "// ksearch: tensormap NAME of=BUFFER box=(E0[,E1...]) "
     "[swizzle=0|32|64|128] [view=(D0[,D1...])]\n"
     "the executor encodes a CUtensorMap over exactly that input or output "
     "(sizes innermost first, the reverse of the task's shape; view= "
     "regroups it, same element count; box <= 256 per dimension, the "
     "innermost a multiple of 16 bytes and within the swizzle span; zeros "
     "out of bounds) and passes it after every other argument, in line "
     "order, as `const __grid_constant__ T NAME` with T a 128-byte "
     "alignas(64) struct; where the rows are not 16-byte multiples the map "
     "is all zeros: check the shape before using it",
     KS_LLM_LAUNCH_GRID},
    {"mlx", "cuda", "mlx-cuda-sm90",
     "the body of an MLX mx.fast.cuda_kernel, compiled by MLX with NVRTC "
     "for the device as sm_90 on the H200 (no `a`: no wgmma, setmaxnreg "
     "or other sm_90a-only instructions; mma.sync, ldmatrix, cp.async and "
     "TMA bulk copies are there) and run by MLX in a Python "
     "executor; inputs are already on the device; the time that counts is "
     "from the call to mx.eval and a device synchronize, cold L2; the "
     "speedup is over what an MLX user calls today (mx.softmax, "
     "mx.fast.rms_norm, mx.fast.layer_norm, mlx-lm's loops)",
     "MLX writes the kernel's signature: `__global__ void NAME(const T* "
     "input..., T* output...)` with the task's inputs then outputs by their "
     "names (float32 `float`, bfloat16 `__nv_bfloat16`, int32 `int32_t`; "
     "scalars as 1-element input arrays read as name[0]); the task's axes "
     "are `constexpr int NAME` values at the top of the body; the header's "
     "params are macros. Write the header lines, then helpers (__device__ "
     "functions, structs), then a line `// ksearch: body`, then only the "
     "statements of the kernel's body (no signature, no closing brace of "
     "it). One launch line, grid counted in THREADS (MLX launches "
     "ceil(grid/threadgroup) blocks):\n"
     "// ksearch: launch grid=(E[,E[,E]]) threadgroup=(E[,E[,E]]) "
     "[smem=(E)] [scratch=(E)]\n"
     "E are expressions over the axes and params (+ - * / % min max cdiv); "
     "threadgroup at most 1024 threads; smem the dynamic shared memory in "
     "bytes (extern __shared__); scratch=(E): one more output after the "
     "task's, `int32_t* ks_scratch` of at least E bytes, every byte 0xFF "
     "at each call. No `inf` or INFINITY (MLX's header defines "
     "neither: use __int_as_float(0xff800000)); no host code, no <<<>>>",
     KS_LLM_LAUNCH_MLX},
};

const ks_llm_backend *ks_llm_backend_find(const char *name) {
  for (size_t i = 0; i < sizeof k_backends / sizeof *k_backends; i++)
    if (!strcmp(k_backends[i].name, name))
      return &k_backends[i];
  return NULL;
}

/* ---------------------------------------------------------------- facts */

static void value_text(ks_buf *b, const json_t *v) {
  if (json_is_array(v)) {
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
      ks_buf_puts(b, i ? "; " : "");
      value_text(b, x);
    }
  } else if (json_is_string(v)) {
    ks_buf_puts(b, json_string_value(v));
  } else if (json_is_integer(v)) {
    ks_buf_printf(b, "%lld", (long long)json_integer_value(v));
  } else if (json_is_number(v)) {
    ks_buf_printf(b, "%g", json_number_value(v));
  } else if (json_is_boolean(v)) {
    ks_buf_puts(b, json_is_true(v) ? "yes" : "no");
  }
}

/* A fact leaf is {value, unit?, note?, ...}; groups nest leaves. The source
 * stays out of the prompt (it is for people reading the spec). */
static void facts_text(ks_buf *b, const json_t *facts, const char *prefix,
                       int depth) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)facts, k, v) {
    if (!json_is_object(v) || depth > 4)
      continue;
    json_t *val = json_object_get(v, "value");
    if (!val) {
      char p[160];
      snprintf(p, sizeof p, "%s%s.", prefix, k);
      facts_text(b, v, p, depth + 1);
      continue;
    }
    ks_buf_printf(b, "- %s%s: ", prefix, k);
    value_text(b, val);
    const char *mk;
    json_t *mv;
    json_object_foreach(v, mk, mv) {
      if (!strcmp(mk, "value") || !strcmp(mk, "source"))
        continue;
      ks_buf_puts(b, !strcmp(mk, "unit") ? " " : "; ");
      if (strcmp(mk, "unit"))
        ks_buf_printf(b, "%s: ", mk);
      value_text(b, mv);
    }
    ks_buf_puts(b, "\n");
  }
}

static void fenced_file(ks_buf *b, const char *lang, const char *text,
                        size_t max) {
  char *c = ks_llm_clip(text, max);
  ks_buf_printf(b, "```%s\n%s%s```\n", lang, c,
                c[0] && c[strlen(c) - 1] == '\n' ? "" : "\n");
  free(c);
}

/* tasks/<t>/baseline/<backend>.<ext>, as the evaluator finds it. */
static void baseline_text(ks_buf *b, const ks_llm_backend *be,
                          const ks_task *t) {
  static const char *const exts[] = {"cu", "cl", "c"};
  for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.3000s/baseline/%s.%s", t->dir, be->name,
             exts[i]);
    char *src = NULL;
    ks_err e;
    if (!ks_file_exists(path) || ks_read_file(path, &src, NULL, &e))
      continue;
    ks_buf_printf(&(*b),
                  "device baseline (tasks/%s/baseline/%s.%s): on this "
                  "backend the score is the geometric-mean speedup over this "
                  "kernel, not over the C reference; beat it:\n",
                  t->name, be->name, exts[i]);
    fenced_file(b, be->fence, src, BASELINE_MAX);
    free(src);
    return;
  }
}

static void roofline_text(ks_buf *b, const ks_roofline *r) {
  ks_buf_printf(b, "measured on this device (%s): memory bandwidth %.1f GB/s",
                r->device, r->bandwidth_gbps);
  if (r->l2_gbps > 0)
    ks_buf_printf(b, ", L2 %.1f GB/s", r->l2_gbps);
  ks_buf_printf(b, ", peak FP32 %.1f GFLOP/s", r->peak_gflops);
  if (r->tc_gflops > 0)
    ks_buf_printf(b, ", bf16 tensor cores %.1f GFLOP/s", r->tc_gflops);
  if (r->sm_clock_mhz > 0)
    ks_buf_printf(b, ", SM clock %.1f MHz", r->sm_clock_mhz);
  if (!strcmp(r->backend, "c"))
    ks_buf_printf(b, "; SIMD %s; %d OpenMP threads", r->isa, r->threads);
  ks_buf_puts(b, "; every timed result reports its roofline fraction (the "
                 "time the roofline allows over the time measured)\n");
}

static bool in_class(const ks_concept *c, const char *klass) {
  size_t i;
  json_t *x;
  json_array_foreach(
      json_object_get(c->json, "classes"), i,
      x) if (!strcmp(json_string_value(x) ? json_string_value(x) : "",
                     klass)) return true;
  return false;
}

static const char *form_key(const char *backend) {
  return !strcmp(backend, "mlx") ? "metal" : backend;
}

static void concept_line(ks_buf *b, const ks_concept *c, const char *backend) {
  const char *tid = ks_spec_target_id(backend);
  const char *form = ks_concept_form(c, form_key(backend));
  const json_t *gap = ks_concept_gap(c, tid, form_key(backend));
  ks_buf_printf(b, "- %s (%s): ", c->id, c->name);
  char *f = ks_llm_clip(form ? form : "no native form recorded", 500);
  ks_buf_puts(b, f);
  free(f);
  if (gap)
    ks_buf_printf(b, " [no direct equivalent here: %s; instead: %s]",
                  json_string_value(json_object_get(gap, "what")) ?: "?",
                  json_string_value(json_object_get(gap, "alternative"))
                      ?: "?");
  ks_buf_puts(b, "\n");
}

char *ks_llm_concept_forms_text(char *const *ids, int n, const char *backend) {
  ks_buf b;
  ks_buf_init(&b);
  const ks_concept_set *cs = NULL;
  ks_err e;
  if (ks_concepts_get(&cs, &e))
    cs = NULL;
  for (int i = 0; i < n; i++) {
    const ks_concept *c = cs ? ks_concept_find(cs, ids[i]) : NULL;
    if (c)
      concept_line(&b, c, backend);
    else
      ks_buf_printf(&b, "- %s\n", ids[i]);
  }
  if (!n)
    ks_buf_puts(&b, "(none named by this step)\n");
  return b.data;
}

char *ks_llm_target_text(const ks_llm_target_in *in) {
  const ks_llm_backend *be = in->be;
  ks_buf b;
  ks_buf_init(&b);
  if (!strcmp(be->name, "c")) {
    /* the C text the C searches were tuned with, unchanged */
    char *c = ks_llm_spec_text("c", in->roof, in->spec);
    ks_buf_puts(&b, c);
    free(c);
  } else {
    ks_buf_printf(&b, "backend: %s\nbuild and timing: %s\n", be->name,
                  be->build);
    ks_buf_printf(&b, "candidate file: %s\n", be->format);
    const ks_spec_target *st = NULL;
    ks_err e;
    if (ks_spec_target_get(be->target, &st, &e) == KS_OK) {
      ks_buf_printf(&b, "target %s (%s), from specs/targets/%s.json:\n", st->id,
                    st->name, st->id);
      json_t *facts = ks_spec_target_facts(st);
      facts_text(&b, facts, "", 0);
      json_decref(facts);
      ks_buf_puts(&b, "not available here (rejected before compiling, with "
                      "the alternative):");
      int shown = 0;
      for (int i = 0; i < st->n_rules && shown < 40; i++) {
        if (st->rules[i].pragma[0] || st->rules[i].cpu[0])
          continue;
        ks_buf_printf(&b, "%s%s", shown ? ", " : " ", st->rules[i].match);
        shown++;
      }
      ks_buf_puts(&b, shown ? "\n" : " (none)\n");
    }
    if (in->roof)
      roofline_text(&b, in->roof);
    if (in->spec)
      for (int i = 0; i < in->spec->n_constraints; i++)
        ks_buf_printf(&b, "math constraint: %s\n", in->spec->constraints[i]);
    baseline_text(&b, be, in->task);
  }
  const ks_concept_set *cs = NULL;
  ks_err e;
  if (ks_concepts_get(&cs, &e) == KS_OK) {
    bool any = false;
    for (int i = 0; i < cs->n; i++) {
      if (!in_class(&cs->c[i], in->task->klass))
        continue;
      if (!any)
        ks_buf_printf(&b,
                      "concepts of class %s in their native form on %s "
                      "(specs/concepts/):\n",
                      in->task->klass, be->name);
      any = true;
      concept_line(&b, &cs->c[i], be->name);
    }
  }
  if (in->seed) {
    ks_buf_printf(&b,
                  "a CUDA kernel seeds this search (%s): its concepts and "
                  "their form on %s:\n%s",
                  in->seed->path, be->name,
                  in->seed->notes ? in->seed->notes : "(none found)\n");
    if (in->seed->source) {
      ks_buf_puts(&b, "the seed's CUDA source (carry its ideas over, in "
                      "this backend's own form):\n");
      fenced_file(&b, "cuda", in->seed->source, SEED_MAX);
    }
  }
  return b.data;
}

/* ---------------------------------------------------------------- checks */

static int add(ks_llm_violation *v, int n, int max, int line, const char *ident,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int add(ks_llm_violation *v, int n, int max, int line, const char *ident,
               const char *fmt, ...) {
  if (n < max) {
    v[n].line = line;
    ks_strlcpy(v[n].ident, ident, sizeof v[n].ident);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v[n].suggestion, sizeof v[n].suggestion, fmt, ap);
    va_end(ap);
  }
  return n + 1;
}

/* Whether the source defines a kernel NAME: `NAME (` after __global__
 * (cuda) or __kernel/kernel (opencl) on the same declaration. */
static bool defines_kernel(const char *src, const char *name, bool cuda) {
  size_t nl = strlen(name);
  for (const char *p = strstr(src, name); p; p = strstr(p + 1, name)) {
    if ((p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
        isalnum((unsigned char)p[nl]) || p[nl] == '_')
      continue;
    const char *q = p + nl;
    while (*q == ' ' || *q == '\t' || *q == '\n')
      q++;
    if (*q != '(')
      continue;
    /* the declaration starts after the previous ; } or {, at most 511
     * bytes back (hostile text: no quadratic scan over a huge answer) */
    const char *s = p;
    while (s > src && p - s < 511 && s[-1] != ';' && s[-1] != '}' &&
           s[-1] != '{')
      s--;
    char decl[512];
    size_t len =
        (size_t)(p - s) < sizeof decl - 1 ? (size_t)(p - s) : sizeof decl - 1;
    memcpy(decl, s, len);
    decl[len] = 0;
    if (cuda ? strstr(decl, "__global__") != NULL
             : (strstr(decl, "__kernel") || strstr(decl, "kernel ")))
      return true;
  }
  return false;
}

/* The launch sizes on every workload of class dc: `unit` ("block" on
 * cuda, "threadgroup" on mlx; NULL: no size limit, opencl) of at most 1024
 * threads. An expression that does not evaluate is a violation when
 * errors_count, else left to the backend (mlx: ksmlx.py reads Python). */
static int check_sizes(const ks_task *task, const ks_candidate *cand,
                       const ks_launch_plan *plan, ks_device_class dc,
                       const char *unit, bool errors_count, ks_llm_violation *v,
                       int n, int max) {
  ks_param_value names[2 * KS_MAX_PARAMS];
  int nn = ks_launch_names(cand, names, 2 * KS_MAX_PARAMS);
  ks_err e;
  for (int wi = 0; wi < task->n_workloads; wi++) {
    const ks_workload *w = &task->workloads[wi];
    if (!ks_workload_applies(w, dc))
      continue;
    ks_launch_geom g[KS_LAUNCH_MAX];
    double sb;
    if (ks_launch_eval(plan, task, w, names, nn, g, &sb, &e))
      return errors_count ? add(v, n, max, 0, "(header)", "%.100s", e.msg) : n;
    for (int k = 0; unit && k < plan->n; k++) {
      size_t threads = g[k].local[0] * g[k].local[1] * g[k].local[2];
      if (threads > 1024) {
        char wl[128];
        ks_workload_format(task, w, wl, sizeof wl);
        return add(v, n, max, plan->k[k].line, "(header)",
                   "%s of %zu threads for %.60s; at most 1024", unit, threads,
                   wl);
      }
    }
  }
  return n;
}

/* cuda: the `tensormap` lines as the build will check them, on every GPU
 * workload (backend/cuda/tensormap.h), so a bad one costs no nvcc. */
static int check_tensormaps(const ks_task *task, const ks_candidate *cand,
                            ks_llm_violation *v, int n, int max) {
  ks_tmap_set maps;
  ks_err e;
  if (ks_tmap_parse(cand->source, cand->path, task, &maps, &e))
    return add(v, n, max, 0, "(header)", "%.300s", e.msg);
  ks_param_value names[2 * KS_MAX_PARAMS];
  int nn = ks_launch_names(cand, names, 2 * KS_MAX_PARAMS);
  for (int wi = 0; wi < task->n_workloads; wi++) {
    ks_tmap_geom g[KS_TMAP_MAX];
    if (ks_workload_applies(&task->workloads[wi], KS_DEV_GPU) &&
        ks_tmap_eval(&maps, task, &task->workloads[wi], names, nn, g, &e)) {
      n = add(v, n, max, 0, "(header)", "%.300s", e.msg);
      break;
    }
  }
  ks_tmap_free(&maps);
  return n;
}

static int check_launch(const ks_llm_backend *be, const ks_task *task,
                        const ks_candidate *cand, ks_llm_violation *v, int n,
                        int max) {
  bool grid = be->launch == KS_LLM_LAUNCH_GRID;
  ks_launch_plan plan;
  ks_err e;
  if (ks_launch_parse(cand->source, cand->path, cand->entry, &plan, &e))
    return add(v, n, max, 0, "(header)", "%.100s", e.msg);
  if (ks_launch_check_style(&plan, grid, cand->path, &e)) {
    ks_launch_free(&plan);
    return add(v, n, max, 0, "(header)", "%.100s", e.msg);
  }
  for (int k = 0; k < plan.n; k++)
    if (!defines_kernel(cand->source, plan.k[k].kernel, grid))
      n = add(v, n, max, plan.k[k].line, "(header)",
              "launches %.40s, which the file does not define as %s",
              plan.k[k].kernel, grid ? "extern \"C\" __global__" : "__kernel");
  if (grid && !strstr(cand->source, "extern \"C\""))
    n = add(v, n, max, 0, "(header)",
            "kernels must be extern \"C\" (ksearch finds them by name)");
  ks_device_class dc =
      grid ? KS_DEV_GPU : ks_backend_device_class(ks_backend_get(be->name));
  n = check_sizes(task, cand, &plan, dc, grid ? "block" : NULL, true, v, n,
                  max);
  ks_launch_free(&plan);
  return grid ? check_tensormaps(task, cand, v, n, max) : n;
}

/* An MLX kernel body's form, before MLX sees it: one launch line with grid=
 * and threadgroup=, a `// ksearch: body` line, and no signature of its own
 * below it (MLX writes that), and a threadgroup of at most 1024 threads
 * on every GPU workload (check_mlx_geometry). */
/* The MLX launch line's sizes per GPU workload, as the executor will take
 * them: grid= counts threads and threadgroup= the threads of a block, which
 * is what global= and local= mean to the launch grammar (opencl/launch.h),
 * whose expressions are the same as mlx/ksmlx.py's (+ - * / % and min max
 * cdiv ceil floor sqrt log2). Only a verdict is a violation: a line this
 * reader cannot evaluate (Python's //, say) is left to the executor. */
static int check_mlx_geometry(const ks_task *task, ks_candidate *cand,
                              const char *line, ks_llm_violation *v, int n,
                              int max) {
  char grid[256], tg[256];
  const char *g = strstr(line, " grid=("), *t = strstr(line, " threadgroup=(");
  if (!g || !t || sscanf(g, " grid=(%255[^)])", grid) != 1 ||
      sscanf(t, " threadgroup=(%255[^)])", tg) != 1)
    return n;
  char src[700];
  snprintf(src, sizeof src, "// ksearch: launch global=(%s) local=(%s)\n", grid,
           tg);
  ks_launch_plan plan;
  ks_err e;
  if (ks_launch_parse(src, cand->path, cand->entry, &plan, &e))
    return n;
  ks_candidate_fill_defaults(cand);
  plan.k[0].line = 0; /* the line was rewritten: no line number of the answer */
  n = check_sizes(task, cand, &plan, KS_DEV_GPU, "threadgroup", false, v, n,
                  max);
  ks_launch_free(&plan);
  return n;
}

static int check_mlx_form(const ks_task *task, ks_candidate *cand,
                          const char *src, ks_llm_violation *v, int n,
                          int max) {
  const char *launch = strstr(src, "// ksearch: launch ");
  if (!launch)
    return add(v, n, max, 0, "(header)",
               "no launch line: write // ksearch: launch grid=(THREADS) "
               "threadgroup=(TG)");
  const char *eol = strchr(launch, '\n');
  size_t len = eol ? (size_t)(eol - launch) : strlen(launch);
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), launch);
  if (!strstr(line, " grid=(") || !strstr(line, " threadgroup=("))
    n = add(v, n, max, 0, "(header)",
            "the launch line needs grid=(...) and threadgroup=(...) (grid "
            "in threads)");
  if (strstr(line, " block=(") || strstr(line, " local=("))
    n = add(v, n, max, 0, "(header)",
            "block=/local= are other backends' words: MLX takes "
            "threadgroup=(...), and grid=(...) counts threads");
  const char *body = strstr(src, "// ksearch: body");
  if (!body)
    return add(v, n, max, 0, "(header)",
               "no `// ksearch: body` line: helpers go above it, the "
               "kernel's statements below it");
  if (strstr(body, "__global__"))
    n = add(v, n, max, 0, "__global__",
            "below `// ksearch: body` come only the body's statements: MLX "
            "writes the __global__ signature itself");
  return n ? n : check_mlx_geometry(task, cand, line, v, n, max);
}

int ks_llm_check_answer(const ks_llm_backend *be, const ks_task *task,
                        const char *src, const char *path, ks_candidate *cand,
                        ks_llm_violation *v, int max) {
  int n = 0;
  ks_err e;
  /* the target's primitive rules first: they say most about the code */
  const ks_spec_target *st = NULL;
  if (ks_spec_target_get(be->target, &st, &e) == KS_OK) {
    ks_spec_violation sv[16];
    int nv = 0;
    if (ks_spec_validate(be->target, src, sv, 16, &nv, &e))
      return add(v, 0, max, 0, "(source)", "%.120s", e.msg);
    for (int i = 0; i < nv; i++) {
      if (i < 16 && n < max) {
        v[n].line = sv[i].line;
        ks_strlcpy(v[n].ident, sv[i].ident, sizeof v[n].ident);
        ks_strlcpy(v[n].suggestion, sv[i].suggestion, sizeof v[n].suggestion);
      }
      n++;
    }
  } else {
    /* no target spec: llm/precheck.c's first version (C only) */
    ks_llm_precheck(be->name, src, v, max, &n, &e);
  }
  if (n)
    return n;
  if (ks_candidate_parse(src, path, task->name, cand, &e))
    return add(v, 0, max, 0, "(header)", "%.120s", e.msg);
  if (strcmp(cand->backend, be->name)) {
    n = add(v, 0, max, 1, "(header)",
            "backend=%s, but this search runs on %s: write // ksearch: "
            "backend=%s",
            cand->backend, be->name, be->name);
  } else if (be->launch == KS_LLM_LAUNCH_MLX) {
    n = check_mlx_form(task, cand, src, v, 0, max);
  } else if (be->launch != KS_LLM_LAUNCH_NONE) {
    ks_candidate_fill_defaults(cand);
    n = check_launch(be, task, cand, v, 0, max);
  }
  if (n)
    ks_candidate_free(cand);
  return n;
}
