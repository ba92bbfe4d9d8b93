/* test_ref_times.c — the reference's stored timings (src/eval/ref_times.c):
 * what is saved is read back, a file that misses a workload, holds a bad
 * figure or does not parse counts as none, and skipped workloads need no
 * figure. */
#include "eval/ref_times.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ks_task g_task;
static char g_dir[] = "/tmp/ks-reftimes-XXXXXX";

static void setup(void) {
  cr_assert_not_null(mkdtemp(g_dir));
  const char *src = getenv("KSEARCH_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/tasks/rmsnorm", src ? src : ".");
  ks_err err;
  cr_assert_eq(ks_task_load(path, &g_task, &err), KS_OK, "%s", err.msg);
  cr_assert_geq(g_task.n_workloads, 2);
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(ref_times, .init = setup, .fini = teardown);

Test(ref_times, saved_figures_read_back_and_name_the_machine) {
  char path[4096];
  ks_ref_times_path(g_dir, 2, path, sizeof path);
  cr_expect(strstr(path, "-t2.json") != NULL, "%s", path);
  bool skip[KS_MAX_WORKLOADS] = {false};
  double med[KS_MAX_WORKLOADS], mn[KS_MAX_WORKLOADS];
  for (int i = 0; i < g_task.n_workloads; i++) {
    med[i] = 1000.0 * (i + 2);
    mn[i] = 900.0 * (i + 2);
  }
  double got_med[KS_MAX_WORKLOADS] = {0}, got_min[KS_MAX_WORKLOADS] = {0};
  cr_expect_not(ks_ref_times_load(path, &g_task, skip, got_med, got_min),
                "nothing stored yet");
  ks_err err;
  cr_assert_eq(ks_ref_times_save(path, &g_task, skip, med, mn, &err), KS_OK,
               "%s", err.msg);
  cr_assert(ks_ref_times_load(path, &g_task, skip, got_med, got_min));
  for (int i = 0; i < g_task.n_workloads; i++) {
    cr_expect_float_eq(got_med[i], med[i], 1e-9);
    cr_expect_float_eq(got_min[i], mn[i], 1e-9);
  }
  /* another thread count is another file */
  char other[4096];
  ks_ref_times_path(g_dir, 3, other, sizeof other);
  cr_expect_not(ks_ref_times_load(other, &g_task, skip, got_med, got_min));
}

Test(ref_times, a_missing_workload_or_bad_file_counts_as_none) {
  char path[4096];
  ks_ref_times_path(g_dir, 1, path, sizeof path);
  bool skip[KS_MAX_WORKLOADS] = {false};
  double med[KS_MAX_WORKLOADS], mn[KS_MAX_WORKLOADS];
  for (int i = 0; i < g_task.n_workloads; i++)
    med[i] = mn[i] = 500;
  med[1] = 0; /* not timed: not saved */
  ks_err err;
  cr_assert_eq(ks_ref_times_save(path, &g_task, skip, med, mn, &err), KS_OK);
  double got_med[KS_MAX_WORKLOADS] = {0}, got_min[KS_MAX_WORKLOADS] = {0};
  cr_expect_not(ks_ref_times_load(path, &g_task, skip, got_med, got_min));
  cr_expect_float_eq(got_med[0], 0, 1e-12, "nothing filled on failure");
  /* the workload nobody asks for needs no figure */
  skip[1] = true;
  cr_expect(ks_ref_times_load(path, &g_task, skip, got_med, got_min));
  /* a file that does not parse */
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("{\"broken\": [1,", f);
  fclose(f);
  cr_expect_not(ks_ref_times_load(path, &g_task, skip, got_med, got_min));
  /* a minimum above the median is not a measurement */
  for (int i = 0; i < g_task.n_workloads; i++)
    med[i] = 100, mn[i] = 200;
  cr_assert_eq(ks_ref_times_save(path, &g_task, skip, med, mn, &err), KS_OK);
  cr_expect_not(ks_ref_times_load(path, &g_task, skip, got_med, got_min));
}
