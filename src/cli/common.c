/* common.c — helpers shared by the command files. */
#include "cli/cli.h"

#include <stdio.h>

int ks_cli_fail(int code, const char *msg) {
  fprintf(stderr, "ksearch: %s\n", msg);
  return code;
}
