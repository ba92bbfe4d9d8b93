/* eval_json.c — an evaluation's result as `eval --json` prints it and the
 * store keeps it (DESIGN.md: Evaluation, "eval --json"): status, score,
 * per-workload figures (times, speedups, roofline fraction and the ceiling
 * it was judged against), phases. Split from eval.c, which measures; this
 * file only writes down what was measured. */
#include "eval/eval.h"

#include <math.h>

static json_t *num(double v) { return json_real(isfinite(v) ? v : 0); }

json_t *ks_eval_result_to_json(const ks_task *task, const ks_eval_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(ks_eval_status_name(r->status)));
  json_object_set_new(o, "correct", json_boolean(r->correct));
  json_object_set_new(o, "score", num(r->score));
  json_object_set_new(o, "paired_score", num(r->paired_score));
  if (r->beside_ratio > 0)
    json_object_set_new(o, "beside_ratio", num(r->beside_ratio));
  if (r->baseline_score > 0) {
    json_object_set_new(o, "baseline_score", num(r->baseline_score));
    if (r->reference_score > 0)
      json_object_set_new(o, "reference_score", num(r->reference_score));
  }
  json_t *arr = json_array();
  for (int i = 0; i < r->n_workloads; i++) {
    const ks_wl_result *w = &r->wl[i];
    /* workloads of another device class ("device" in task.json) */
    if (!ks_workload_applies(&task->workloads[i], r->device_class))
      continue;
    json_t *axes = json_object();
    for (int a = 0; a < task->n_axes; a++)
      if (!task->axes[a].is_const)
        json_object_set_new(axes, task->axes[a].name,
                            json_integer(task->workloads[i].axis[a]));
    json_t *wj = json_object();
    json_object_set_new(wj, "axes", axes);
    json_object_set_new(wj, "correct", json_boolean(w->ran && w->correct));
    json_object_set_new(wj, "max_abs_err", num(w->max_abs_err));
    json_object_set_new(wj, "max_rel_err", num(w->max_rel_err));
    json_object_set_new(wj, "time_ns_median", num(w->time_ns_median));
    json_object_set_new(wj, "time_ns_min", num(w->time_ns_min));
    json_object_set_new(wj, "time_ns_iqr", num(w->time_ns_iqr));
    json_object_set_new(wj, "reps", json_integer(w->reps));
    if (w->ref_time_ns_median > 0) { /* the reference is untimed on GPUs */
      json_object_set_new(wj, "reference_time_ns_median",
                          num(w->ref_time_ns_median));
      json_object_set_new(wj, "reference_time_ns_min", num(w->ref_time_ns_min));
      json_object_set_new(wj, "speedup", num(w->speedup));
    }
    /* timed beside the candidate in this evaluation, or once per run */
    json_object_set_new(wj, "anchor_reps", json_integer(w->anchor_reps));
    /* --beside: that candidate's time over this one's on this workload,
     * the per-workload term of the top-level beside_ratio */
    if (r->beside_ratio > 0) {
      double t = r->device_class == KS_DEV_GPU && w->device_ns_min > 0
                     ? w->device_ns_min
                     : w->time_ns_min;
      if (t > 0 && w->anchor_ns_min > 0)
        json_object_set_new(wj, "beside_ratio", num(w->anchor_ns_min / t));
    }
    json_object_set_new(wj, "gbps", num(w->gbps));
    json_object_set_new(wj, "gflops", num(w->gflops));
    json_object_set_new(wj, "roofline_fraction", num(w->roofline_fraction));
    json_object_set_new(wj, "ceiling_gbps", num(w->ceiling_gbps));
    json_object_set_new(wj, "ceiling",
                        json_string(w->ceiling_probed ? "probe" : "cached"));
    json_object_set_new(wj, "ceiling_kind",
                        json_string(w->ceiling_compute ? "compute" : "memory"));
    json_object_set_new(wj, "probe_gbps", num(w->probe_gbps));
    json_object_set_new(wj, "probe_gflops", num(w->probe_gflops));
    json_object_set_new(wj, "ceiling_gflops", num(w->ceiling_gflops));
    json_object_set_new(wj, "probe_pairs", json_integer(w->probe_pairs));
    json_object_set_new(wj, "probe_drift", num(w->probe_drift));
    json_object_set_new(wj, "judge_window_ns_min", num(w->window_ns_min));
    json_object_set_new(wj, "clock_verified", json_boolean(w->clock_verified));
    if (w->speedup_capped)
      json_object_set_new(wj, "speedup_capped", json_true());
    json_object_set_new(wj, "index", json_integer(i));
    if (w->device_ns_min > 0) {
      json_object_set_new(wj, "device_time_ns_median",
                          num(w->device_ns_median));
      json_object_set_new(wj, "device_time_ns_min", num(w->device_ns_min));
    }
    if (w->baseline_ns_min > 0) {
      json_object_set_new(wj, "baseline_time_ns_min", num(w->baseline_ns_min));
      json_object_set_new(wj, "baseline_speedup", num(w->baseline_speedup));
    }
    if (w->reason[0])
      json_object_set_new(wj, "reason", json_string(w->reason));
    json_array_append_new(arr, wj);
  }
  json_object_set_new(o, "workloads", arr);
  json_object_set_new(o, "error", json_string(r->error));
  json_object_set_new(o, "threads", json_integer(r->threads));
  json_object_set_new(o, "build_cached", json_boolean(r->build_cached));
  json_object_set_new(o, "build_s", num(r->build_s));
  json_object_set_new(o, "run_s", num(r->run_s));
  json_t *ph = json_object();
  for (int i = 0; i < KS_JUDGE_PHASES; i++)
    json_object_set_new(ph, ks_judge_phase_names[i], num(r->phase_s[i]));
  json_object_set_new(o, "phases_s", ph);
  return o;
}
