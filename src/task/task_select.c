/* task_select.c — `--workloads SPEC` (eval, run): keeps the workloads of a
 * loaded task that SPEC names and drops the rest, before anything else sees
 * the task (DESIGN.md: Task, "Choosing workloads"). SPEC is a comma list;
 * each item is a workload index as `ksearch tasks` numbers them, or
 * AXIS=V[+AXIS=V...] matching every workload with those axis values. A
 * workload stays when any item matches it. Reference outputs are cached by
 * a workload's axes, not its index, so a selection shares them with full
 * runs. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* Whether `item` (an index or AXIS=V+AXIS=V) names workload wi. */
static ks_code item_matches(const ks_task *t, const char *item, int wi,
                            bool *hit, ks_err *err) {
  char *end;
  long idx = strtol(item, &end, 10);
  if (end != item && !*end) {
    if (idx < 0 || idx >= t->n_workloads)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--workloads: %s: task %s has workloads 0..%d "
                        "(`ksearch tasks` lists them)",
                        item, t->name, t->n_workloads - 1);
    *hit = idx == wi;
    return KS_OK;
  }
  *hit = true;
  char buf[256];
  ks_strlcpy(buf, item, sizeof buf);
  for (char *save = NULL, *pair = strtok_r(buf, "+", &save); pair;
       pair = strtok_r(NULL, "+", &save)) {
    char *eq = strchr(pair, '=');
    if (!eq)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--workloads: %s: expected an index or AXIS=VALUE "
                        "(several joined with +)",
                        pair);
    *eq = 0;
    int a = ks_task_axis_index(t, pair);
    if (a < 0)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--workloads: task %s has no axis %s", t->name, pair);
    long long v = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || *end)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--workloads: %s=%s: the value must be an integer",
                        pair, eq + 1);
    if (t->workloads[wi].axis[a] != v)
      *hit = false;
  }
  return KS_OK;
}

ks_code ks_task_select_workloads(ks_task *t, const char *spec, ks_err *err) {
  if (!spec || !*spec)
    return ks_err_set(err, KS_ERR_INPUT, "--workloads: empty selection");
  bool keep[KS_MAX_WORKLOADS] = {0};
  char buf[1024];
  if (strlen(spec) >= sizeof buf)
    return ks_err_set(err, KS_ERR_INPUT, "--workloads: longer than %zu",
                      sizeof buf - 1);
  ks_strlcpy(buf, spec, sizeof buf);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    bool any = false;
    for (int wi = 0; wi < t->n_workloads; wi++) {
      bool hit = false;
      ks_code rc = item_matches(t, item, wi, &hit, err);
      if (rc)
        return rc;
      keep[wi] |= hit;
      any |= hit;
    }
    if (!any)
      return ks_err_set(err, KS_ERR_INPUT,
                        "--workloads: %s matches no workload of %s "
                        "(`ksearch tasks` lists them)",
                        item, t->name);
  }
  int n = 0;
  for (int wi = 0; wi < t->n_workloads; wi++)
    if (keep[wi])
      t->workloads[n++] = t->workloads[wi];
  t->n_workloads = n;
  return KS_OK;
}
