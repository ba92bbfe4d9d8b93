/* test_task.c — loading valid tasks (src/task/task.c): axes, workloads,
 * scalars, cost model, tolerances, the built-in tasks, the task hash.
 * Malformed tasks: test_task_bad.c; derived axes and randint bounds:
 * test_task_derived.c; element types: test_dtype.c. Fixture:
 * task_fixture.h (a temporary folder holding a reference.c, so nothing
 * depends on the current directory). */
#include "llm/context.h"
#include "task/expr.h"
#include "task/inputs.h"
#include "task_fixture.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- valid */

Test(task, minimal_fixture_loads) {
  ks_task t;
  tt_load_ok(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF TT_WL, &t);
  cr_expect_str_eq(t.name, "t1");
  cr_expect_str_eq(t.klass, "row_reduction");
  cr_expect_str_eq(t.dir, tt_dir);
  cr_expect_str_eq(t.json_path, tt_json);
  cr_expect(strstr(t.reference_path, "reference.c") != NULL);
  cr_expect_eq(t.n_axes, 2);
  cr_expect_eq(t.n_inputs, 1);
  cr_expect_eq(t.n_outputs, 1);
  cr_expect_eq(t.n_scalars, 0);
  cr_expect_eq(t.n_workloads, 1);
  cr_expect_eq(t.inputs[0].init.kind, KS_INIT_NORMAL, "default init normal");
  cr_expect_float_eq(t.inputs[0].init.b, 1.0, 0);
  cr_expect_null(t.cost_bytes);
  cr_expect_float_eq(ks_task_cost_bytes(&t, &t.workloads[0]), 0, 0,
                     "no cost model: 0");
  ks_task_free(&t);
}

Test(task, workloads_const_axes_scalars) {
  ks_task t;
  tt_load_ok(TT_HEAD
             "'description': 'demo', "
             "'axes': {'batch': {'type': 'var'}, 'dstate': {'type': 'const', "
             "'value': 16}, 'seqlen': {'type': 'var'}}, "
             "'scalars': {'eps': {'dtype': 'float32', 'value': 1e-6}, "
             "'flag': {'dtype': 'int32', 'value': 1}, "
             "'big': {'dtype': 'int64', 'value': 123456789012}}, "
             "'inputs': {'u': {'shape': ['batch', 'seqlen'], 'dtype': "
             "'float32', 'init': 'uniform(-2.5, 0.5)'}, "
             "'A': {'shape': ['seqlen', 'dstate'], 'dtype': 'bfloat16', "
             "'init': 'normal(1,2)'}, "
             "'idx': {'shape': ['seqlen'], 'dtype': 'int32', 'init': "
             "'randint(0,9)'}, "
             "'p': {'shape': ['seqlen'], 'dtype': 'int64', 'init': "
             "'permutation'}, "
             "'q': {'shape': ['batch'], 'dtype': 'float16', 'init': "
             "'positive'}}, "
             "'outputs': {'out': {'shape': ['batch', 'dstate', 'seqlen'], "
             "'dtype': 'float32'}}, " TT_REF
             "'workloads': [{'batch': 2, 'seqlen': 100}, "
             "{'batch': 1, 'seqlen': 4097, 'dstate': 16}]}",
             &t);
  cr_expect_str_eq(t.description, "demo");
  cr_assert_eq(t.n_axes, 3);
  int b = ks_task_axis_index(&t, "batch"), d = ks_task_axis_index(&t, "dstate"),
      s = ks_task_axis_index(&t, "seqlen");
  cr_assert(b >= 0 && d >= 0 && s >= 0);
  cr_expect_eq(ks_task_axis_index(&t, "nope"), -1);
  cr_expect(t.axes[d].is_const);
  cr_expect_eq(t.axes[d].value, 16);
  cr_expect(!t.axes[b].is_const);
  cr_assert_eq(t.n_workloads, 2);
  cr_expect_eq(t.workloads[0].axis[b], 2);
  cr_expect_eq(t.workloads[0].axis[s], 100);
  cr_expect_eq(t.workloads[0].axis[d], 16, "const filled in");
  cr_expect_eq(t.workloads[1].axis[b], 1);
  cr_expect_eq(t.workloads[1].axis[s], 4097);
  cr_expect_eq(t.workloads[1].axis[d], 16);

  cr_assert_eq(t.n_scalars, 3);
  for (int i = 0; i < 3; i++) {
    if (!strcmp(t.scalars[i].name, "eps")) {
      cr_expect_eq(t.scalars[i].dtype, KS_F32);
      cr_expect_float_eq(t.scalars[i].value, 1e-6, 1e-20);
    } else if (!strcmp(t.scalars[i].name, "flag")) {
      cr_expect_eq(t.scalars[i].dtype, KS_I32);
      cr_expect_float_eq(t.scalars[i].value, 1, 0);
    } else {
      cr_expect_str_eq(t.scalars[i].name, "big");
      cr_expect_eq(t.scalars[i].dtype, KS_I64);
      cr_expect_float_eq(t.scalars[i].value, 123456789012.0, 0);
    }
  }

  cr_assert_eq(t.n_inputs, 5);
  for (int i = 0; i < t.n_inputs; i++) {
    const ks_tensor *x = &t.inputs[i];
    if (!strcmp(x->name, "u")) {
      cr_expect_eq(x->dtype, KS_F32);
      cr_expect_eq(x->rank, 2);
      cr_expect_eq(x->dims[0], b);
      cr_expect_eq(x->dims[1], s);
      cr_expect_eq(x->init.kind, KS_INIT_UNIFORM);
      cr_expect_float_eq(x->init.a, -2.5, 0);
      cr_expect_float_eq(x->init.b, 0.5, 0);
    } else if (!strcmp(x->name, "A")) {
      cr_expect_eq(x->dtype, KS_BF16);
      cr_expect_eq(x->init.kind, KS_INIT_NORMAL);
      cr_expect_float_eq(x->init.a, 1, 0);
      cr_expect_float_eq(x->init.b, 2, 0);
    } else if (!strcmp(x->name, "idx")) {
      cr_expect_eq(x->dtype, KS_I32);
      cr_expect_eq(x->init.kind, KS_INIT_RANDINT);
      cr_expect_float_eq(x->init.a, 0, 0);
      cr_expect_float_eq(x->init.b, 9, 0);
    } else if (!strcmp(x->name, "p")) {
      cr_expect_eq(x->dtype, KS_I64);
      cr_expect_eq(x->init.kind, KS_INIT_PERMUTATION);
    } else {
      cr_expect_str_eq(x->name, "q");
      cr_expect_eq(x->dtype, KS_F16);
      cr_expect_eq(x->init.kind, KS_INIT_POSITIVE);
    }
  }
  cr_assert_eq(t.n_outputs, 1);
  const ks_tensor *o = &t.outputs[0];
  cr_expect_eq(o->rank, 3);
  cr_expect_eq(ks_tensor_numel(&t, o, &t.workloads[0]), 2 * 16 * 100);
  cr_expect_eq(ks_tensor_numel(&t, o, &t.workloads[1]), 1 * 16 * 4097);

  char buf[128];
  ks_workload_format(&t, &t.workloads[0], buf, sizeof buf);
  cr_expect_str_eq(buf, "batch=2 seqlen=100", "const axes left out");
  ks_task_free(&t);
}

Test(task, cost_model_and_format) {
  ks_task t;
  tt_load_ok(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
             "'cost': {'bytes': '4*(2*rows*cols + cols)', "
             "'flops': 'cdiv(rows, 2) * cols'}, "
             "'workloads': [{'rows': 4096, 'cols': 1000}, "
             "{'rows': 333, 'cols': 7}]}",
             &t);
  cr_assert_not_null(t.cost_bytes);
  cr_assert_not_null(t.cost_flops);
  cr_expect_str_eq(t.cost_bytes_src, "4*(2*rows*cols + cols)");
  cr_expect_str_eq(t.cost_flops_src, "cdiv(rows, 2) * cols");
  ks_workload *w = &t.workloads[0];
  cr_expect_float_eq(ks_task_cost_bytes(&t, w),
                     4.0 * (2.0 * 4096 * 1000 + 1000), 0);
  cr_expect_float_eq(ks_task_cost_flops(&t, w), 2048.0 * 1000, 0);
  cr_expect_float_eq(ks_task_cost_flops(&t, &t.workloads[1]), 167.0 * 7, 0);
  int r = ks_task_axis_index(&t, "rows"), c = ks_task_axis_index(&t, "cols");
  cr_expect_eq(ks_tensor_numel(&t, &t.inputs[0], w), 4096 * 1000);

  char buf[64];
  ks_workload_format(&t, w, buf, sizeof buf);
  char want[64];
  /* axes keep their declared order */
  snprintf(want, sizeof want,
           r < c ? "rows=4096 cols=1000" : "cols=1000 rows=4096");
  cr_expect_str_eq(buf, want);
  ks_workload_format(&t, &t.workloads[1], buf, sizeof buf);
  cr_expect(strstr(buf, "rows=333") && strstr(buf, "cols=7"), "%s", buf);
  char small[8];
  ks_workload_format(&t, w, small, sizeof small);
  cr_expect(strlen(small) < sizeof small, "truncated, terminated");
  ks_task_free(&t);
}

/* issue 13: a cost that is not finite and positive on a workload used to
 * load and read as "no cost" (GB/s and roofline fraction 0) */
Test(task, bad_cost_not_finite_and_positive) {
  static const char *const bad[] = {"1/0",     "rows%0",     "rows/(cols-cols)",
                                    "log2(0)", "sqrt(-1)",   "1e999",
                                    "0-1",     "rows - cols"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char q[512];
    snprintf(q, sizeof q,
             TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
             "'cost': {'bytes': '%s'}, " TT_WL,
             bad[i]);
    tt_bad(q, "cost.bytes", bad[i], "workloads[0]", "rows=4", "cols=8",
           "finite and positive", NULL);
  }
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'cost': {'flops': 'rows-4'}, "
         "'workloads': [{'rows': 8, 'cols': 8}, {'rows': 4, 'cols': 8}]}",
         "cost.flops", "workloads[1]", NULL);
}

Test(task, default_tolerances) {
  ks_task t;
  tt_load_ok(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF TT_WL, &t);
  ks_tolerance f32 = ks_task_tolerance(&t, KS_F32);
  cr_expect_float_eq(f32.atol, 1e-5, 1e-20);
  cr_expect_float_eq(f32.rtol, 1e-5, 1e-20);
  ks_tolerance f16 = ks_task_tolerance(&t, KS_F16);
  cr_expect_float_eq(f16.atol, 1e-3, 1e-20);
  cr_expect_float_eq(f16.rtol, 1e-3, 1e-20);
  ks_tolerance bf = ks_task_tolerance(&t, KS_BF16);
  cr_expect_float_eq(bf.atol, 1e-2, 1e-20);
  cr_expect_float_eq(bf.rtol, 1e-2, 1e-20);
  ks_tolerance i32 = ks_task_tolerance(&t, KS_I32);
  cr_expect_eq(i32.atol, 0);
  cr_expect_eq(i32.rtol, 0);
  ks_task_free(&t);
}

Test(task, task_tolerance_overrides_default) {
  ks_task t;
  tt_load_ok(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
             "'tolerance': {'float32': {'atol': 2e-5, 'rtol': 1e-4}, "
             "'int32': {'atol': 1, 'rtol': 0}}, " TT_WL,
             &t);
  ks_tolerance f32 = ks_task_tolerance(&t, KS_F32);
  cr_expect_float_eq(f32.atol, 2e-5, 1e-20);
  cr_expect_float_eq(f32.rtol, 1e-4, 1e-20);
  cr_expect_float_eq(ks_task_tolerance(&t, KS_I32).atol, 1, 0);
  cr_expect_float_eq(ks_task_tolerance(&t, KS_F16).atol, 1e-3, 1e-20,
                     "others keep the default");
  ks_task_free(&t);
}

Test(task, builtin_tasks_load) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tasks", tt_src());
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s; set KSEARCH_SRC to the repo root",
                     dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    char path[1400];
    snprintf(path, sizeof path, "%s/%s/task.json", dir, e->d_name);
    if (!ks_file_exists(path))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ks_task t;
    ks_err err = {0};
    cr_expect_eq(ks_task_load(path, &t, &err), KS_OK, "%s: %s", e->d_name,
                 err.msg);
    if (err.code)
      continue;
    n++;
    cr_expect_str_eq(t.name, e->d_name, "folder and task name agree");
    cr_expect_neq(t.hash, 0);
    cr_expect(t.n_workloads >= 1);
    cr_expect_not_null(t.cost_bytes, "%s has a cost model", t.name);
    for (int w = 0; w < t.n_workloads; w++)
      cr_expect(ks_task_cost_bytes(&t, &t.workloads[w]) > 0, "%s", t.name);
    ks_task_free(&t);
  }
  closedir(d);
  cr_expect(n >= 4, "found %d built-in tasks in %s", n, dir);
}

Test(task, builtin_rmsnorm_by_path_name_and_json) {
  char dir[1024], json[1100];
  snprintf(dir, sizeof dir, "%s/tasks/rmsnorm", tt_src());
  snprintf(json, sizeof json, "%s/task.json", dir);
  ks_task a, b, c;
  ks_err err = {0};
  cr_assert_eq(ks_task_load(dir, &a, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_task_load(json, &b, &err), KS_OK, "%s", err.msg);
  char tasks[1024];
  snprintf(tasks, sizeof tasks, "%s/tasks", tt_src());
  setenv("KSEARCH_TASKS_DIR", tasks, 1); /* each test runs in its own process */
  cr_assert_eq(ks_task_load("rmsnorm", &c, &err), KS_OK, "%s", err.msg);
  cr_expect_eq(a.hash, b.hash);
  cr_expect_eq(a.hash, c.hash);
  cr_expect_eq(a.n_workloads, 8); /* 6 for every backend, 2 GPU-sized */
  cr_expect_eq(a.workloads[5].device, KS_DEV_ANY);
  cr_expect_eq(a.workloads[6].device, KS_DEV_GPU);
  cr_expect(!ks_workload_applies(&a.workloads[6], KS_DEV_CPU));
  cr_expect(ks_workload_applies(&a.workloads[6], KS_DEV_GPU));
  cr_expect(ks_workload_applies(&a.workloads[0], KS_DEV_CPU));
  int r = ks_task_axis_index(&a, "rows"), co = ks_task_axis_index(&a, "cols");
  cr_expect_eq(a.workloads[0].axis[r], 1024);
  cr_expect_eq(a.workloads[0].axis[co], 8192);
  cr_expect_float_eq(ks_task_cost_bytes(&a, &a.workloads[0]),
                     4.0 * (2.0 * 1024 * 8192 + 8192), 0);
  cr_expect_float_eq(ks_task_cost_flops(&a, &a.workloads[0]), 4.0 * 1024 * 8192,
                     0);
  cr_expect_eq(a.n_scalars, 1);
  cr_expect_str_eq(a.scalars[0].name, "eps");
  cr_expect_float_eq(a.scalars[0].value, 1e-6, 1e-20);
  ks_task_free(&a);
  ks_task_free(&b);
  ks_task_free(&c);
}

Test(task, load_missing_things) {
  ks_task t;
  ks_err err = {0};
  cr_expect_eq(ks_task_load("/nonexistent/ks/task", &t, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "/nonexistent/ks/task") != NULL, "%s", err.msg);
  setenv("KSEARCH_TASKS_DIR", tt_dir, 1);
  cr_expect_eq(ks_task_load("no_such_builtin_ks", &t, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "no_such_builtin_ks") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "ksearch tasks") != NULL, "%s", err.msg);
  /* a folder without task.json */
  char sub[700];
  snprintf(sub, sizeof sub, "%s/empty", tt_dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  cr_expect_eq(ks_task_load(sub, &t, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "task.json") != NULL, "%s", err.msg);
}

Test(task, hash_covers_reference) {
  char *s = tt_quote(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF TT_WL);
  FILE *f = fopen(tt_json, "w");
  cr_assert_not_null(f);
  fputs(s, f);
  fclose(f);
  free(s);
  ks_task a, b;
  ks_err err = {0};
  cr_assert_eq(ks_task_load(tt_dir, &a, &err), KS_OK, "%s", err.msg);
  char ref[700];
  snprintf(ref, sizeof ref, "%s/reference.c", tt_dir);
  f = fopen(ref, "a");
  fputs("/* changed */\n", f);
  fclose(f);
  cr_assert_eq(ks_task_load(tt_dir, &b, &err), KS_OK, "%s", err.msg);
  cr_expect_neq(a.hash, b.hash);
  ks_task_free(&a);
  ks_task_free(&b);
}
