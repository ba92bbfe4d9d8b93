/* pending.c — commands of DESIGN.md that do not exist yet (report). Each
 * says so at run time and exits 3, as the project's standards require: never
 * pretend. */
#include "cli/cli.h"

#include <stdio.h>

static int pending(const char *cmd, const char *what) {
  fprintf(stderr,
          "ksearch %s: not implemented yet (%s); this build can run `ksearch "
          "tasks`, `ksearch eval` and `ksearch roofline`\n",
          cmd, what);
  return 3;
}

int ks_cmd_report(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return pending("report", "the HTML report comes with the search");
}
