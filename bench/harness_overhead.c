/* harness_overhead.c — issue benchmark: the evaluation harness's own cost.
 *
 * Evaluates one candidate twice on a small task in one process. The second
 * evaluation must reuse the build (no rebuild); its harness overhead is the
 * runner's wall time minus the candidate's own run time (every call it made:
 * seeds, warm-up and timed repetitions, at their median). Prints ratios and
 * milliseconds from this one run; not a unit test. */
#include "eval/eval.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const char *task_dir = argc > 1 ? argv[1] : "tests/timing/softmax_small";
  const char *kernel = argc > 2 ? argv[2] : "tests/timing/softmax_vector.c";
  ks_err err;
  ks_task task;
  if (ks_task_load(task_dir, &task, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  ks_eval_opts o;
  ks_eval_opts_default(&o);
  o.threads = 1;
  o.topt.min_time_s = 0;
  o.topt.min_reps = 10;
  o.topt.flush = false;
  o.quiet = true;
  ks_evaluator *ev;
  if (ks_evaluator_new(&task, &o, &ev, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 3;
  }
  ks_candidate c;
  if (ks_candidate_load(kernel, task.name, &c, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  double worst = 0;
  for (int round = 0; round < 4; round++) {
    ks_eval_result r;
    double t0 = ks_now();
    if (ks_evaluate(ev, &c, &r, &err) || !r.correct) {
      fprintf(stderr, "evaluation failed: %s %s\n", err.msg, r.error);
      return 1;
    }
    double total = ks_now() - t0, own = 0, anchor = 0;
    for (int i = 0; i < r.n_workloads; i++) {
      own += (o.n_seeds + r.wl[i].reps) * r.wl[i].time_ns_median * 1e-9;
      /* the reference timed beside the candidate is measurement work too */
      anchor += r.wl[i].anchor_reps * r.wl[i].ref_time_ns_median * 1e-9;
    }
    double overhead = total - own - anchor - r.build_s;
    printf("round %d: build %s (%.0f ms), evaluation %.0f ms, kernel's own "
           "run time %.0f ms, the reference's beside it %.0f ms, harness "
           "overhead %.0f ms\n",
           round, r.build_cached ? "reused" : "compiled", r.build_s * 1e3,
           total * 1e3, own * 1e3, anchor * 1e3, overhead * 1e3);
    if (round > 0 && !r.build_cached) {
      printf("FAIL: an already-built candidate was rebuilt\n");
      return 1;
    }
    if (round > 0 && overhead > worst)
      worst = overhead;
    ks_eval_result_free(&r);
  }
  printf("harness overhead (worst of rounds 1-3, build reused): %.0f ms "
         "(goal <= 150 ms): %s\n",
         worst * 1e3, worst <= 0.150 ? "met" : "NOT met");
  ks_candidate_free(&c);
  ks_evaluator_free(ev);
  ks_task_free(&task);
  return 0;
}
