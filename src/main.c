/* main.c — command dispatch only (DESIGN.md: Command line). */
#include "cli/cli.h"
#include "ksearch.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
} k_cmds[] = {
    {"tasks", ks_cmd_tasks, "list the built-in tasks"},
    {"eval", ks_cmd_eval, "build, check and time one candidate kernel"},
    {"run", ks_cmd_run, "search for a faster kernel"},
    {"report", ks_cmd_report, "write the HTML report of a run"},
    {"show", ks_cmd_show, "show a run's tree, best plan and top candidates"},
    {"roofline", ks_cmd_roofline, "measure peak bandwidth and FLOP/s"},
    {"translate", ks_cmd_translate, "carry a CUDA kernel to another target"},
    {"worker", ks_cmd_worker, "evaluate the jobs of runs given --broker"},
    {"export", ks_cmd_export, "write a run's best kernel as a Python module"},
};

static void usage(FILE *f) {
  fputs("usage: ksearch COMMAND [options]\n\ncommands:\n", f);
  for (size_t i = 0; i < sizeof k_cmds / sizeof *k_cmds; i++)
    fprintf(f, "  %-10s %s\n", k_cmds[i].name, k_cmds[i].help);
  fputs("\n`ksearch COMMAND --help` describes each command's options.\n", f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof k_cmds / sizeof *k_cmds; i++)
    if (!strcmp(argv[1], k_cmds[i].name))
      return k_cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "ksearch: unknown command \"%s\"\n", argv[1]);
  usage(stderr);
  return 2;
}
