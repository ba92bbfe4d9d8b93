/* test_eval_figures.c — the implausibility verdict of one timed workload
 * (src/eval/eval_figures.c; DESIGN.md: Ceiling probe): a candidate faster
 * than the ceiling probed beside it is refused on the host and on a device
 * with a cached roofline, and on a device without one (mlx) the probe gives
 * the fraction but no verdict (MLX's probe is slower than MLX's own fused
 * ops, so its baselines were refused on the H200). rmsnorm's largest
 * built-in workload. A compute-bound workload (gemm_bf16's largest) is
 * probed for FLOP/s by the cached roofline's measure, its fraction taken
 * against that probe and a kernel faster than it refused; a starved compute
 * probe falls back to what any CPU could do. */
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

/* gemm_bf16's workload with the most flops, under a cached roofline */
static void gemm_ctx(ks_task *t, int *wl, ks_roofline *roof,
                     ks_figures_ctx *c) {
  const char *src = getenv("KSEARCH_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/tasks/gemm_bf16", src ? src : ".");
  ks_err err;
  cr_assert_eq(ks_task_load(path, t, &err), KS_OK, "%s", err.msg);
  double most = 0;
  for (int i = 0; i < t->n_workloads; i++) {
    double f = ks_task_cost_flops(t, &t->workloads[i]);
    if (ks_workload_applies(&t->workloads[i], KS_DEV_CPU) && f > most)
      most = f, *wl = i;
  }
  memset(roof, 0, sizeof *roof);
  roof->bandwidth_gbps = 30;
  roof->peak_gflops = 200;
  ks_figures_ctx cc = {.task = t,
                       .roof = roof,
                       .host_memory = true,
                       .threads = 2,
                       .dc = KS_DEV_CPU};
  *c = cc;
}

Test(eval_figures, a_compute_bound_workload_gets_the_compute_probe) {
  ks_task t;
  int wl = 0;
  ks_roofline roof;
  ks_figures_ctx c;
  gemm_ctx(&t, &wl, &roof, &c);
  double flops = ks_task_cost_flops(&t, &t.workloads[wl]);
  cr_expect_float_eq(ks_eval_compute_probe_flops(&c, wl), flops, 1e-6);
  /* the same workload on a machine whose peak is far above its bandwidth
   * would be memory-bound: the probe moves its bytes */
  roof.peak_gflops = 1e6;
  cr_expect_eq(ks_eval_compute_probe_flops(&c, wl), 0);
  roof.peak_gflops = 200;
  /* no cached roofline, or not host memory: no compute probe */
  c.roof = NULL;
  cr_expect_eq(ks_eval_compute_probe_flops(&c, wl), 0);
  c.roof = &roof;
  c.host_memory = false;
  cr_expect_eq(ks_eval_compute_probe_flops(&c, wl), 0);
  ks_task_free(&t);
}

/* the judge's figures of a probe at probe_gflops beside a kernel at
 * `over` times it, pairs agreeing */
static bool judge_compute(double probe_gflops, double over, ks_wl_result *w,
                          char *why, size_t n) {
  ks_task t;
  int wl = 0;
  ks_roofline roof;
  ks_figures_ctx c;
  gemm_ctx(&t, &wl, &roof, &c);
  double flops = ks_task_cost_flops(&t, &t.workloads[wl]);
  ks_judge_wl j;
  memset(&j, 0, sizeof j);
  memset(w, 0, sizeof *w);
  j.probe_flops = flops;
  j.probe_ns_min = flops / probe_gflops;
  j.probe_ns_median = j.probe_ns_min * 1.02;
  j.time_ns = flops / (probe_gflops * over);
  j.probe_ratio = j.probe_ns_min / j.time_ns;
  j.probe_pairs = 5;
  ks_eval_probe_figures(&c, wl, &j, w);
  cr_expect_float_eq(w->probe_gflops, probe_gflops, 1e-6);
  cr_expect_eq(w->probe_gbps, 0, "a compute probe is no bandwidth");
  cr_expect_float_eq(w->paired_fraction, over, 1e-6);
  w->time_ns_min = j.time_ns;
  bool bad = ks_eval_workload_figures(&c, wl, w, 0, why, n);
  ks_task_free(&t);
  return bad;
}

Test(eval_figures, the_compute_probe_is_the_fraction_and_the_verdict) {
  ks_wl_result w;
  char why[600] = "";
  cr_expect(!judge_compute(220, 0.8, &w, why, sizeof why), "%s", why);
  cr_expect(w.ceiling_probed);
  cr_expect(w.ceiling_compute);
  cr_expect_float_eq(w.roofline_fraction, 0.8, 1e-6);
  cr_expect_float_eq(w.ceiling_gflops, 220, 1e-6);
  /* 1.2x the FMA probe beside it: refused, the reason says so */
  cr_expect(judge_compute(220, 1.2, &w, why, sizeof why));
  cr_expect(strstr(why, "compute probe beside it") != NULL, "%s", why);
  /* a starved probe (under half the cached 200 GFLOP/s) is no verdict at
   * 1.2x it, only the most any CPU could do is */
  why[0] = 0;
  cr_expect(!judge_compute(60, 1.2, &w, why, sizeof why), "%s", why);
  cr_expect(judge_compute(60, 30, &w, why, sizeof why));
  cr_expect(strstr(why, "starved") != NULL, "%s", why);
}
