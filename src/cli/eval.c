/* eval.c — `ksearch eval TASK KERNEL [--backend B] [--param K=V]... [--json]`
 *
 * Builds one candidate, checks it against the reference on every workload
 * and several seeds, times it and the reference in the same run, and prints
 * a table (or, with --json, exactly one JSON object on stdout). Exit codes:
 * 0 correct, 1 the candidate failed, 2 bad input, 3 environment. */
#include "eval/eval.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char k_usage[] =
    "usage: ksearch eval TASK KERNEL [options]\n"
    "\n"
    "TASK is a task folder, a task.json, or a built-in task name.\n"
    "KERNEL is a candidate file (see docs/DESIGN.md: Candidate file).\n"
    "\n"
    "options:\n"
    "  --backend B      backend to evaluate on (default: the candidate's, "
    "else c)\n"
    "  --device N       OpenCL device (see `ksearch roofline --backend "
    "opencl --list`)\n"
    "  --param K=V      set a parameter macro (repeatable)\n"
    "  --beside FILE    time this candidate beside every timed repetition "
    "instead of the reference and report beside_ratio (its time / this "
    "one's, same seconds)\n"
    "  --beside-param K=V  a parameter of that one (repeatable)\n"
    "  --threads N      threads for the kernel and the reference (default: "
    "all cores)\n"
    "  --seeds N        correctness seeds per workload (default 3)\n"
    "  --min-time S     time each workload for at least S seconds (default "
    "0.2)\n"
    "  --min-reps N     and at least N repetitions (default 10)\n"
    "  --workloads SPEC only these workloads: indices as `ksearch tasks` "
    "numbers them, or AXIS=V[+AXIS=V], comma-separated\n"
    "  --no-flush       do not evict caches between repetitions\n"
    "  --no-timing      correctness only\n"
    "  --no-spec-check  skip the primitive check before compiling (the "
    "sandbox still applies)\n"
    "  --timeout S      wall-clock limit of the sandboxed run (default: "
    "derived from the reference's time)\n"
    "  --json           print one JSON object on stdout\n"
    "  -q, --quiet      no progress on stderr\n";

static int parse_num(const char *opt, const char *v, double lo, double hi,
                     double *out) {
  char *end;
  double x = strtod(v, &end);
  if (!*v || *end || !(x >= lo && x <= hi)) {
    fprintf(stderr, "ksearch eval: %s %s: expected a number in [%g, %g]\n", opt,
            v, lo, hi);
    return 2;
  }
  *out = x;
  return 0;
}

static void print_table(const ks_task *task, const ks_eval_result *r) {
  /* fastest reps, as the score uses them (DESIGN.md: Score) */
  printf("%-28s %8s %12s %12s %8s %9s %9s  %s\n", "workload", "correct",
         "time (min)", "reference", "speedup", "GB/s", "roofline",
         "max rel err");
  for (int i = 0; i < r->n_workloads; i++) {
    const ks_wl_result *w = &r->wl[i];
    if (!ks_workload_applies(&task->workloads[i], r->device_class))
      continue; /* a workload of another device class */
    char wl[256];
    ks_workload_format(task, &task->workloads[i], wl, sizeof wl);
    printf("%-28s %8s %10.1fus %10.1fus %7.2fx %9.2f %8.1f%%  %.2g\n", wl,
           !w->ran      ? "-"
           : w->correct ? "yes"
                        : "NO",
           w->time_ns_min / 1e3, w->ref_time_ns_min / 1e3, w->speedup, w->gbps,
           100 * w->roofline_fraction, w->max_rel_err);
  }
  printf("status: %s   score: %.3f (geometric-mean speedup over the "
         "%s)   threads: %d   build: %s\n",
         ks_eval_status_name(r->status), r->score,
         r->baseline_score > 0 ? "device baseline" : "reference", r->threads,
         r->build_cached ? "cached" : "compiled");
  if (r->error[0])
    printf("reason: %s\n", r->error);
}

/* --param / --beside-param: NAME=VALUE each */
static ks_code set_params(ks_candidate *c, const char *const *kv, int n,
                          ks_err *err) {
  for (int i = 0; i < n; i++) {
    char name[128];
    const char *eq = strchr(kv[i], '=');
    if (!eq || eq == kv[i] || (size_t)(eq - kv[i]) >= sizeof name)
      return ks_err_set(err, KS_ERR_INPUT,
                        "eval: parameter %s: expected NAME=VALUE", kv[i]);
    memcpy(name, kv[i], (size_t)(eq - kv[i]));
    name[eq - kv[i]] = 0;
    ks_code rc = ks_candidate_set_param(c, name, eq + 1, err);
    if (rc)
      return rc;
  }
  return KS_OK;
}

int ks_cmd_eval(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, 0, 'b'},
      {"device", required_argument, 0, 'D'},
      {"param", required_argument, 0, 'p'},
      {"beside", required_argument, 0, 'B'},
      {"beside-param", required_argument, 0, 'P'},
      {"threads", required_argument, 0, 't'},
      {"seeds", required_argument, 0, 's'},
      {"min-time", required_argument, 0, 'm'},
      {"min-reps", required_argument, 0, 'r'},
      {"no-flush", no_argument, 0, 'F'},
      {"workloads", required_argument, 0, 'W'},
      {"no-timing", no_argument, 0, 'T'},
      {"no-spec-check", no_argument, 0, 'S'},
      {"timeout", required_argument, 0, 'o'},
      {"json", no_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  ks_eval_opts eo;
  ks_eval_opts_default(&eo);
  const char *backend = NULL;
  const char *params[64], *bparams[64], *beside = NULL;
  int n_params = 0, n_bparams = 0;
  bool as_json = false;
  const char *workloads = NULL;
  double v;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
    switch (c) {
    case 'b': backend = optarg; break;
    case 'D': /* read by the OpenCL backend, here and in its children */
      if (parse_num("--device", optarg, 0, 1000, &v))
        return 2;
      setenv("KSEARCH_OPENCL_DEVICE", optarg, 1);
      setenv("KSEARCH_CUDA_DEVICE", optarg, 1);
      break;
    case 'p':
      if (n_params >= 64)
        return ks_cli_fail(2, "eval: at most 64 --param options");
      params[n_params++] = optarg;
      break;
    case 'B': beside = optarg; break;
    case 'P':
      if (n_bparams >= 64)
        return ks_cli_fail(2, "eval: at most 64 --beside-param options");
      bparams[n_bparams++] = optarg;
      break;
    case 't':
      if (parse_num("--threads", optarg, 1, 4096, &v))
        return 2;
      eo.threads = (int)v;
      break;
    case 's':
      if (parse_num("--seeds", optarg, 1, KS_MAX_SEEDS, &v))
        return 2;
      eo.n_seeds = (int)v;
      break;
    case 'm':
      if (parse_num("--min-time", optarg, 0, 60, &v))
        return 2;
      eo.topt.min_time_s = v;
      break;
    case 'r':
      if (parse_num("--min-reps", optarg, 1, 100000, &v))
        return 2;
      eo.topt.min_reps = (int)v;
      break;
    case 'F': eo.topt.flush = false; break;
    case 'W': workloads = optarg; break;
    case 'T': eo.timing = false; break;
    case 'S': eo.no_spec_check = true; break;
    case 'o':
      if (parse_num("--timeout", optarg, 0.1, 86400, &v))
        return 2;
      eo.timeout_s = v;
      break;
    case 'j': as_json = true; break;
    case 'q': eo.quiet = true; break;
    case 'h': fputs(k_usage, stdout); return 0;
    default: fputs(k_usage, stderr); return 2;
    }
  }
  if (argc - optind != 2) {
    fputs("ksearch eval: expected TASK and KERNEL\n", stderr);
    fputs(k_usage, stderr);
    return 2;
  }
  if (eo.quiet)
    ks_log_set_level(KS_LOG_QUIET);
  ks_err err = {0};
  ks_task *task = ks_xcalloc(1, sizeof *task);
  ks_candidate cand;
  ks_evaluator *ev = NULL;
  ks_eval_result res;
  memset(&res, 0, sizeof res);
  int rc;
  if (ks_task_load(argv[optind], task, &err) ||
      (workloads && ks_task_select_workloads(task, workloads, &err))) {
    free(task);
    return ks_cli_fail(ks_exit_code(err.code), err.msg);
  }
  if (ks_candidate_load(argv[optind + 1], task->name, &cand, &err)) {
    rc = ks_cli_fail(ks_exit_code(err.code), err.msg);
    goto out_task;
  }
  ks_candidate bcand;
  bool have_b = false;
  if (set_params(&cand, params, n_params, &err)) {
    rc = ks_cli_fail(2, err.msg);
    goto out_cand;
  }
  ks_candidate_fill_defaults(&cand);
  if (beside) {
    if (ks_candidate_load(beside, task->name, &bcand, &err)) {
      rc = ks_cli_fail(ks_exit_code(err.code), err.msg);
      goto out_cand;
    }
    have_b = true;
    if (set_params(&bcand, bparams, n_bparams, &err)) {
      rc = ks_cli_fail(2, err.msg);
      goto out_cand;
    }
    ks_candidate_fill_defaults(&bcand);
  }
  eo.backend = backend ? backend : cand.backend;
  if (ks_evaluator_new(task, &eo, &ev, &err)) {
    rc = ks_cli_fail(ks_exit_code(err.code), err.msg);
    goto out_cand;
  }
  if (!eo.quiet)
    ks_log(KS_LOG_INFO, "evaluating %s", cand.path);
  if (have_b ? ks_evaluate_beside(ev, &cand, &bcand, &res, &err)
             : ks_evaluate(ev, &cand, &res, &err)) {
    rc = ks_cli_fail(ks_exit_code(err.code), err.msg);
    goto out_ev;
  }
  if (as_json) {
    json_t *o = ks_eval_result_to_json(task, &res);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    puts(s);
    free(s);
    json_decref(o);
  } else {
    print_table(task, &res);
    if (res.status == KS_EVAL_COMPILE_ERROR && res.build_log.data)
      fprintf(stderr, "%s", res.build_log.data);
  }
  rc = res.correct ? 0 : 1;
  ks_eval_result_free(&res);
out_ev:
  ks_evaluator_free(ev);
out_cand:
  if (have_b)
    ks_candidate_free(&bcand);
  ks_candidate_free(&cand);
out_task:
  ks_task_free(task);
  free(task);
  return rc;
}
