/* report.c — `ksearch report RUN_DIR [--out FILE]` (DESIGN.md: Command
 * line, Report): writes the run's self-contained HTML page, by default
 * <RUN_DIR>/report.html. Works on a finished, stopped or running search
 * (the store is opened read-only and takes no lock). */
#include "report/report.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char k_usage[] =
    "usage: ksearch report RUN_DIR [--out FILE] [-q]\n"
    "\n"
    "Writes one self-contained HTML page about a run (progress, world model,\n"
    "roofline, top candidates, best kernel and its diff, LLM calls, machine)\n"
    "that loads nothing from the network. The path written goes to stdout.\n"
    "\n"
    "options:\n"
    "  --out FILE   where to write (default RUN_DIR/report.html)\n"
    "  -q, --quiet  print nothing\n";

int ks_cmd_report(int argc, char **argv) {
  static const struct option opts[] = {{"out", required_argument, 0, 'o'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *out = NULL;
  bool quiet = false;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "qo:", opts, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case 'q': quiet = true; break;
    case 'h': fputs(k_usage, stdout); return 0;
    default: fputs(k_usage, stderr); return 2;
    }
  }
  if (argc - optind != 1) {
    fputs("ksearch report: expected one RUN_DIR\n", stderr);
    fputs(k_usage, stderr);
    return 2;
  }
  const char *dir = argv[optind];
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, KS_REPORT_FILE);
  ks_err err = {0};
  ks_code rc = ks_report_write(dir, NULL, false, out, &err);
  if (rc == KS_ERR_IO) /* an unwritable --out is the user's to fix */
    return ks_cli_fail(2, err.msg);
  if (rc)
    return ks_cli_fail(ks_exit_code(rc), err.msg);
  if (!quiet)
    puts(out ? out : path);
  return 0;
}
