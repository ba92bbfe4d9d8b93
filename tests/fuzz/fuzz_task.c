/* fuzz_task.c — task.json parsing and validation (src/task/task.c): every
 * input is refused with a message or gives a task whose signature, shim,
 * cost model and workload names can be produced. The reference file exists
 * in a private folder, so the checks after it are reached too. */
#include "fuzz.h"
#include "task/signature.h"

#include <stdio.h>

static char g_json[512];
static char g_dir[64];

static void cleanup(void) { ks_rm_rf(g_dir); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  char dir[] = "/tmp/ks_fuzz_task_XXXXXX";
  if (!mkdtemp(dir))
    abort();
  ks_strlcpy(g_dir, dir, sizeof g_dir);
  atexit(cleanup);
  char ref[600];
  snprintf(ref, sizeof ref, "%s/reference.c", dir);
  FILE *f = fopen(ref, "w");
  if (!f)
    abort();
  fputs("void t(void) {}\n", f);
  fclose(f);
  snprintf(g_json, sizeof g_json, "%s/task.json", dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = ks_fuzz_text(data, size);
  ks_task t;
  ks_err err = {0};
  if (ks_task_load_json(text, g_json, &t, &err) == KS_OK) {
    ks_buf b;
    ks_buf_init(&b);
    ks_signature_c(&t, t.name, &b);
    ks_shim_c(&t, t.name, &b);
    ks_buf_free(&b);
    for (int w = 0; w < t.n_workloads; w++) {
      char axes[256];
      ks_workload_format(&t, &t.workloads[w], axes, sizeof axes);
      (void)ks_task_cost_bytes(&t, &t.workloads[w]);
      (void)ks_task_cost_flops(&t, &t.workloads[w]);
      for (int i = 0; i < t.n_inputs; i++)
        (void)ks_tensor_numel(&t, &t.inputs[i], &t.workloads[w]);
    }
    for (int d = 0; d < KS_DTYPE_COUNT; d++)
      (void)ks_task_tolerance(&t, (ks_dtype)d);
    ks_task_free(&t);
  }
  free(text);
  return 0;
}
