/* log.c — messages to stderr. stdout belongs to --json output (DESIGN.md:
 * Command line), so nothing here ever writes there. The level is a registry-
 * like process setting made once by the command line. */
#include "util/util.h"

static ks_log_level g_level = KS_LOG_INFO;

void ks_log_set_level(ks_log_level l) { g_level = l; }
ks_log_level ks_log_get_level(void) { return g_level; }

void ks_log(ks_log_level l, const char *fmt, ...) {
  if (l > g_level || g_level == KS_LOG_QUIET)
    return;
  va_list ap;
  va_start(ap, fmt);
  fputs("ksearch: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
