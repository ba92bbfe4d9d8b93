/* fuzz_candidate.c — candidate header lines (src/eval/candidate.c) and the
 * OpenCL launch lines (src/backend/opencl/launch.c): `// ksearch:` keys,
 * param declarations, launch geometry. A parsed candidate's parameters are
 * set back through ks_candidate_set_param (the --param path): every value
 * the header accepted must pass the same rule there. A parsed launch plan
 * is evaluated on a fixed task's workloads (one element, an odd size, a
 * GPU-sized one) with the names the executors bind (parameters, then the
 * source's #defines), in both backends' styles: launch geometry is
 * candidate-controlled arithmetic (when=, pdl=, scratch=, smem=). */
#include "backend/opencl/launch.h"
#include "eval/candidate.h"
#include "fuzz.h"

#include <stdio.h>

static ks_task g_task;
static char g_dir[64];

static void cleanup(void) {
  ks_task_free(&g_task);
  ks_rm_rf(g_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  char dir[] = "/tmp/ks_fuzz_candidate_XXXXXX";
  if (!mkdtemp(dir))
    abort();
  ks_strlcpy(g_dir, dir, sizeof g_dir);
  char ref[600], json[600];
  snprintf(ref, sizeof ref, "%s/reference.c", dir);
  snprintf(json, sizeof json, "%s/task.json", dir);
  FILE *f = fopen(ref, "w");
  if (!f)
    abort();
  fputs("void t(void) {}\n", f);
  fclose(f);
  static const char task[] =
      "{\"name\": \"t\", \"class\": \"row_reduction\", \"axes\": {\"rows\": "
      "{\"type\": \"var\"}, "
      "\"cols\": {\"type\": \"var\"}}, \"inputs\": {\"x\": {\"shape\": "
      "[\"rows\", \"cols\"], \"dtype\": \"float32\"}}, \"outputs\": {\"y\": "
      "{\"shape\": [\"rows\", \"cols\"], \"dtype\": \"float32\"}}, "
      "\"reference\": \"reference.c\", \"workloads\": [{\"rows\": 1, "
      "\"cols\": 1}, {\"rows\": 333, \"cols\": 1001}, {\"rows\": 8192, "
      "\"cols\": 8192, \"device\": \"gpu\"}]}";
  ks_err err = {0};
  if (ks_task_load_json(task, json, &g_task, &err) !=
      KS_OK) { /* the fixed task is valid: a failure here is a bug of this file
                */
    fprintf(stderr, "fuzz_candidate: fixed task: %s\n", err.msg);
    abort();
  }
  atexit(cleanup);
  return 0;
}

/* Every workload's geometry of plan p, as the executors evaluate it. */
static void eval_plan(const ks_launch_plan *p, const ks_candidate *c) {
  ks_param_value names[2 * KS_MAX_PARAMS];
  int nn = ks_launch_names(c, names, 2 * KS_MAX_PARAMS);
  ks_err err = {0};
  (void)ks_launch_check_style(p, true, "fuzz.cu", &err);
  (void)ks_launch_check_style(p, false, "fuzz.cl", &err);
  for (int w = 0; w < g_task.n_workloads; w++) {
    ks_launch_geom g[KS_LAUNCH_MAX];
    double scratch = -1;
    if (ks_launch_eval(p, &g_task, &g_task.workloads[w], names, nn, g, &scratch,
                       &err) != KS_OK)
      continue;
    if (!(scratch >= 0))
      abort(); /* an accepted plan has a scratch size, 0 when none */
    for (int i = 0; i < p->n; i++)
      for (int d = 0; d < g[i].dims; d++)
        if (g[i].global[d] == 0 || g[i].local[d] == 0 ||
            g[i].global[d] % g[i].local[d])
          abort(); /* accepted sizes are positive, global a multiple */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = ks_fuzz_text(data, size);
  ks_candidate c;
  ks_err err = {0};
  if (ks_candidate_parse(src, "fuzz.c", "dflt", &c, &err) == KS_OK) {
    for (int i = 0; i < c.n_decls; i++)
      for (int v = 0; v < c.decls[i].n_values; v++)
        if (ks_candidate_set_param(&c, c.decls[i].name, c.decls[i].values[v],
                                   &err) != KS_OK)
          abort(); /* one rule for header and --param values */
    ks_candidate_fill_defaults(&c);
    free(ks_candidate_params_json(&c));
    (void)ks_candidate_hash(&c);
    ks_launch_plan p;
    if (ks_launch_parse(src, "fuzz.c", c.entry, &p, &err) == KS_OK) {
      eval_plan(&p, &c);
      ks_launch_free(&p);
    }
    ks_candidate_free(&c);
  }
  free(src);
  return 0;
}
