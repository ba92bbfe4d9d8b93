/* task_fixture.c — the fixture of the task tests (task_fixture.h): the
 * suite "task" whose init writes a temporary folder with a reference.c and
 * whose fini removes it. */
#include "task_fixture.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- fixture */

char tt_dir[512];
char tt_json[600];

static void tt_setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tt_dir, sizeof tt_dir, "%s/ks_task_XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tt_dir));
  snprintf(tt_json, sizeof tt_json, "%s/task.json", tt_dir);
  char ref[700];
  snprintf(ref, sizeof ref, "%s/reference.c", tt_dir);
  FILE *f = fopen(ref, "w");
  cr_assert_not_null(f);
  fputs("void t1(void) {}\n", f);
  fclose(f);
}

static void tt_teardown(void) { ks_rm_rf(tt_dir); }

/* Converts ' to " so fixtures read as JSON without escapes. */
char *tt_quote(const char *q) {
  char *s = ks_strdup(q);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  return s;
}

ks_code tt_load(const char *q, ks_task *t, ks_err *err) {
  char *s = tt_quote(q);
  memset(err, 0, sizeof *err);
  ks_code rc = ks_task_load_json(s, tt_json, t, err);
  free(s);
  return rc;
}

void tt_load_ok(const char *q, ks_task *t) {
  ks_err err;
  cr_assert_eq(tt_load(q, t, &err), KS_OK, "%s", err.msg);
}

/* Asserts bad input (exit 2), the file named, and every NULL-terminated
 * substring present. */
void tt_bad(const char *q, ...) {
  ks_task t;
  ks_err err;
  ks_code rc = tt_load(q, &t, &err);
  cr_assert_eq(rc, KS_ERR_INPUT, "want bad input, got %d: %s", rc, err.msg);
  cr_assert_eq(err.code, KS_ERR_INPUT);
  cr_assert_eq(ks_exit_code(rc), 2);
  cr_assert(strstr(err.msg, tt_json) != NULL, "message names the file: %s",
            err.msg);
  cr_assert_null(t.cost_bytes, "freed on failure");
  cr_assert_null(t.cost_flops, "freed on failure");
  va_list ap;
  va_start(ap, q);
  for (const char *want; (want = va_arg(ap, const char *));)
    cr_assert(strstr(err.msg, want) != NULL, "want \"%s\" in: %s", want,
              err.msg);
  va_end(ap);
}

const char *tt_src(void) {
  const char *s = getenv("KSEARCH_SRC");
  return s && *s ? s : ".";
}

TestSuite(task, .init = tt_setup, .fini = tt_teardown);
