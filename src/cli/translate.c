/* translate.c — `ksearch translate FILE.cu --to opencl|metal|c [--json]
 * [--out FILE]` (DESIGN.md: Command line; Spec and concept catalogue).
 *
 * Reports the catalogue's concepts found in a CUDA file (with lines), the
 * target form of each and what has no direct equivalent there, and writes a
 * literal translation of the CUDA common subset (src/spec/translate.h),
 * checked by the target's validator. The code goes to --out, else stdout
 * (the report then goes to stderr); --json prints one JSON object instead.
 * Exit 0 when translated (KSEARCH-TODO marks included), 2 for bad usage or
 * input that is not CUDA, 3 when the specs folder is missing. */
#include "spec/translate.h"
#include "cli/cli.h"
#include "spec/validator.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_usage[] =
    "usage: ksearch translate FILE.cu --to opencl|metal|c|mlx [--json] "
    "[--out "
    "FILE]\n"
    "\n"
    "Finds the optimization concepts of a CUDA file (specs/concepts), says "
    "how each\nis written on the target and what has no direct equivalent "
    "there, and writes\na literal translation of the CUDA common subset "
    "(thread and block indices,\n__shared__, __syncthreads, warp shuffles, "
    "atomics, math, vector types):\n"
    "  opencl  OpenCL C with `// ksearch:` launch lines (--to "
    "opencl-pocl-cpu: PoCL)\n"
    "  metal   a Python module of mx.fast.metal_kernel bodies, header and "
    "launch\n          geometry\n"
    "  mlx     an MLX candidate (--backend mlx): the CUDA kernel as the "
    "helper of an\n          mx.fast.cuda_kernel body, launch in threads\n"
    "  c       a per-thread function and an OpenMP launcher per kernel\n"
    "What has no literal form stays in place under a `// "
    "KSEARCH-TODO(concept): ...`\nline.\n"
    "\n"
    "options:\n"
    "  --to T      opencl, metal, c or mlx, or a target id of "
    "specs/targets\n"
    "  --out FILE  write the translation there (else stdout, report on "
    "stderr)\n"
    "  --json      one JSON object on stdout: concepts, forms, gaps, TODOs, "
    "code\n";

static json_t *lines_of(const ks_cuda_report *r, const ks_concept *c,
                        json_t **evidence) {
  json_t *lines = json_array();
  *evidence = json_array();
  for (int i = 0; i < r->n_hits; i++)
    if (r->hits[i].concept == c) {
      json_array_append_new(lines, json_integer(r->hits[i].line));
      if (json_array_size(*evidence) < 8)
        json_array_append_new(*evidence, json_string(r->hits[i].evidence));
    }
  return lines;
}

/* The concept part of the report, as JSON. */
static json_t *concepts_json(const ks_cuda_report *r, const ks_spec_target *t,
                             json_t **gaps) {
  const ks_concept *cs[64];
  int n = ks_cuda_report_concepts(r, cs, 64);
  json_t *arr = json_array();
  *gaps = json_array();
  for (int i = 0; i < n; i++) {
    const ks_concept *c = cs[i];
    json_t *ev;
    json_t *lines = lines_of(r, c, &ev);
    /* an MLX candidate on Linux is CUDA: the concept keeps its CUDA form */
    const char *fb = strcmp(t->backend, "mlx") ? t->backend : "cuda";
    const json_t *form = json_object_get(json_object_get(c->json, "forms"), fb);
    const json_t *gap = ks_concept_gap(c, t->id, t->backend);
    json_t *o = json_pack(
        "{s:s,s:s,s:o,s:o,s:O,s:s?,s:O,s:O}", "id", c->id, "name", c->name,
        "lines", lines, "evidence", ev, "classes",
        json_object_get(c->json, "classes"), "cuda_form",
        json_string_value(json_object_get(
            json_object_get(json_object_get(c->json, "forms"), "cuda"),
            "form")),
        "target_form", form ? (json_t *)form : json_null(), "caveats",
        json_object_get(c->json, "caveats"));
    json_object_set(o, "no_direct_equivalent",
                    gap ? (json_t *)gap : json_null());
    if (gap)
      json_array_append_new(
          *gaps, json_pack("{s:s,s:i,s:O,s:O}", "concept", c->id, "line",
                           ks_cuda_report_line(r, c->id), "what",
                           json_object_get(gap, "what"), "alternative",
                           json_object_get(gap, "alternative")));
    json_array_append_new(arr, o);
  }
  return arr;
}

/* The translation checked by the target's validator. */
static json_t *validate(const ks_translation *tr, const char *target,
                        ks_err *err) {
  json_t *out = json_array();
  ks_spec_violation v[64];
  int n = 0;
  if (!strcmp(tr->backend, "metal")) {
    size_t i;
    json_t *k;
    json_array_foreach(tr->kernels, i, k) {
      /* header and body together, as MLX compiles them */
      ks_buf b;
      ks_buf_init(&b);
      ks_buf_printf(&b, "%s\n%s\n",
                    json_string_value(json_object_get(k, "header")),
                    json_string_value(json_object_get(k, "source")));
      if (ks_spec_validate(target, b.data, v, 64, &n, err) == KS_OK)
        for (int j = 0; j < n; j++)
          json_array_append_new(
              out, json_pack("{s:s,s:i,s:s,s:s}", "kernel",
                             json_string_value(json_object_get(k, "name")),
                             "line", v[j].line, "ident", v[j].ident,
                             "suggestion", v[j].suggestion));
      ks_buf_free(&b);
    }
    return out;
  }
  if (ks_spec_validate(target, tr->code.data, v, 64, &n, err) == KS_OK)
    for (int j = 0; j < n; j++)
      json_array_append_new(out, json_pack("{s:i,s:s,s:s}", "line", v[j].line,
                                           "ident", v[j].ident, "suggestion",
                                           v[j].suggestion));
  return out;
}

static void print_report(FILE *f, const char *path, const ks_spec_target *t,
                         const json_t *concepts, const json_t *gaps,
                         const ks_translation *tr, const json_t *violations,
                         const char *out_path) {
  fprintf(f, "ksearch translate: %s -> %s (%s)\n", path, t->backend, t->id);
  size_t i;
  json_t *v;
  fprintf(f, "kernels:");
  json_array_foreach(tr->kernels, i, v)
      fprintf(f, "%s %s (line %lld)", i ? "," : "",
              json_string_value(json_object_get(v, "name")),
              (long long)json_integer_value(json_object_get(v, "line")));
  fprintf(f, "\n\nconcepts found (%zu):\n", json_array_size(concepts));
  json_array_foreach(concepts, i, v) {
    const json_t *lines = json_object_get(v, "lines");
    fprintf(f, "  %-26s line", json_string_value(json_object_get(v, "id")));
    fprintf(f, "%s", json_array_size(lines) > 1 ? "s " : " ");
    size_t k;
    json_t *l;
    json_array_foreach(lines, k, l) {
      if (k == 6) {
        fprintf(f, " (+%zu more)", json_array_size(lines) - 6);
        break;
      }
      fprintf(f, "%s%lld", k ? ", " : "", (long long)json_integer_value(l));
    }
    const char *form = json_string_value(
        json_object_get(json_object_get(v, "target_form"), "form"));
    fprintf(f, "\n      %s: %s\n", t->backend, form ? form : "(none)");
  }
  if (json_array_size(gaps)) {
    fprintf(f, "\nno direct equivalent on %s:\n", t->id);
    json_array_foreach(gaps, i, v)
        fprintf(f, "  %s (line %lld): %s\n      instead: %s\n",
                json_string_value(json_object_get(v, "concept")),
                (long long)json_integer_value(json_object_get(v, "line")),
                json_string_value(json_object_get(v, "what")),
                json_string_value(json_object_get(v, "alternative")));
  }
  fprintf(f, "\nliteral translation: %s, %d KSEARCH-TODO mark%s\n",
          out_path ? out_path : "stdout", tr->n_todos,
          tr->n_todos == 1 ? "" : "s");
  json_array_foreach(tr->todos, i, v)
      fprintf(f, "  line %lld, %s: %s\n",
              (long long)json_integer_value(json_object_get(v, "line")),
              json_string_value(json_object_get(v, "concept")),
              json_string_value(json_object_get(v, "message")));
  if (json_array_size(violations)) {
    fprintf(f, "validator (%s): %zu primitive%s the target lacks:\n", t->id,
            json_array_size(violations),
            json_array_size(violations) == 1 ? "" : "s");
    json_array_foreach(violations, i, v)
        fprintf(f, "  line %lld: %s -> %s\n",
                (long long)json_integer_value(json_object_get(v, "line")),
                json_string_value(json_object_get(v, "ident")),
                json_string_value(json_object_get(v, "suggestion")));
  } else {
    fprintf(f, "validator (%s): clean\n", t->id);
  }
}

int ks_cmd_translate(int argc, char **argv) {
  static const struct option opts[] = {{"to", required_argument, 0, 't'},
                                       {"out", required_argument, 0, 'o'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *to = NULL, *out_path = NULL;
  bool as_json = false;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 't': to = optarg; break;
    case 'o': out_path = optarg; break;
    case 'j': as_json = true; break;
    case 'h': fputs(k_usage, stdout); return 0;
    default: fputs(k_usage, stderr); return 2;
    }
  }
  if (argc - optind != 1 || !to) {
    fprintf(stderr, "ksearch translate: %s\n%s",
            argc - optind != 1 ? "expected one FILE.cu" : "--to is required",
            k_usage);
    return 2;
  }
  const char *path = argv[optind];
  ks_err err = {0};
  const ks_spec_target *t;
  /* --to mlx: an MLX candidate (a cuda_kernel body, what MLX on Linux
   * runs); the Metal module stays --to metal */
  if (!strcmp(to, "mlx"))
    to = "mlx-cuda-sm90";
  if (ks_spec_target_get(to, &t, &err))
    return ks_cli_fail(ks_exit_code(err.code), err.msg);
  if (strcmp(t->backend, "opencl") && strcmp(t->backend, "metal") &&
      strcmp(t->backend, "c") && strcmp(t->backend, "mlx")) {
    fprintf(stderr,
            "ksearch translate: --to %s: translation goes to opencl, metal, "
            "c or mlx (%s is the %s backend)\n",
            to, t->id, t->backend);
    return 2;
  }
  const ks_concept_set *cs;
  if (ks_concepts_get(&cs, &err))
    return ks_cli_fail(ks_exit_code(err.code), err.msg);
  char *src = NULL;
  size_t len = 0;
  if (ks_read_file(path, &src, &len, &err)) {
    fprintf(stderr, "ksearch translate: %s: cannot read it (%s)\n", path,
            err.msg);
    return 2;
  }
  ks_cu_model m;
  if (ks_cu_parse(src, len, path, &m, &err)) {
    free(src);
    return ks_cli_fail(2, err.msg);
  }
  ks_cuda_report rep;
  ks_translation tr;
  memset(&tr, 0, sizeof tr);
  ks_code rc = ks_cuda_analyze_model(&m, cs, &rep, &err);
  if (!rc)
    rc = ks_translate(&m, t->id, &tr, &err);
  if (rc) {
    ks_cu_model_free(&m);
    free(src);
    ks_translation_free(&tr);
    return ks_cli_fail(ks_exit_code(rc), err.msg);
  }
  json_t *gaps;
  json_t *concepts = concepts_json(&rep, t, &gaps);
  json_t *violations = validate(&tr, t->id, &err);
  int exit_code = 0;
  if (out_path &&
      ks_write_file_atomic(out_path, tr.code.data, tr.code.len, &err)) {
    fprintf(stderr, "ksearch translate: --out %s: %s\n", out_path, err.msg);
    exit_code = 2;
  }
  if (!exit_code && as_json) {
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:O}", "file", path, "target",
                  t->id, "backend", t->backend, "kernels", tr.kernels,
                  "concepts", concepts, "no_direct_equivalent", gaps, "todos",
                  tr.todos, "validation", violations);
    if (out_path)
      json_object_set_new(o, "out", json_string(out_path));
    else
      json_object_set_new(o, "code", json_string(tr.code.data));
    char *s = json_dumps(o, JSON_INDENT(2));
    puts(s);
    free(s);
    json_decref(o);
  } else if (!exit_code) {
    if (!out_path)
      fputs(tr.code.data, stdout);
    print_report(out_path ? stdout : stderr, path, t, concepts, gaps, &tr,
                 violations, out_path);
  }
  json_decref(concepts);
  json_decref(gaps);
  json_decref(violations);
  ks_translation_free(&tr);
  ks_cuda_report_free(&rep);
  ks_cu_model_free(&m);
  free(src);
  return exit_code;
}
