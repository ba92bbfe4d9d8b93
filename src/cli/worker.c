/* worker.c — `ksearch worker --broker URL [--backend B] [--device N]
 * [--threads N] [--claim-after S] [--max-jobs N] [-q]` (DESIGN.md: Workers):
 * parses the command line and runs the worker loop of dist/worker.h until
 * SIGINT or SIGTERM (the job in hand is finished and answered first). */
#include "dist/worker.h"
#include "cli/cli.h"
#include "util/util.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static const char k_usage[] =
    "usage: ksearch worker --broker URL [options]\n"
    "\n"
    "Evaluates the jobs that `ksearch run --broker URL` sends to this "
    "worker's\ntarget (backend, device, thread count), one at a time, in the "
    "sandbox.\n"
    "\n"
    "  --broker URL       redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] "
    "(required;\n"
    "                     or KSEARCH_BROKER)\n"
    "  --backend B        c (default) or opencl\n"
    "  --device N         OpenCL device (see `ksearch roofline --backend "
    "opencl --list`)\n"
    "  --threads N        threads for kernels (default all cores)\n"
    "  --claim-after S    take over a job another worker left unanswered "
    "this long\n"
    "                     (default 30 s; heartbeats keep a live worker's "
    "job)\n"
    "  --max-jobs N       stop after answering N jobs (default: no limit)\n"
    "  -q, --quiet        no progress on stderr\n";

static bool num(const char *v, double lo, double hi, double *out) {
  char *end;
  double x = strtod(v, &end);
  if (!*v || *end || !(x >= lo && x <= hi))
    return false;
  *out = x;
  return true;
}

int ks_cmd_worker(int argc, char **argv) {
  static const struct option opts[] = {
      {"broker", required_argument, 0, 'u'},
      {"backend", required_argument, 0, 'b'},
      {"device", required_argument, 0, 'D'},
      {"threads", required_argument, 0, 'T'},
      {"claim-after", required_argument, 0, 'c'},
      {"max-jobs", required_argument, 0, 'm'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  ks_worker_opts wo;
  ks_worker_opts_default(&wo);
  const char *url = getenv("KSEARCH_BROKER");
  double v;
  int c;
  optind = 1;
#define NUM(lo, hi, what)                                                      \
  if (!num(optarg, lo, hi, &v)) {                                              \
    fprintf(stderr, "ksearch worker: %s %s: expected a number in [%g, %g]\n",  \
            what, optarg, (double)(lo), (double)(hi));                         \
    return 2;                                                                  \
  }
  while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
    switch (c) {
    case 'u': url = optarg; break;
    case 'b':
      if (strcmp(optarg, "c") && strcmp(optarg, "opencl")) {
        fprintf(stderr, "ksearch worker: --backend %s: use c or opencl\n",
                optarg);
        return 2;
      }
      wo.backend = optarg;
      break;
    case 'D':
      NUM(0, 1000, "--device");
      setenv("KSEARCH_OPENCL_DEVICE", optarg, 1);
      break;
    case 'T': NUM(1, 4096, "--threads") wo.threads = (int)v; break;
    case 'c': NUM(0.2, 86400, "--claim-after") wo.claim_after_s = v; break;
    case 'm': NUM(1, 1e9, "--max-jobs") wo.max_jobs = (int)v; break;
    case 'q': wo.quiet = true; break;
    case 'h': fputs(k_usage, stdout); return 0;
    default: fputs(k_usage, stderr); return 2;
    }
  }
#undef NUM
  if (optind < argc) {
    fprintf(stderr, "ksearch worker: unexpected argument \"%s\"\n%s",
            argv[optind], k_usage);
    return 2;
  }
  if (!url || !*url) {
    fputs("ksearch worker: --broker URL is required (e.g. "
          "redis://127.0.0.1:6379), or set KSEARCH_BROKER\n",
          stderr);
    return 2;
  }
  ks_err err = {0};
  if (ks_broker_url_parse(url, &wo.url, &err))
    return ks_cli_fail(2, err.msg);
  if (wo.quiet)
    ks_log_set_level(KS_LOG_QUIET);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  ks_code rc = ks_worker_run(&wo, &g_stop, &err);
  memset(&wo.url, 0, sizeof wo.url);
  if (rc)
    return ks_cli_fail(ks_exit_code(rc), err.msg);
  return 0;
}
