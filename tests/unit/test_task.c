/* test_task.c — task.json loading and validation (src/task/task.c) and
 * element types (src/task/dtype.c). Every malformed task must be rejected as
 * bad input (exit code 2) with a message naming the file, the JSON path and
 * the fix; the built-in tasks must load; half-precision conversions must
 * round to nearest even and keep NaN, infinities and subnormals.
 *
 * Fixture tasks are written inline with single quotes (turned into double
 * quotes before parsing) and loaded from a temporary folder that holds a
 * reference.c, so nothing depends on the current directory. */
#include "llm/context.h"
#include "task/expr.h"
#include "task/inputs.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- fixture */

static char tt_dir[512];
static char tt_json[600];

static void tt_setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tt_dir, sizeof tt_dir, "%s/ks_task_XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tt_dir));
  snprintf(tt_json, sizeof tt_json, "%s/task.json", tt_dir);
  char ref[700];
  snprintf(ref, sizeof ref, "%s/reference.c", tt_dir);
  FILE *f = fopen(ref, "w");
  cr_assert_not_null(f);
  fputs("void t1(void) {}\n", f);
  fclose(f);
}

static void tt_teardown(void) { ks_rm_rf(tt_dir); }

/* Converts ' to " so fixtures read as JSON without escapes. */
static char *tt_quote(const char *q) {
  char *s = ks_strdup(q);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  return s;
}

static ks_code tt_load(const char *q, ks_task *t, ks_err *err) {
  char *s = tt_quote(q);
  memset(err, 0, sizeof *err);
  ks_code rc = ks_task_load_json(s, tt_json, t, err);
  free(s);
  return rc;
}

static void tt_load_ok(const char *q, ks_task *t) {
  ks_err err;
  cr_assert_eq(tt_load(q, t, &err), KS_OK, "%s", err.msg);
}

/* Asserts bad input (exit 2), the file named, and every NULL-terminated
 * substring present. */
static void tt_bad(const char *q, ...) {
  ks_task t;
  ks_err err;
  ks_code rc = tt_load(q, &t, &err);
  cr_assert_eq(rc, KS_ERR_INPUT, "want bad input, got %d: %s", rc, err.msg);
  cr_assert_eq(err.code, KS_ERR_INPUT);
  cr_assert_eq(ks_exit_code(rc), 2);
  cr_assert(strstr(err.msg, tt_json) != NULL, "message names the file: %s",
            err.msg);
  cr_assert_null(t.cost_bytes, "freed on failure");
  cr_assert_null(t.cost_flops, "freed on failure");
  va_list ap;
  va_start(ap, q);
  for (const char *want; (want = va_arg(ap, const char *));)
    cr_assert(strstr(err.msg, want) != NULL, "want \"%s\" in: %s", want,
              err.msg);
  va_end(ap);
}

/* A small valid task; tests below vary one part of it. */
#define TT_HEAD "{'name': 't1', 'class': 'row_reduction', "
#define TT_AXES "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'var'}}, "
#define TT_IN                                                                  \
  "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
#define TT_OUT                                                                 \
  "'outputs': {'y': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
#define TT_REF "'reference': 'reference.c', "
#define TT_WL "'workloads': [{'rows': 4, 'cols': 8}]}"

TestSuite(task, .init = tt_setup, .fini = tt_teardown);

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

static const char *tt_src(void) {
  const char *s = getenv("KSEARCH_SRC");
  return s && *s ? s : ".";
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

/* ---------------------------------------------------------------- malformed */

Test(task, bad_invalid_json) {
  tt_bad("{'name': 't1',\n 'class': }", "line 2", "column", "invalid JSON",
         "fix the JSON", NULL);
}

Test(task, bad_duplicate_json_keys) {
  tt_bad("{'name': 't1',\n 'name': 't2'}", "line 2", "duplicate",
         "each key once", NULL);
}

Test(task, bad_top_level_not_object) {
  tt_bad("[1, 2]", "top level", "object", NULL);
}

Test(task, bad_unknown_axis_in_shape) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'colz'], 'dtype': 'float32'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.shape[1]", "colz", "declare it under \"axes\"", NULL);
}

Test(task, bad_workload_missing_axis) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8}, {'rows': 4}]}",
         "workloads[1]", "\"cols\"", "every var axis needs a size", NULL);
}

Test(task, bad_workload_unknown_axis) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8, 'batch': 2}]}",
         "workloads[0].batch", "unknown axis", "declared under \"axes\"", NULL);
}

Test(task, bad_unsupported_dtype) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float64'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.dtype", "float64", "use one of float32", NULL);
}

Test(task, bad_missing_dtype) {
  tt_bad(TT_HEAD TT_AXES TT_IN
         "'outputs': {'y': {'shape': ['rows', 'cols']}}, " TT_REF TT_WL,
         "outputs.y.dtype", "missing", "use one of", NULL);
}

Test(task, bad_missing_reference_file) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': 'ref_missing.c', " TT_WL,
         "reference", "ref_missing.c", "does not exist",
         "create it or fix the path", NULL);
}

Test(task, bad_missing_reference_key) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_WL, "reference: missing",
         "reference.c", NULL);
}

Test(task, bad_cost_syntax_error) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'cost': {'bytes': '4*(rows*cols'}, " TT_WL,
         "cost.bytes", "column", "4*(rows*cols",
         "write arithmetic over the axes", NULL);
}

Test(task, bad_cost_unknown_name) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'cost': {'bytes': '4*rows*cols', 'flops': '2*rows*colz'}, " TT_WL,
         "cost.flops", "'colz'", "column 8", "rows", "cols", "known", NULL);
}

Test(task, bad_cost_not_string) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF "'cost': {'bytes': 42}, " TT_WL,
         "cost.bytes", "string expression", NULL);
}

Test(task, bad_zero_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 0, 'cols': 8}]}",
         "workloads[0].rows", "positive integers", NULL);
}

Test(task, bad_negative_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8}, {'rows': 4, 'cols': -3}]}",
         "workloads[1].cols", "positive integers", NULL);
}

Test(task, bad_fractional_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4.5, 'cols': 8}]}",
         "workloads[0].rows", "positive integers", NULL);
}

Test(task, bad_workload_too_large) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 1000000, 'cols': 1000000}]}",
         "workloads[0]", "GiB", "use smaller sizes", NULL);
}

/* 2^32 * 2^32 elements wraps to 0 in int64 arithmetic; it must still be
 * rejected as too large. */
Test(task, bad_workload_size_overflow) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4294967296, 'cols': 4294967296}]}",
         "workloads[0]", "use smaller sizes", NULL);
}

Test(task, bad_workload_empty) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF "'workloads': []}", "workloads",
         "missing or empty", "e.g.", NULL);
}

Test(task, bad_const_axis_without_value) {
  tt_bad(TT_HEAD
         "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'const'}}, "
         "" TT_IN TT_OUT TT_REF "'workloads': [{'rows': 4}]}",
         "axes.cols.value", "const axis needs a positive integer value", NULL);
}

Test(task, bad_const_axis_in_workload_differs) {
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'var'}, 'cols': {'type': "
                 "'const', 'value': 8}}, " TT_IN TT_OUT TT_REF
                 "'workloads': [{'rows': 4, 'cols': 9}]}",
         "workloads[0].cols", "const axis is 8", "remove it", NULL);
}

Test(task, bad_axis_type) {
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'variable'}, 'cols': {'type': "
                 "'var'}}, " TT_IN TT_OUT TT_REF TT_WL,
         "axes.rows.type", "\"var\", \"const\" or \"derived\"", NULL);
}

Test(task, bad_duplicate_input_output_name) {
  tt_bad(TT_HEAD TT_AXES TT_IN
         "'outputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
         "" TT_REF TT_WL,
         "\"x\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_tensor_axis_name) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'rows': {'shape': ['rows', 'cols'], 'dtype': "
         "'float32'}}, " TT_OUT TT_REF TT_WL,
         "\"rows\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_scalar_axis_name) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'cols': {'dtype': 'float32', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "\"cols\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_scalar_output_name) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'y': {'dtype': 'int32', 'value': 1}}, "
                         "" TT_IN TT_OUT TT_REF TT_WL,
         "\"y\"", "used twice", "rename one", NULL);
}

Test(task, bad_init_string) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'gaussian'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "gaussian", "use one of normal", NULL);
}

Test(task, bad_init_trailing_text) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(0,1) extra'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "use one of", NULL);
}

Test(task, bad_init_not_string) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 3}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "string", NULL);
}

Test(task, bad_integer_tensor_normal_init) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'normal'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "integer tensor", "randint(a,b) or permutation",
         NULL);
}

Test(task, bad_integer_tensor_default_init) {
  /* no init means normal, which an integer tensor cannot hold */
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'uint8'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.init", "randint(a,b)", NULL);
}

Test(task, bad_uniform_reversed) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(1, -1)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "a > b", "smaller bound first", NULL);
}

Test(task, bad_randint_reversed) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int64', "
         "'init': 'randint(5,2)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "smaller bound first", NULL);
}

Test(task, bad_normal_nonpositive_std) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'normal(0, 0)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "positive standard deviation", NULL);
}

Test(task, bad_task_name_not_identifier) {
  tt_bad("{'name': 'my-task', 'class': 'x', " TT_AXES TT_IN TT_OUT TT_REF TT_WL,
         "name", "C identifier", "e.g. \"rmsnorm\"", NULL);
}

Test(task, bad_tensor_name_not_identifier) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'1x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.1x", "C identifiers", NULL);
}

Test(task, bad_axis_name_not_identifier) {
  tt_bad(TT_HEAD "'axes': {'my rows': {'type': 'var'}}, " TT_IN TT_OUT TT_REF
                 "" TT_WL,
         "axes.my rows", "C identifiers", NULL);
}

Test(task, bad_scalar_name_not_identifier) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'e-ps': {'dtype': 'float32', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.e-ps", "C identifiers", NULL);
}

Test(task, bad_scalar_dtype_and_value) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'eps': {'dtype': 'float16', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.eps.dtype", "float32, int32 or int64", NULL);
  tt_bad(TT_HEAD TT_AXES "'scalars': {'eps': {'dtype': 'float32'}}, " TT_IN
                         "" TT_OUT TT_REF TT_WL,
         "scalars.eps.value", "give a number", NULL);
}

Test(task, bad_missing_class_axes_inputs) {
  tt_bad("{'name': 't1', " TT_AXES TT_IN TT_OUT TT_REF TT_WL, "class",
         "e.g. \"row_reduction\"", NULL);
  tt_bad(TT_HEAD TT_IN TT_OUT TT_REF TT_WL, "axes", "missing or empty", NULL);
  tt_bad(TT_HEAD TT_AXES TT_OUT TT_REF TT_WL, "inputs", "missing or empty",
         NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_REF TT_WL, "outputs", "missing or empty",
         NULL);
}

Test(task, bad_shape_not_list) {
  tt_bad(TT_HEAD TT_AXES "'inputs': {'x': {'shape': 'rows', 'dtype': "
                         "'float32'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.shape", "list of axis names", NULL);
}

Test(task, bad_tolerance) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'tolerance': {'float32': {'atol': -1, 'rtol': 0}}, " TT_WL,
         "tolerance.float32", "non-negative", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'tolerance': {'fp32': {'atol': 1, 'rtol': 0}}, " TT_WL,
         "tolerance.fp32", "use float32", NULL);
}

/* ---------------------------------------------------------------- dtypes */

static uint16_t tt_h(ks_dtype t, double v) {
  uint16_t x = 0xdead;
  ks_dtype_store(t, &x, 0, v);
  return x;
}

static double tt_l(ks_dtype t, uint16_t bits) {
  return ks_dtype_load(t, &bits, 0);
}

Test(task, dtype_names_sizes_parse) {
  static const struct {
    const char *name, *ctype;
    size_t size;
    bool is_float;
  } want[KS_DTYPE_COUNT] = {
      [KS_F32] = {"float32", "float", 4, true},
      [KS_F16] = {"float16", "uint16_t", 2, true},
      [KS_BF16] = {"bfloat16", "uint16_t", 2, true},
      [KS_I32] = {"int32", "int32_t", 4, false},
      [KS_I64] = {"int64", "int64_t", 8, false},
      [KS_U8] = {"uint8", "uint8_t", 1, false},
  };
  for (int i = 0; i < KS_DTYPE_COUNT; i++) {
    ks_dtype t = (ks_dtype)i, back;
    cr_expect_str_eq(ks_dtype_name(t), want[i].name);
    cr_expect_str_eq(ks_dtype_ctype(t), want[i].ctype);
    cr_expect_eq(ks_dtype_size(t), want[i].size);
    cr_expect_eq(ks_dtype_is_float(t), want[i].is_float);
    cr_expect(ks_dtype_parse(want[i].name, &back));
    cr_expect_eq(back, t);
  }
  ks_dtype x;
  cr_expect(!ks_dtype_parse("float64", &x));
  cr_expect(!ks_dtype_parse("", &x));
  cr_expect(!ks_dtype_parse("Float32", &x));
}

Test(task, dtype_f16_exact_values) {
  cr_expect_eq(tt_h(KS_F16, 1.0), 0x3c00);
  cr_expect_eq(tt_h(KS_F16, -2.0), 0xc000);
  cr_expect_eq(tt_h(KS_F16, 0.0), 0x0000);
  cr_expect_eq(tt_h(KS_F16, -0.0), 0x8000);
  cr_expect_eq(tt_h(KS_F16, 65504.0), 0x7bff, "largest finite");
  cr_expect_eq(tt_h(KS_F16, 0.333251953125), 0x3555);
  cr_expect_float_eq(tt_l(KS_F16, 0x3c00), 1.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0xc000), -2.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x7bff), 65504.0, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x3555), 0.333251953125, 0);
}

Test(task, dtype_f16_rounding) {
  /* ties go to even, others to nearest */
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11)), 0x3c00, "tie to even down");
  cr_expect_eq(tt_h(KS_F16, 1.0 + 3 * ldexp(1, -11)), 0x3c02, "tie to even up");
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11) + ldexp(1, -20)), 0x3c01,
               "above the tie");
  cr_expect_eq(tt_h(KS_F16, 1.0 + ldexp(1, -11) - ldexp(1, -20)), 0x3c00,
               "below the tie");
  cr_expect_eq(tt_h(KS_F16, 2047.0 / 1024 + ldexp(1, -11)), 0x4000,
               "carry into the exponent");
  cr_expect_eq(tt_h(KS_F16, 65519.0), 0x7bff, "below the overflow tie");
  cr_expect_eq(tt_h(KS_F16, 65520.0), 0x7c00, "overflow tie rounds to inf");
  cr_expect_eq(tt_h(KS_F16, 1e6), 0x7c00);
  cr_expect_eq(tt_h(KS_F16, -1e6), 0xfc00);
  cr_expect_eq(tt_h(KS_F16, 0.1), 0x2e66);
}

Test(task, dtype_f16_subnormals) {
  double tiny = ldexp(1, -24); /* smallest subnormal */
  cr_expect_eq(tt_h(KS_F16, tiny), 0x0001);
  cr_expect_float_eq(tt_l(KS_F16, 0x0001), tiny, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x03ff), 1023 * tiny, 0);
  cr_expect_float_eq(tt_l(KS_F16, 0x8001), -tiny, 0);
  cr_expect_eq(tt_h(KS_F16, ldexp(1, -14)), 0x0400, "smallest normal");
  cr_expect_eq(tt_h(KS_F16, 1023 * tiny), 0x03ff);
  cr_expect_eq(tt_h(KS_F16, 0.5 * tiny), 0x0000, "tie to even (zero)");
  cr_expect_eq(tt_h(KS_F16, 0.75 * tiny), 0x0001);
  cr_expect_eq(tt_h(KS_F16, 1.5 * tiny), 0x0002, "tie to even (two)");
  cr_expect_eq(tt_h(KS_F16, 2.5 * tiny), 0x0002, "tie to even (two)");
  cr_expect_eq(tt_h(KS_F16, 1023.5 * tiny), 0x0400, "carry to normal");
  cr_expect_eq(tt_h(KS_F16, 0.25 * tiny), 0x0000, "underflow");
  cr_expect_eq(tt_h(KS_F16, -0.25 * tiny), 0x8000, "keeps the sign");
  cr_expect_eq(tt_h(KS_F16, 1e-30), 0x0000);
}

Test(task, dtype_f16_nan_inf) {
  cr_expect_eq(tt_h(KS_F16, INFINITY), 0x7c00);
  cr_expect_eq(tt_h(KS_F16, -INFINITY), 0xfc00);
  uint16_t n = tt_h(KS_F16, NAN);
  cr_expect_eq(n & 0x7c00, 0x7c00);
  cr_expect_neq(n & 0x03ff, 0, "NaN stays NaN, not inf");
  cr_expect(isnan(tt_l(KS_F16, n)));
  cr_expect(isnan(tt_l(KS_F16, 0x7c01)));
  cr_expect(isnan(tt_l(KS_F16, 0xfe00)));
  cr_expect(isinf(tt_l(KS_F16, 0x7c00)) && tt_l(KS_F16, 0x7c00) > 0);
  cr_expect(isinf(tt_l(KS_F16, 0xfc00)) && tt_l(KS_F16, 0xfc00) < 0);
}

Test(task, dtype_f16_all_patterns_round_trip) {
  for (uint32_t b = 0; b < 65536; b++) {
    double v = tt_l(KS_F16, (uint16_t)b);
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) {
      cr_assert(isnan(v), "0x%04x", b);
      continue;
    }
    cr_assert_eq(tt_h(KS_F16, v), b, "0x%04x -> %g -> 0x%04x", b, v,
                 tt_h(KS_F16, v));
  }
}

Test(task, dtype_bf16_values_and_rounding) {
  cr_expect_eq(tt_h(KS_BF16, 1.0), 0x3f80);
  cr_expect_eq(tt_h(KS_BF16, -2.0), 0xc000);
  cr_expect_eq(tt_h(KS_BF16, 1.0 + ldexp(1, -8)), 0x3f80, "tie to even down");
  cr_expect_eq(tt_h(KS_BF16, 1.0 + 3 * ldexp(1, -8)), 0x3f82, "tie to even up");
  cr_expect_eq(tt_h(KS_BF16, 1.0 + ldexp(1, -8) + ldexp(1, -15)), 0x3f81,
               "above the tie");
  cr_expect_eq(tt_h(KS_BF16, 3.140625), 0x4049);
  cr_expect_float_eq(tt_l(KS_BF16, 0x4049), 3.140625, 0);
  cr_expect_eq(tt_h(KS_BF16, INFINITY), 0x7f80);
  cr_expect_eq(tt_h(KS_BF16, -INFINITY), 0xff80);
  cr_expect(isinf(tt_l(KS_BF16, 0x7f80)));
  uint16_t n = tt_h(KS_BF16, NAN);
  cr_expect(isnan(tt_l(KS_BF16, n)), "NaN stays NaN: 0x%04x", n);
  cr_expect(isnan(tt_l(KS_BF16, 0x7f81)), "NaN with low payload");
  /* a NaN whose payload lives only in the low bits must not become inf */
  float lownan;
  uint32_t bits = 0x7f800001;
  memcpy(&lownan, &bits, 4);
  cr_expect(isnan(tt_l(KS_BF16, tt_h(KS_BF16, lownan))));
  /* subnormals */
  double sub = ldexp(1, -130);
  cr_expect_eq(tt_h(KS_BF16, sub), 0x0008);
  cr_expect_float_eq(tt_l(KS_BF16, 0x0001), ldexp(1, -133), 0);
  cr_expect_float_eq(tt_l(KS_BF16, 0x8001), -ldexp(1, -133), 0);
}

Test(task, dtype_bf16_all_patterns_round_trip) {
  for (uint32_t b = 0; b < 65536; b++) {
    double v = tt_l(KS_BF16, (uint16_t)b);
    if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) {
      cr_assert(isnan(v), "0x%04x", b);
      continue;
    }
    cr_assert_eq(tt_h(KS_BF16, v), b, "0x%04x -> %g -> 0x%04x", b, v,
                 tt_h(KS_BF16, v));
  }
}

Test(task, dtype_other_types_store_load) {
  float f[2];
  ks_dtype_store(KS_F32, f, 1, 0.1);
  cr_expect_eq(f[1], 0.1f);
  cr_expect_float_eq(ks_dtype_load(KS_F32, f, 1), (double)0.1f, 0);
  int32_t i[2];
  ks_dtype_store(KS_I32, i, 1, -7);
  cr_expect_eq(i[1], -7);
  cr_expect_float_eq(ks_dtype_load(KS_I32, i, 1), -7, 0);
  int64_t l[2];
  ks_dtype_store(KS_I64, l, 0, 4294967296.0 * 3);
  cr_expect_eq(l[0], 3LL << 32);
  cr_expect_float_eq(ks_dtype_load(KS_I64, l, 0), 4294967296.0 * 3, 0);
  uint8_t u[3];
  ks_dtype_store(KS_U8, u, 2, 200);
  cr_expect_eq(u[2], 200);
  cr_expect_float_eq(ks_dtype_load(KS_U8, u, 2), 200, 0);
}

Test(task, tensor_numel) {
  ks_task t;
  memset(&t, 0, sizeof t);
  t.n_axes = 3;
  ks_tensor x = {.rank = 3, .dims = {0, 2, 1}};
  ks_tensor s = {.rank = 0};
  ks_tensor y = {.rank = 2, .dims = {1, 1}};
  ks_workload w = {.axis = {3, 5, 7}};
  cr_expect_eq(ks_tensor_numel(&t, &x, &w), 105);
  cr_expect_eq(ks_tensor_numel(&t, &s, &w), 1, "rank 0 is one element");
  cr_expect_eq(ks_tensor_numel(&t, &y, &w), 25);
  ks_workload big = {.axis = {1 << 20, 1 << 20, 4}};
  cr_expect_eq(ks_tensor_numel(&t, &x, &big), (int64_t)1 << 42);
}

/* ------------------------------------------- issue 13: ranges and types */

Test(task, bad_scalar_out_of_its_dtype_range) {
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': 1e308}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "int32", NULL);
  tt_bad(TT_HEAD TT_AXES "'scalars': {'k': {'dtype': 'int32', 'value': "
                         "9223372036854775807}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.k.value", "outside", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int64', 'value': 1e300}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "int64", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'float32', 'value': 1e300}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "float32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': 1.5}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "whole number", NULL);
  ks_task t;
  tt_load_ok(
      TT_HEAD TT_AXES
      "'scalars': {'k': {'dtype': 'int32', 'value': -2147483648}}, " TT_IN
          TT_OUT TT_REF TT_WL,
      &t);
  ks_task_free(&t);
}

Test(task, bad_init_bounds_out_of_range) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'randint(0,99999999999999999999)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "int32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(0,1e400)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "float32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'uint8', "
         "'init': 'randint(0,256)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "uint8", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'randint(0.5,3)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "whole-number", NULL);
}

Test(task, wrong_type_is_not_reported_as_missing) {
  tt_bad(
      TT_HEAD TT_AXES
      "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 5}}, " TT_OUT TT_REF
          TT_WL,
      "inputs.x.dtype", "must be a string, not a number", NULL);
  tt_bad(
      TT_HEAD TT_AXES
      "'inputs': {'x': {'shape': 'rows', 'dtype': 'float32'}}, " TT_OUT TT_REF
          TT_WL,
      "inputs.x.shape", "must be a list, not a string", NULL);
  tt_bad("{'name': 7, 'class': 'row_reduction', " TT_AXES TT_IN TT_OUT TT_REF
             TT_WL,
         "name: must be a string, not a number", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': ['reference.c'], " TT_WL,
         "reference: must be a string, not a list", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': '3'}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "must be a number, not a string", NULL);
}

Test(task, reference_must_be_a_regular_file) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': '/dev/stdin', " TT_WL,
         "reference", "/dev/stdin", "not a regular file", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': '.', " TT_WL, "reference",
         "not a regular file", NULL);
}

Test(task, c_keywords_are_not_names) {
  tt_bad("{'name': 'int', 'class': 'row_reduction', " TT_AXES TT_IN TT_OUT
             TT_REF TT_WL,
         "name", "\"int\"", "C keyword", NULL);
  tt_bad(TT_HEAD TT_AXES "'inputs': {'for': {'shape': ['rows', 'cols'], "
                         "'dtype': 'float32'}}, " TT_OUT TT_REF TT_WL,
         "inputs.for", "keyword", NULL);
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'var'}, "
                 "'while': {'type': 'var'}}, " TT_IN TT_OUT TT_REF TT_WL,
         "axes.while", "keyword", NULL);
}

/* ------------------------------------ derived axes, randint over the axes */

#define TT_ROUTE                                                               \
  "{'name': 't1', 'class': 'routing', "                                        \
  "'axes': {'tokens': {'type': 'var'}, 'experts': {'type': 'var'}, "           \
  "'np1': {'type': 'derived', 'value': 'experts + 1'}}, "                      \
  "'inputs': {'x': {'shape': ['tokens', 'experts'], 'dtype': 'float32'}}, "    \
  "'outputs': {'off': {'shape': ['np1'], 'dtype': 'int32'}}, " TT_REF

Test(task, derived_axis_filled_per_workload_not_passed) {
  ks_task t;
  tt_load_ok(TT_ROUTE "'cost': {'bytes': '4*np1'}, "
                      "'workloads': [{'tokens': 3, 'experts': 8}, "
                      "{'tokens': 1, 'experts': 255}]}",
             &t);
  int np1 = ks_task_axis_index(&t, "np1");
  cr_assert_geq(np1, 0);
  cr_expect(t.axes[np1].is_const, "not passed to kernels, like const axes");
  cr_expect_not_null(t.axes[np1].derive);
  cr_expect_eq(t.workloads[0].axis[np1], 9);
  cr_expect_eq(t.workloads[1].axis[np1], 256);
  cr_expect_eq(ks_tensor_numel(&t, &t.outputs[0], &t.workloads[1]), 256);
  cr_expect_float_eq(ks_task_cost_bytes(&t, &t.workloads[0]), 36.0, 1e-9);
  ks_task_free(&t);
  cr_expect_null(t.axes[np1].derive, "freed");
}

Test(task, bad_derived_axis_in_workload) {
  tt_bad(TT_ROUTE "'workloads': [{'tokens': 3, 'experts': 8, 'np1': 9}]}",
         "workloads[0].np1", "derived axis", "remove it", NULL);
}

Test(task, bad_derived_axis_unknown_name) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'a': {'type': 'var'}, "
         "'b': {'type': 'derived', 'value': 'a + c'}}, " TT_IN TT_OUT TT_REF
         "'workloads': [{'a': 2}]}",
         "axes.b.value", "c", "arithmetic over var and const axes", NULL);
}

Test(task, bad_derived_axis_not_positive) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'rows': {'type': 'var'}, "
         "'cols': {'type': 'var'}, 'd': {'type': 'derived', 'value': 'rows - "
         "cols'}}, " TT_IN TT_OUT TT_REF "'workloads': [{'rows': 9, 'cols': "
         "3}, {'rows': 4, 'cols': 4}]}",
         "workloads[1]", "derived axis d = 0", "not a positive integer", NULL);
}

Test(task, bad_derived_axis_without_expression) {
  tt_bad("{'name': 't1', 'class': 'x', 'axes': {'rows': {'type': 'var'}, "
         "'cols': {'type': 'derived', 'value': 3}}, " TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 9}]}",
         "axes.cols.value", "expression", NULL);
}

#define TT_PAGED(INIT, WL)                                                     \
  "{'name': 't1', 'class': 'attention', "                                      \
  "'axes': {'batch': {'type': 'var'}, 'max_pages': {'type': 'var'}, "          \
  "'page_size': {'type': 'const', 'value': 16}}, "                             \
  "'inputs': {'lens': {'shape': ['batch'], 'dtype': 'int32', 'init': '" INIT   \
  "'}}, 'outputs': {'y': {'shape': ['batch'], 'dtype': 'float32'}}, " TT_REF   \
  "'workloads': [" WL "]}"

Test(task, randint_bounds_over_axes_hold_for_every_seed) {
  ks_task t;
  tt_load_ok(TT_PAGED("randint(max_pages*page_size - page_size + 1, "
                      "max_pages*page_size)",
                      "{'batch': 4000, 'max_pages': 1}, "
                      "{'batch': 4000, 'max_pages': 9}"),
             &t);
  const ks_tensor *lens = &t.inputs[0];
  cr_assert_not_null(lens->init.a_expr);
  int32_t *buf = malloc(4000 * sizeof *buf);
  for (int w = 0; w < 2; w++) {
    ks_init r = ks_init_bounds(&t, &lens->init, &t.workloads[w]);
    int lo = w ? 129 : 1, hi = w ? 144 : 16;
    cr_expect_float_eq(r.a, lo, 0);
    cr_expect_float_eq(r.b, hi, 0);
    cr_expect_null(r.a_expr);
    int seen_lo = 0, seen_hi = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
      ks_inputs_fill(&t, lens, &t.workloads[w], seed, buf);
      for (int i = 0; i < 4000; i++) {
        cr_assert(buf[i] >= lo && buf[i] <= hi, "w%d seed %llu: %d", w,
                  (unsigned long long)seed, buf[i]);
        seen_lo |= buf[i] == lo;
        seen_hi |= buf[i] == hi;
      }
    }
    cr_expect(seen_lo && seen_hi, "both inclusive bounds are drawn");
  }
  free(buf);
  ks_task_free(&t);
  cr_expect_null(t.inputs[0].init.a_expr, "freed");
}

Test(task, bad_randint_bounds_cross_in_a_workload) {
  tt_bad(TT_PAGED("randint(20, max_pages*page_size)",
                  "{'batch': 2, 'max_pages': 2}, {'batch': 2, 'max_pages': 1}"),
         "workloads[1]", "inputs.lens.init", "20 and 16", "LO <= HI", NULL);
}

Test(task, bad_randint_bound_unknown_name) {
  tt_bad(TT_PAGED("randint(1, pages*16)", "{'batch': 2, 'max_pages': 2}"),
         "inputs.lens.init", "pages", "over the axes", NULL);
}

Test(task, bad_randint_one_bound) {
  tt_bad(TT_PAGED("randint(max_pages)", "{'batch': 2, 'max_pages': 2}"),
         "inputs.lens.init", "two bounds", NULL);
}

Test(task, derived_axis_in_the_llm_task_text) {
  /* the coder must know the size it has to compute, not a constant */
  ks_task t;
  tt_load_ok(TT_ROUTE "'workloads': [{'tokens': 3, 'experts': 8}]}", &t);
  char *s = ks_llm_task_text(&t, false);
  cr_assert_not_null(s);
  cr_expect(strstr(s, "derived axis np1 = experts + 1") != NULL, "%s", s);
  cr_expect(strstr(s, "constant axis np1") == NULL, "%s", s);
  free(s);
  ks_task_free(&t);
}
