/* run.c — `ksearch run`: placeholder until the search lands (issue: the
 * search). Says so and exits 3. */
#include "cli/cli.h"

#include <stdio.h>

int ks_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("ksearch run: not implemented yet (the world-model search); use "
        "`ksearch eval` meanwhile\n",
        stderr);
  return 3;
}

int ks_cmd_show(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("ksearch show: not implemented yet (comes with `ksearch run`)\n",
        stderr);
  return 3;
}
