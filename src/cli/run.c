/* run.c — `ksearch run TASK ...` (the search) and `ksearch show RUN_DIR`
 * (the tree, the best plan, the top candidates; `--json`: the report's
 * facts, DESIGN.md: Report). */
#include "cli/cli.h"
#include "dist/broker.h"
#include "report/report.h"
#include "search/planner.h"
#include "search/search.h"
#include "search/world_model.h"
#include "store/store.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char k_usage[] =
    "usage: ksearch run TASK [options]\n"
    "       ksearch run --resume RUN_DIR [options]\n"
    "\n"
    "Searches for a faster kernel for TASK (folder, task.json or built-in "
    "name)\nover the task's templates, guided by a world model.\n"
    "\n"
    "options:\n"
    "  --backend B       backend (default c)\n"
    "  --device N        OpenCL device (see `ksearch roofline --backend "
    "opencl --list`)\n"
    "  --budget N        evaluations in all, earlier sessions of the run "
    "included (default 30); settling a near tie (the two timed beside each "
    "other both ways) costs 2, at most a fifth of N goes to that\n"
    "  --time T          stop after T seconds (default: no limit)\n"
    "  --workloads SPEC  only these workloads: indices as `ksearch tasks` "
    "numbers them, or AXIS=V[+AXIS=V], comma-separated\n"
    "  --stagnation N    stop after N evaluations without a new best "
    "(default 25)\n"
    "  --finalists N     at the end, re-time the N leading candidates, "
    "each beside the best, until the leader is told apart (default 8 when "
    "--budget >= 10, else 0)\n"
    "  --rounds N        rounds of that tournament, at most (default 6)\n"
    "  --tie-rounds N    then up to N more rounds while the leader is "
    "neither told apart nor known to be within 2% of the fastest (default "
    "10; 0: none)\n"
    "  --planner P       builtin (default), random (the baseline) or llm\n"
    "  --seed S          seed of selection ties and parameter draws "
    "(default 1)\n"
    "  --attempts N      implementation attempts per plan (default 3)\n"
    "  --out DIR         run folder (default runs/TASK-TIMESTAMP)\n"
    "  --resume DIR      continue a run after Ctrl-C or a crash\n"
    "  --threads N       threads for kernels (default all cores)\n"
    "  --min-time S      timing per workload (default 0.05 s)\n"
    "  --seeds N         correctness seeds per workload (default 3)\n"
    "  --seed-cuda FILE  raise the plans that use the concepts of a CUDA "
    "kernel\n                    (what `ksearch translate` finds in it; with "
    "--planner llm also\n                    its concepts' form here and "
    "its source, in the prompts)\n"
    "  --seed-from DIR   the same with the best kernel of a finished CUDA "
    "run\n"
    "  --report          rewrite RUN_DIR/report.html after every evaluation\n"
    "  --broker URL      evaluate on workers (`ksearch worker`) through "
    "Redis:\n"
    "                    redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]\n"
    "  --parallel N      with --broker: jobs in flight at once, from "
    "distinct plans\n                    (default 1)\n"
    "  --target T        with --broker: the workers' target (hash or "
    "identity) when\n                    several are live\n"
    "  --max-tries N     with --broker: deliveries of a job whose workers "
    "die before\n                    it is recorded as crash (default 3)\n"
    "  --json            print summary.json on stdout\n"
    "  -q, --quiet       no progress on stderr\n"
    "\n"
    "with --planner llm (any OpenAI-compatible endpoint; API key from "
    "KSEARCH_API_KEY\nor OPENAI_API_KEY):\n"
    "  --llm-base-url URL      endpoint before /chat/completions, e.g. "
    "https://api.openai.com/v1\n"
    "                          (or KSEARCH_LLM_BASE_URL)\n"
    "  --llm-model M           planner model (or KSEARCH_LLM_MODEL)\n"
    "  --llm-coder-model M     a second model that only writes code "
    "(default: --llm-model)\n"
    "  --llm-temperature T     sampling temperature 0..2 (default: the "
    "server's)\n"
    "  --llm-max-tokens N      max tokens per answer (default: the "
    "server's)\n"
    "  --llm-reasoning-effort E  passed through as reasoning_effort "
    "(low, medium, high)\n"
    "  --llm-timeout S         seconds per request (default 300)\n"
    "  --llm-max-inflight N    requests in flight at once (default 1)\n"
    "  --llm-token-budget N    stop the run cleanly after N tokens (default: "
    "none)\n"
    "  --llm-cache DIR         answer identical requests from DIR (offline "
    "replay)\n"
    "  --llm-cache-match M     exact (default): only an equal request is "
    "answered\n"
    "                          from DIR; order: a request no recorded one "
    "equals takes\n"
    "                          the next unused recorded answer of its prompt "
    "kind (a\n"
    "                          recording replayed on another machine, whose "
    "prompts\n"
    "                          quote that machine's measurements)\n"
    "  --llm-stream            stream answers (server-sent events)\n"
    "  --llm-retries N         retries on 429, 5xx and timeouts (default "
    "4)\n";

static bool num(const char *v, double lo, double hi, double *out) {
  char *end;
  double x = strtod(v, &end);
  if (!*v || *end || !(x >= lo && x <= hi))
    return false;
  *out = x;
  return true;
}

/* "ksearch run ARGS..." for the report, each argument shell-quoted when it
 * holds anything but plain characters; cut at n - 1 bytes. */
/* --seed-from RUN_DIR: the best kernel of a finished CUDA run (its
 * summary.json names it), so a CUDA search seeds one on another backend. */
static ks_code seed_from_run(const char *dir, char *path, size_t n,
                             ks_err *err) {
  char sp[PATH_MAX];
  snprintf(sp, sizeof sp, "%.4000s/summary.json", dir);
  json_error_t je;
  json_t *j = ks_file_exists(sp) ? json_load_file(sp, 0, &je) : NULL;
  if (!j)
    return ks_err_set(err, KS_ERR_INPUT,
                      "--seed-from %s: no readable summary.json there (a "
                      "run folder of a finished `ksearch run`); give "
                      "--seed-cuda FILE.cu instead",
                      dir);
  const char *be = json_string_value(json_object_get(j, "backend"));
  const char *file =
      json_string_value(json_object_get(json_object_get(j, "best"), "file"));
  ks_code rc = KS_OK;
  if (!be || strcmp(be, "cuda"))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "--seed-from %s: summary.json: backend: the run was on "
                    "%s, not cuda; seed from a CUDA run or give --seed-cuda "
                    "FILE.cu",
                    dir, be ? be : "(none)");
  else if (!file || !ks_file_exists(file))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "--seed-from %s: summary.json: best: the run found no "
                    "correct kernel (or best/ is gone); give --seed-cuda "
                    "FILE.cu",
                    dir);
  else
    snprintf(path, n, "%s", file);
  json_decref(j);
  return rc;
}

static void command_line(int argc, char **argv, char *out, size_t n) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_puts(&b, "ksearch");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool plain = *a != 0;
    for (const char *p = a; *p; p++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789-_./=:,+@%",
                  *p))
        plain = false;
    ks_buf_puts(&b, " ");
    if (plain) {
      ks_buf_puts(&b, a);
      continue;
    }
    ks_buf_puts(&b, "'");
    for (const char *p = a; *p; p++)
      if (*p == '\'')
        ks_buf_puts(&b, "'\\''");
      else
        ks_buf_append(&b, p, 1);
    ks_buf_puts(&b, "'");
  }
  ks_strlcpy(out, b.data, n);
  ks_buf_free(&b);
}

int ks_cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, 0, 'b'},
      {"budget", required_argument, 0, 'n'},
      {"time", required_argument, 0, 't'},
      {"stagnation", required_argument, 0, 'g'},
      {"planner", required_argument, 0, 'p'},
      {"seed", required_argument, 0, 's'},
      {"attempts", required_argument, 0, 'a'},
      {"out", required_argument, 0, 'o'},
      {"resume", required_argument, 0, 'r'},
      {"threads", required_argument, 0, 'T'},
      {"min-time", required_argument, 0, 'm'},
      {"json", no_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {"llm-base-url", required_argument, 0, 1000},
      {"llm-model", required_argument, 0, 1001},
      {"llm-coder-model", required_argument, 0, 1002},
      {"llm-temperature", required_argument, 0, 1003},
      {"llm-max-tokens", required_argument, 0, 1004},
      {"llm-reasoning-effort", required_argument, 0, 1005},
      {"llm-timeout", required_argument, 0, 1006},
      {"llm-max-inflight", required_argument, 0, 1007},
      {"llm-token-budget", required_argument, 0, 1008},
      {"llm-cache", required_argument, 0, 1009},
      {"llm-stream", no_argument, 0, 1010},
      {"llm-retries", required_argument, 0, 1011},
      {"llm-cache-match", required_argument, 0, 1012},
      {"seed-cuda", required_argument, 0, 1100},
      {"seed-from", required_argument, 0, 1101},
      {"device", required_argument, 0, 1200},
      {"report", no_argument, 0, 1300},
      {"finalists", required_argument, 0, 1400},
      {"workloads", required_argument, 0, 1402},
      {"rounds", required_argument, 0, 1401},
      {"tie-rounds", required_argument, 0, 1403},
      {"broker", required_argument, 0, 1500},
      {"parallel", required_argument, 0, 1501},
      {"target", required_argument, 0, 1502},
      {"max-tries", required_argument, 0, 1503},
      {"seeds", required_argument, 0, 1201},
      {0, 0, 0, 0}};
  ks_search_opts so;
  ks_search_opts_default(&so);
  bool as_json = false;
  double v;
  /* --llm-* flags become the LLM planner's options (llm/llm.h) */
  json_t *llm = json_object();
  const char *llm_flag = NULL, *dist_flag = NULL;
  /* before getopt, which permutes argv */
  char cmdline[8192];
  command_line(argc, argv, cmdline, sizeof cmdline);
  so.command_line = cmdline;
  optind = 1;
  int c;
#define NUM(lo, hi, what)                                                      \
  if (!num(optarg, lo, hi, &v)) {                                              \
    fprintf(stderr, "ksearch run: %s %s: expected a number in [%g, %g]\n",     \
            what, optarg, (double)(lo), (double)(hi));                         \
    json_decref(llm);                                                          \
    return 2;                                                                  \
  }
#define LLM_STR(key)                                                           \
  llm_flag = opts[idx].name;                                                   \
  json_object_set_new(llm, key, json_string(optarg));                          \
  break;
#define LLM_NUM(key, lo, hi)                                                   \
  llm_flag = opts[idx].name;                                                   \
  if (!num(optarg, lo, hi, &v)) {                                              \
    fprintf(stderr, "ksearch run: --%s %s: expected a number in [%g, %g]\n",   \
            llm_flag, optarg, (double)(lo), (double)(hi));                     \
    json_decref(llm);                                                          \
    return 2;                                                                  \
  }                                                                            \
  json_object_set_new(llm, key, json_real(v));                                 \
  break;
  int idx = 0;
  while ((c = getopt_long(argc, argv, "q", opts, &idx)) != -1) {
    switch (c) {
    case 'b': so.backend = optarg; break;
    case 1200: /* read by the OpenCL backend, here and in its children */
      NUM(0, 1000, "--device");
      setenv("KSEARCH_OPENCL_DEVICE", optarg, 1);
      setenv("KSEARCH_CUDA_DEVICE", optarg, 1);
      break;
    case 1500: so.broker = optarg; break;
    case 1501:
      NUM(1, 256, "--parallel") so.parallel = (int)v;
      dist_flag = "--parallel";
      break;
    case 1502:
      so.target = optarg;
      dist_flag = "--target";
      break;
    case 1503:
      NUM(1, 100, "--max-tries") so.max_tries = (int)v;
      dist_flag = "--max-tries";
      break;
    case 1201: NUM(1, KS_MAX_SEEDS, "--seeds") so.eval.n_seeds = (int)v; break;
    case 'n': NUM(1, 1e6, "--budget") so.budget = (int)v; break;
    case 't': NUM(1, 1e7, "--time") so.time_s = v; break;
    case 'g': NUM(0, 1e6, "--stagnation") so.stagnation = (int)v; break;
    case 1400: NUM(0, 16, "--finalists") so.finalists = (int)v; break;
    case 1401: NUM(1, 32, "--rounds") so.tourney_rounds = (int)v; break;
    case 1403: NUM(0, 31, "--tie-rounds") so.tourney_tie_rounds = (int)v; break;
    case 1402: so.workloads = optarg; break;
    case 'p':
      if (!strcmp(optarg, "llm") && !ks_planner_find("llm")) {
        fputs("ksearch run: --planner llm is not implemented yet (the LLM "
              "planner issue); use --planner builtin\n",
              stderr);
        return 3;
      }
      if (!ks_planner_find(optarg)) {
        fprintf(stderr,
                "ksearch run: --planner %s: use builtin, random or llm\n",
                optarg);
        json_decref(llm);
        return 2;
      }
      so.planner = optarg;
      break;
    case 's': NUM(0, 1e18, "--seed") so.seed = (uint64_t)v; break;
    case 'a': NUM(1, 100, "--attempts") so.max_attempts = (int)v; break;
    case 'o': so.out_dir = optarg; break;
    case 'r': so.resume_dir = optarg; break;
    case 'T': NUM(1, 4096, "--threads") so.eval.threads = (int)v; break;
    case 'm': NUM(0, 60, "--min-time") so.eval.topt.min_time_s = v; break;
    case 'j': as_json = true; break;
    case 'q': so.quiet = true; break;
    case 1300: so.report = true; break;
    case 1000: LLM_STR("base_url")
    case 1001: LLM_STR("model")
    case 1002: LLM_STR("coder_model")
    case 1003: LLM_NUM("temperature", 0, 2)
    case 1004: LLM_NUM("max_tokens", 1, 1e7)
    case 1005: LLM_STR("reasoning_effort")
    case 1006: LLM_NUM("timeout", 0.1, 86400)
    case 1007: LLM_NUM("max_inflight", 1, 256)
    case 1008: LLM_NUM("token_budget", 1, 1e15)
    case 1009: LLM_STR("cache")
    case 1010:
      llm_flag = opts[idx].name;
      json_object_set_new(llm, "stream", json_true());
      break;
    case 1011: LLM_NUM("retries", 0, 20)
    case 1012: LLM_STR("cache_match")
    case 1100: /* any planner: the analyzer's concepts seed its plans */
      json_object_set_new(llm, "seed_cuda", json_string(optarg));
      break;
    case 1101: { /* the best kernel of a CUDA run, as --seed-cuda */
      char path[PATH_MAX];
      ks_err e;
      if (seed_from_run(optarg, path, sizeof path, &e)) {
        json_decref(llm);
        return ks_cli_fail(ks_exit_code(e.code), e.msg);
      }
      json_object_set_new(llm, "seed_cuda", json_string(path));
      break;
    }
    case 'h':
      fputs(k_usage, stdout);
      json_decref(llm);
      return 0;
    default:
      fputs(k_usage, stderr);
      json_decref(llm);
      return 2;
    }
  }
#undef NUM
#undef LLM_STR
#undef LLM_NUM
  if (dist_flag && !so.broker) {
    fprintf(stderr,
            "ksearch run: %s applies with --broker URL only (evaluations on "
            "workers)\n",
            dist_flag);
    json_decref(llm);
    return 2;
  }
  if (so.broker) {
    ks_broker_url u;
    ks_err e;
    if (ks_broker_url_parse(so.broker, &u, &e)) {
      json_decref(llm);
      return ks_cli_fail(2, e.msg);
    }
    memset(&u, 0, sizeof u);
  }
  if (strcmp(so.planner, "llm") && llm_flag) {
    fprintf(stderr, "ksearch run: --%s applies to --planner llm only\n",
            llm_flag);
    json_decref(llm);
    return 2;
  }
  if (!strcmp(so.planner, "llm")) {
    const char *env_url = getenv("KSEARCH_LLM_BASE_URL");
    const char *env_model = getenv("KSEARCH_LLM_MODEL");
    if (!json_object_get(llm, "base_url") && !(env_url && *env_url)) {
      fputs("ksearch run: --planner llm needs an OpenAI-compatible endpoint: "
            "give --llm-base-url URL (e.g. https://api.openai.com/v1, "
            "http://127.0.0.1:8080/v1) or set KSEARCH_LLM_BASE_URL; the API "
            "key comes from KSEARCH_API_KEY or OPENAI_API_KEY\n",
            stderr);
      json_decref(llm);
      return 2;
    }
    if (!json_object_get(llm, "model") && !(env_model && *env_model)) {
      fputs("ksearch run: --planner llm needs a model: give --llm-model NAME "
            "or set KSEARCH_LLM_MODEL\n",
            stderr);
      json_decref(llm);
      return 2;
    }
    so.planner_options = llm;
  }
  if (json_object_get(llm, "seed_cuda"))
    so.planner_options = llm;
  char task_from_run[4096];
  if (argc - optind == 1) {
    so.task = argv[optind];
  } else if (argc - optind == 0 && so.resume_dir) {
    /* the task of a resumed run is the one it was started with */
    snprintf(task_from_run, sizeof task_from_run, "%s/ksearch.db",
             so.resume_dir);
    ks_store *st;
    ks_err e;
    ks_store_run run;
    bool found = false;
    if (ks_store_open_readonly(task_from_run, &st, &e)) {
      json_decref(llm);
      return ks_cli_fail(ks_exit_code(e.code), e.msg);
    }
    if (ks_store_get_run(st, &run, &found, &e) || !found) {
      ks_store_close(st);
      json_decref(llm);
      return ks_cli_fail(2, "the run folder holds no run; give TASK");
    }
    snprintf(task_from_run, sizeof task_from_run, "%s", run.task_name);
    ks_store_run_free(&run);
    ks_store_close(st);
    so.task = task_from_run;
  } else {
    fputs("ksearch run: expected TASK (or --resume RUN_DIR)\n", stderr);
    fputs(k_usage, stderr);
    json_decref(llm);
    return 2;
  }
  if (so.quiet)
    ks_log_set_level(KS_LOG_QUIET);
  json_t *summary = NULL;
  ks_err err = {0};
  ks_code rc = ks_search_run(&so, &summary, &err);
  const char *run_dir =
      summary ? json_string_value(json_object_get(summary, "run_dir")) : NULL;
  if (so.report && run_dir) {
    /* the final page: summary.json and the stop reason are written now */
    ks_err rerr;
    if (ks_report_write(run_dir, NULL, false, NULL, &rerr))
      fprintf(stderr, "ksearch run: warning: %s/%s not written: %s\n", run_dir,
              KS_REPORT_FILE, rerr.msg);
    else if (!so.quiet)
      fprintf(stderr, "ksearch: report %s/%s\n", run_dir, KS_REPORT_FILE);
  }
  if (summary) {
    if (as_json) {
      char *s = json_dumps(summary, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
      puts(s);
      free(s);
    } else if (!rc) {
      json_t *best = json_object_get(summary, "best");
      fprintf(stderr,
              "ksearch: stopped (%s) after %lld evaluations, %lld correct; "
              "run folder %s\n",
              json_string_value(json_object_get(summary, "stopped_because")),
              (long long)json_integer_value(
                  json_object_get(summary, "evaluations")),
              (long long)json_integer_value(
                  json_object_get(summary, "correct_evaluations")),
              json_string_value(json_object_get(summary, "run_dir")));
      if (json_is_object(best))
        printf("best: %.3fx over the reference: %s\n",
               json_number_value(json_object_get(best, "score")),
               json_string_value(json_object_get(best, "file")));
      else
        printf("no correct kernel found\n");
    }
    json_decref(summary);
  }
  json_decref(llm);
  if (rc)
    return ks_cli_fail(ks_exit_code(rc), err.msg);
  return 0;
}

static const char k_show_usage[] =
    "usage: ksearch show RUN_DIR [--json]\n"
    "       ksearch show RUN_DIR --retime [--finalists N] [--rounds N] "
    "[--tie-rounds N] [run options]\n"
    "  --json       the report's facts (what `ksearch report` draws) as one "
    "JSON\n"
    "               object on stdout\n"
    "  --retime     time the run's leading candidates again together, now, "
    "in\n"
    "               paired rounds (the final tournament), and update\n"
    "               best/ and summary.json with the winner and its margin;\n"
    "               no new candidates are made\n"
    "  --finalists N  leaders taken (default 8)\n"
    "  --rounds N     rounds, at most (default 6)\n"
    "  --tie-rounds N tie-break rounds after those (default 10)\n"
    "  other options (--min-time, --threads, ...) are those of `ksearch run`\n";

/* `show --retime`: the run resumed with no evaluations left, so that only
 * its end runs: the tournament, best/ and summary.json (DESIGN.md: Final
 * tournament). */
static int show_retime(const char *dir, int argc, char **argv) {
  char *av[64];
  int n = 0;
  bool fin = false;
  av[n++] = "run";
  av[n++] = "--resume";
  av[n++] = (char *)dir;
  av[n++] = "--budget";
  av[n++] = "1";
  for (int i = 1; i < argc && n < 60; i++) {
    if (argv[i] == dir || !strcmp(argv[i], "--retime"))
      continue;
    if (!strcmp(argv[i], "--budget")) {
      fprintf(stderr, "ksearch show --retime: --budget makes no sense here "
                      "(no new candidates); use `ksearch run --resume`\n");
      return 2;
    }
    fin = fin || !strcmp(argv[i], "--finalists");
    av[n++] = argv[i];
  }
  if (!fin && n < 62) {
    av[n++] = "--finalists";
    av[n++] = "8";
  }
  av[n] = NULL;
  return ks_cmd_run(n, av);
}

/* `show --json`: the same facts as the HTML report, as data. */
static int show_json(const char *dir) {
  json_t *facts = NULL;
  ks_err err;
  ks_code rc = ks_report_facts(dir, NULL, false, &facts, &err);
  if (rc)
    return ks_cli_fail(ks_exit_code(rc), err.msg);
  char *s = json_dumps(facts, JSON_INDENT(2));
  json_decref(facts);
  if (!s)
    return ks_cli_fail(3, "out of memory");
  puts(s);
  free(s);
  return 0;
}

/* Whether a `run` option (as show --retime passes them on) stands alone;
 * every other option takes the next argument as its value. */
static bool flag_alone(const char *a) {
  static const char *const alone[] = {"--retime", "--json",   "-q",
                                      "--quiet",  "--report", "--llm-stream",
                                      "-h",       "--help"};
  for (size_t i = 0; i < sizeof alone / sizeof *alone; i++)
    if (!strcmp(a, alone[i]))
      return true;
  return a[0] == '-' && strchr(a, '=') != NULL; /* --opt=value */
}

int ks_cmd_show(int argc, char **argv) {
  const char *dir = NULL;
  bool as_json = false, retime = false;
  /* one pass: the run folder is the argument no option takes as its value */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--retime"))
      retime = true;
    if (argv[i][0] == '-' && !flag_alone(argv[i]))
      i++; /* its value */
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
  }
  if (retime) {
    if (!dir) {
      fputs(k_show_usage, stderr);
      return 2;
    }
    return show_retime(dir, argc, argv);
  }
  dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(k_show_usage, stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--json"))
      as_json = true;
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
    else {
      fprintf(stderr, "ksearch show: unexpected argument \"%s\"\n", argv[i]);
      fputs(k_show_usage, stderr);
      return 2;
    }
  }
  if (!dir) {
    fputs(k_show_usage, stderr);
    return 2;
  }
  if (as_json)
    return show_json(dir);
  argv[1] = (char *)dir;
  char path[4096];
  ks_err err;
  snprintf(path, sizeof path, "%s/world_model.json", argv[1]);
  ks_wm *wm = NULL;
  if (ks_wm_load(path, &wm, &err))
    return ks_cli_fail(ks_exit_code(err.code), err.msg);
  snprintf(path, sizeof path, "%s/ksearch.db", argv[1]);
  ks_store *st = NULL;
  if (ks_store_open_readonly(path, &st, &err)) {
    ks_wm_free(wm);
    return ks_cli_fail(ks_exit_code(err.code), err.msg);
  }
  const ks_wm_node *root = ks_wm_root(wm);
  printf("== analysis\n%s\n", root->notes);
  char *tree = ks_wm_render_tree(wm);
  printf("== world model (%d nodes)\n%s\n", ks_wm_count(wm), tree);
  free(tree);
  ks_store_eval be;
  ks_store_candidate bc;
  bool found = false;
  memset(&bc, 0, sizeof bc);
  if (ks_store_best(st, &be, &bc, &found, &err) == KS_OK && found) {
    char steps[32][KS_WM_PLAN_STEP];
    int n = ks_wm_plan(wm, bc.node_id, steps, 32);
    printf("== best plan (candidate %lld, score %.3fx, node %s)\n",
           (long long)bc.id, be.score, bc.node_id);
    for (int i = 0; i < n && i < 32; i++)
      printf("  %d. %s\n", i + 1, steps[i]);
    printf("  params: %s\n", bc.params_json);
    ks_store_candidate_free(&bc);
  } else {
    printf("== best plan: none correct yet\n");
  }
  ks_store_eval *rows = NULL;
  size_t nrows = 0;
  if (ks_store_top(st, 10, &rows, &nrows, &err) == KS_OK) {
    printf("\n== top candidates\n%-6s %-8s %-10s %s\n", "cand", "score", "node",
           "params");
    for (size_t i = 0; i < nrows; i++) {
      ks_store_candidate c;
      memset(&c, 0, sizeof c);
      if (ks_store_get_candidate(st, rows[i].candidate_id, &c, &err) == KS_OK) {
        printf("%-6lld %-8.3f %-10s %s\n", (long long)c.id, rows[i].score,
               rows[i].node_id, c.params_json);
        ks_store_candidate_free(&c);
      }
    }
    free(rows);
  }
  ks_store_close(st);
  ks_wm_free(wm);
  return 0;
}
