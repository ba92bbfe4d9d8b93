/* test_proc.c — child processes with a wall-clock limit (src/util/proc.c):
 * output capture, exit status, signals, the timeout kill, and a missing
 * program reported as an environment error. */
#include "util/util.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

Test(proc, captures_output_and_exit_status) {
  char *argv[] = {"sh", "-c", "echo hello; echo oops >&2; exit 3", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(ks_run_capture(argv, NULL, 10, &log, &res, &err), KS_OK, "%s",
               err.msg);
  cr_expect_eq(res.exited, 1);
  cr_expect_eq(res.exit_status, 3);
  cr_expect_eq(res.signal, 0);
  cr_expect_eq(res.timed_out, 0);
  cr_assert_not_null(log.data);
  cr_expect(strstr(log.data, "hello\n") != NULL, "%s", log.data);
  cr_expect(strstr(log.data, "oops\n") != NULL, "stderr too: %s", log.data);
  cr_expect(res.wall_s >= 0 && res.wall_s < 5, "%g", res.wall_s);
  ks_buf_free(&log);
}

Test(proc, success_and_cwd) {
  const char *t = getenv("TMPDIR");
  const char *dir = t && *t ? t : "/tmp";
  char *argv[] = {"pwd", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(ks_run_capture(argv, dir, 10, &log, &res, &err), KS_OK, "%s",
               err.msg);
  cr_expect_eq(res.exited, 1);
  cr_expect_eq(res.exit_status, 0);
  cr_assert_not_null(log.data);
  char *real = realpath(dir, NULL);
  cr_expect(strstr(log.data, real) != NULL, "%s vs %s", log.data, real);
  free(real);
  ks_buf_free(&log);
}

Test(proc, large_output_is_drained) {
  /* more than a pipe's buffer: a child blocked on a full pipe would hang */
  char *argv[] = {"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(ks_run_capture(argv, NULL, 10, &log, &res, &err), KS_OK);
  cr_expect_eq(res.timed_out, 0);
  cr_expect_eq(res.exit_status, 0);
  cr_expect_eq(log.len, 1000000);
  ks_buf_free(&log);
}

Test(proc, null_log_discards) {
  char *argv[] = {"sh", "-c", "echo discarded; exit 0", NULL};
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(ks_run_capture(argv, NULL, 10, NULL, &res, &err), KS_OK);
  cr_expect_eq(res.exited, 1);
  cr_expect_eq(res.exit_status, 0);
}

Test(proc, reports_signal) {
  char *argv[] = {"sh", "-c", "kill -TERM $$", NULL};
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(ks_run_capture(argv, NULL, 10, NULL, &res, &err), KS_OK);
  cr_expect_eq(res.exited, 0);
  cr_expect_eq(res.signal, SIGTERM);
  cr_expect_eq(res.timed_out, 0);
}

Test(proc, timeout_kills) {
  char *argv[] = {"sleep", "10", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  double t0 = ks_now();
  cr_assert_eq(ks_run_capture(argv, NULL, 0.3, &log, &res, &err), KS_OK, "%s",
               err.msg);
  double took = ks_now() - t0;
  cr_expect_eq(res.timed_out, 1);
  cr_expect_eq(res.exited, 0);
  cr_expect_eq(res.signal, SIGKILL);
  cr_expect(took >= 0.25 && took < 3, "took %g s", took);
  cr_expect(res.wall_s >= 0.25 && res.wall_s < 3, "%g", res.wall_s);
  ks_buf_free(&log);
}

Test(proc, timeout_kills_process_group) {
  /* the shell's child holds the pipe too; it must die with the group */
  char *argv[] = {"sh", "-c", "sleep 10; echo never", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  double t0 = ks_now();
  cr_assert_eq(ks_run_capture(argv, NULL, 0.3, &log, &res, &err), KS_OK);
  cr_expect_eq(res.timed_out, 1);
  cr_expect(ks_now() - t0 < 3, "took %g s", ks_now() - t0);
  cr_expect(!log.data || !strstr(log.data, "never"));
  ks_buf_free(&log);
}

Test(proc, missing_program_is_env_error) {
  char *argv[] = {"ks-no-such-program-xyz", "--version", NULL};
  ks_buf log;
  ks_buf_init(&log);
  ks_proc_result res;
  ks_err err = {0};
  ks_code rc = ks_run_capture(argv, NULL, 10, &log, &res, &err);
  cr_expect_eq(rc, KS_ERR_ENV, "%s", err.msg);
  cr_expect_eq(err.code, KS_ERR_ENV);
  cr_expect_eq(ks_exit_code(rc), 3);
  cr_expect(strstr(err.msg, "ks-no-such-program-xyz") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "install") != NULL, "says the fix: %s", err.msg);
  ks_buf_free(&log);
}

Test(proc, bad_cwd_fails_child) {
  char *argv[] = {"true", NULL};
  ks_proc_result res;
  ks_err err = {0};
  cr_assert_eq(
      ks_run_capture(argv, "/nonexistent/ks_dir", 10, NULL, &res, &err), KS_OK);
  cr_expect_eq(res.exited, 1);
  cr_expect_neq(res.exit_status, 0);
}
