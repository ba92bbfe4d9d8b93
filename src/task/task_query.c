/* task_query.c — what a loaded, validated task answers (ksearch.h; DESIGN.md:
 * Task): init bounds of a workload, tensor sizes, the cost model's bytes and
 * FLOPs (0 when not finite and positive), which workloads a device class
 * runs, a workload as text, and tolerances with their per-dtype defaults. */
#include "task/expr.h"

#include <math.h>
#include <stdio.h>

ks_init ks_init_bounds(const ks_task *task, const ks_init *in,
                       const ks_workload *w) {
  ks_init r = *in;
  if (!in->a_expr)
    return r;
  double vals[KS_MAX_AXES];
  for (int i = 0; i < task->n_axes; i++)
    vals[i] = (double)w->axis[i];
  r.a = ceil(ks_expr_eval(in->a_expr, vals));
  r.b = floor(ks_expr_eval(in->b_expr, vals));
  r.a_expr = r.b_expr = NULL;
  return r;
}

int64_t ks_tensor_numel(const ks_task *task, const ks_tensor *t,
                        const ks_workload *w) {
  (void)task;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    n *= w->axis[t->dims[i]];
  return n;
}

static double cost(const ks_task *t, const ks_expr *e, const ks_workload *w) {
  if (!e)
    return 0;
  double vals[KS_MAX_AXES];
  for (int i = 0; i < t->n_axes; i++)
    vals[i] = (double)w->axis[i];
  double v = ks_expr_eval(e, vals);
  return isfinite(v) && v > 0 ? v : 0;
}

bool ks_workload_applies(const ks_workload *w, ks_device_class dc) {
  return w->device == KS_DEV_ANY || dc == KS_DEV_ANY || w->device == dc;
}

double ks_task_cost_bytes(const ks_task *task, const ks_workload *w) {
  return cost(task, task->cost_bytes, w);
}
double ks_task_cost_flops(const ks_task *task, const ks_workload *w) {
  return cost(task, task->cost_flops, w);
}

void ks_workload_format(const ks_task *task, const ks_workload *w, char *buf,
                        size_t n) {
  size_t off = 0;
  buf[0] = 0;
  for (int i = 0; i < task->n_axes && off < n; i++) {
    if (task->axes[i].is_const)
      continue;
    int k = snprintf(buf + off, n - off, "%s%s=%lld", off ? " " : "",
                     task->axes[i].name, (long long)w->axis[i]);
    if (k < 0)
      break;
    off += (size_t)k;
  }
}

ks_tolerance ks_task_tolerance(const ks_task *task, ks_dtype t) {
  if (task->tol_set[t])
    return task->tol[t];
  switch (t) {
  case KS_F32: return (ks_tolerance){1e-5, 1e-5};
  case KS_F16: return (ks_tolerance){1e-3, 1e-3};
  case KS_BF16: return (ks_tolerance){1e-2, 1e-2};
  default: return (ks_tolerance){0, 0};
  }
}
