/* analysis.c — see analysis.h. A workload is latency-bound when it moves
 * less than 1 MiB (its run time is dominated by fixed costs: thread start,
 * a single row), else memory-bound when its intensity is under the machine
 * balance, else compute-bound. */
#include "search/analysis.h"
#include "backend/backend.h"
#include "util/util.h"

#include <string.h>

void ks_analyze(const ks_task *task, const ks_roofline *roof,
                const double *ref_time_ns, ks_analysis *a) {
  memset(a, 0, sizeof *a);
  a->balance = roof && roof->bandwidth_gbps > 0
                   ? roof->peak_gflops / roof->bandwidth_gbps
                   : 10;
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "class: %s\nstatement: %s\n", task->klass,
                task->description);
  ks_buf_printf(&b, "cost model: bytes = %s; flops = %s\n",
                task->cost_bytes_src[0] ? task->cost_bytes_src : "?",
                task->cost_flops_src[0] ? task->cost_flops_src : "?");
  if (roof)
    ks_buf_printf(&b,
                  "machine: %.1f GB/s, %.1f GFLOP/s, balance %.1f flop/byte "
                  "(%d threads)\n",
                  roof->bandwidth_gbps, roof->peak_gflops, a->balance,
                  roof->threads);
  a->native_vec = roof ? roof->vector_floats : 0;
  if (a->native_vec)
    ks_buf_printf(&b, "native vector: %d floats (%s)\n", a->native_vec,
                  roof->isa);
  double biggest = -1;
  int counts[KS_REGIME_COUNT] = {0};
  /* only the workloads the target's device class runs ("device" key) */
  ks_device_class dc =
      roof ? ks_backend_device_class(ks_backend_get(roof->backend))
           : KS_DEV_ANY;
  for (int i = 0; i < task->n_workloads; i++) {
    const ks_workload *w = &task->workloads[i];
    if (!ks_workload_applies(w, dc))
      continue;
    double bytes = ks_task_cost_bytes(task, w),
           flops = ks_task_cost_flops(task, w);
    a->intensity[i] = bytes > 0 ? flops / bytes : 0;
    a->regime[i] = bytes < (1 << 20)              ? KS_REGIME_LATENCY
                   : a->intensity[i] < a->balance ? KS_REGIME_MEMORY
                                                  : KS_REGIME_COMPUTE;
    counts[a->regime[i]]++;
    if (bytes > biggest) {
      biggest = bytes;
      a->main_regime = a->regime[i];
    }
    char wl[256];
    ks_workload_format(task, w, wl, sizeof wl);
    double floor_us =
        roof && roof->bandwidth_gbps > 0
            ? 1e-3 * (bytes / roof->bandwidth_gbps > flops / roof->peak_gflops
                          ? bytes / roof->bandwidth_gbps
                          : flops / roof->peak_gflops)
            : 0;
    ks_buf_printf(&b,
                  "workload %s: %.2f MiB, intensity %.2f flop/byte -> %s-bound"
                  "; roofline floor %.1f us, reference %.1f us\n",
                  wl, bytes / (1 << 20), a->intensity[i],
                  ks_regime_name(a->regime[i]), floor_us,
                  ref_time_ns ? ref_time_ns[i] / 1e3 : 0);
  }
  ks_buf_printf(&b,
                "bottleneck: %s-bound on the largest workload (%d memory, %d "
                "compute, %d latency); %s first\n",
                ks_regime_name(a->main_regime), counts[0], counts[1], counts[2],
                a->main_regime == KS_REGIME_MEMORY
                    ? "vectorization and fewer passes over memory"
                : a->main_regime == KS_REGIME_COMPUTE
                    ? "vectorization and more independent accumulators"
                    : "less per-call overhead (scheduling, blocking)");
  ks_strlcpy(a->text, b.data, sizeof a->text);
  ks_buf_free(&b);
}
