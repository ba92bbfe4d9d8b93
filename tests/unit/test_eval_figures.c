/* test_eval_figures.c — the implausibility verdict of one timed workload
 * (src/eval/eval_figures.c; DESIGN.md: Ceiling probe): a candidate faster
 * than the ceiling probed beside it is refused on the host and on a device
 * with a cached roofline, and on a device without one (mlx) the probe gives
 * the fraction but no verdict (MLX's probe is slower than MLX's own fused
 * ops, so its baselines were refused on the H200). rmsnorm's largest
 * built-in workload. */
#include "eval/eval_figures.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ks_task g_task;
static int g_wl; /* the workload with the most bytes */

static void setup(void) {
  const char *src = getenv("KSEARCH_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/tasks/rmsnorm", src ? src : ".");
  ks_err err;
  cr_assert_eq(ks_task_load(path, &g_task, &err), KS_OK, "%s", err.msg);
  double most = 0;
  for (int i = 0; i < g_task.n_workloads; i++) {
    double b = ks_task_cost_bytes(&g_task, &g_task.workloads[i]);
    if (b > most)
      most = b, g_wl = i;
  }
}

static void teardown(void) { ks_task_free(&g_task); }

TestSuite(eval_figures, .init = setup, .fini = teardown);

/* a workload timed at `over` times the probe's bandwidth */
static bool judge(bool host, const ks_roofline *roof, double over,
                  ks_wl_result *w, char *why, size_t n) {
  ks_figures_ctx c = {.task = &g_task,
                      .roof = roof,
                      .host_memory = host,
                      .threads = 2,
                      .dc = host ? KS_DEV_CPU : KS_DEV_GPU};
  memset(w, 0, sizeof *w);
  double bytes = ks_task_cost_bytes(&g_task, &g_task.workloads[g_wl]);
  w->probe_gbps = 100.0;
  w->probe_spread = 0.02;
  w->time_ns_min = bytes / (w->probe_gbps * over);
  if (!host)
    w->device_ns_min = w->time_ns_min;
  return ks_eval_workload_figures(&c, g_wl, w, w->probe_gbps, why, n);
}

Test(eval_figures, faster_than_the_probe_is_refused_on_the_host) {
  ks_wl_result w;
  char why[600] = "";
  cr_expect(judge(true, NULL, 1.5, &w, why, sizeof why));
  cr_expect(strstr(why, "faster than the hardware allows") != NULL, "%s", why);
  cr_expect(!judge(true, NULL, 0.9, &w, why, sizeof why), "%s", why);
  cr_expect_float_eq(w.roofline_fraction, 0.9, 1e-6);
}

Test(eval_figures, a_device_with_a_cached_roofline_is_judged) {
  ks_roofline roof;
  memset(&roof, 0, sizeof roof);
  roof.bandwidth_gbps = 100.0;
  ks_wl_result w;
  char why[600] = "";
  cr_expect(judge(false, &roof, 1.5, &w, why, sizeof why));
  cr_expect(strstr(why, "probed beside it") != NULL, "%s", why);
}

Test(eval_figures, a_device_probe_without_a_cached_roofline_is_no_verdict) {
  ks_wl_result w;
  char why[600] = "";
  /* mx.fast.rms_norm at 1.33x MLX's probe (H200, 8192x8192) */
  cr_expect(!judge(false, NULL, 1.33, &w, why, sizeof why), "%s", why);
  cr_expect(w.ceiling_probed);
  cr_expect_float_eq(w.roofline_fraction, 1.33, 1e-6,
                     "the fraction is still reported: %f", w.roofline_fraction);
}
