/* export.c — `ksearch export RUN_DIR... --to mlx --out FILE.py` (DESIGN.md:
 * Command line, export): the best kernel of each MLX run as one importable
 * Python module, a function per kernel (arrays in, arrays out, launch
 * geometry inside), for use in an MLX model. The module is written by
 * mlx/export.py, which embeds the same candidate reader (mlx/ksmlx.py) the
 * MLX executor measured the kernels with. */
#include "cli/cli.h"
#include "util/util.h"

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char k_usage[] =
    "usage: ksearch export RUN_DIR... --to mlx --out FILE.py [-q]\n"
    "\n"
    "Writes the best kernel of each run (runs of --backend mlx, one per task)\n"
    "as one Python module: `import kernels; y = kernels.rmsnorm(x, w)`.\n"
    "\n"
    "options:\n"
    "  --to mlx     the only target so far\n"
    "  --out FILE   the module to write\n"
    "  -q, --quiet  print nothing (else the path written)\n";

#define MAX_RUNS 16

/* The task.json and best kernel of one run; exit code on failure. */
static int run_files(const char *dir, char *task_json, char *kernel,
                     ks_err *err) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%.4000s/summary.json", dir);
  json_error_t je;
  json_t *s = json_load_file(path, 0, &je);
  if (!s) {
    ks_err_set(err, KS_ERR_INPUT,
               "%s: cannot read (%s); give the folder of a finished `ksearch "
               "run`",
               path, je.text);
    return 2;
  }
  const char *backend = json_string_value(json_object_get(s, "backend"));
  const char *task = json_string_value(json_object_get(s, "task"));
  json_t *best = json_object_get(s, "best");
  const char *file = json_string_value(json_object_get(best, "file"));
  int code = 0;
  ks_task t;
  memset(&t, 0, sizeof t);
  if (!backend || strcmp(backend, "mlx")) {
    ks_err_set(err, KS_ERR_INPUT,
               "%s: backend: the run is on %s; --to mlx exports runs of "
               "--backend mlx (carry a CUDA kernel with `ksearch translate "
               "FILE.cu --to mlx` first)",
               path, backend ? backend : "(missing)");
    code = 2;
  } else if (!task || !file) {
    ks_err_set(err, KS_ERR_INPUT,
               "%s: best: no correct kernel in this run (best.file missing); "
               "nothing to export",
               path);
    code = 2;
  } else if (ks_task_load(task, &t, err) != KS_OK) {
    ks_err_prefix(err, "%s: task: ", path);
    code = 2;
  } else {
    ks_strlcpy(task_json, t.json_path, PATH_MAX);
    ks_strlcpy(kernel, file, PATH_MAX);
    if (!ks_file_exists(kernel)) {
      ks_err_set(err, KS_ERR_INPUT,
                 "%s: best.file: %s does not exist (was the run moved?)", path,
                 kernel);
      code = 2;
    }
    ks_task_free(&t);
  }
  json_decref(s);
  return code;
}

int ks_cmd_export(int argc, char **argv) {
  static const struct option opts[] = {{"to", required_argument, 0, 't'},
                                       {"out", required_argument, 0, 'o'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *to = NULL, *out = NULL;
  bool quiet = false;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "qo:t:", opts, NULL)) != -1) {
    switch (c) {
    case 't': to = optarg; break;
    case 'o': out = optarg; break;
    case 'q': quiet = true; break;
    case 'h': fputs(k_usage, stdout); return 0;
    default: fputs(k_usage, stderr); return 2;
    }
  }
  int n = argc - optind;
  if (n < 1 || n > MAX_RUNS || !to || !out) {
    fprintf(stderr,
            "ksearch export: expected 1 to %d RUN_DIRs, --to and --out\n",
            MAX_RUNS);
    fputs(k_usage, stderr);
    return 2;
  }
  if (strcmp(to, "mlx"))
    return ks_cli_fail(2, "export: --to: only mlx is an export target; use "
                          "--to mlx (the best/ file of a run is already the "
                          "kernel for its own backend)");
  static char files[2 * MAX_RUNS][PATH_MAX];
  char script[PATH_MAX];
  snprintf(script, sizeof script, "%.4000s/mlx/export.py", ks_data_dir());
  const char *py = getenv("KSEARCH_PYTHON");
  char *args[2 * MAX_RUNS + 6];
  int na = 0;
  args[na++] = (char *)(py && *py ? py : "python3");
  args[na++] = "-B";
  args[na++] = script;
  args[na++] = (char *)out;
  ks_err err = {0};
  for (int i = 0; i < n; i++) {
    int code =
        run_files(argv[optind + i], files[2 * i], files[2 * i + 1], &err);
    if (code)
      return ks_cli_fail(code, err.msg);
    args[na++] = files[2 * i];
    args[na++] = files[2 * i + 1];
  }
  args[na] = NULL;
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result pr;
  ks_code rc = ks_run_capture(args, NULL, 120, &log, &pr, &err);
  int code = 0;
  if (rc) {
    code = ks_cli_fail(3, err.msg);
  } else if (!pr.exited || pr.exit_status != 0) {
    fprintf(stderr, "ksearch: export: %s failed:\n%.*s", script,
            (int)(log.len > 4000 ? 4000 : log.len), log.data ? log.data : "");
    code = pr.exited && pr.exit_status == 2 ? 2 : 3;
  } else if (!quiet) {
    puts(out);
  }
  ks_buf_free(&log);
  return code;
}
