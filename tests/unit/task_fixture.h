/* task_fixture.h — the fixture the task tests share (test_task.c,
 * test_task_bad.c, test_task_derived.c): a temporary folder holding a
 * reference.c, tasks written inline with single quotes (turned into double
 * quotes before parsing), and the assertion that a task is refused as bad
 * input naming the file. The suite "task" (task_fixture.c) creates and removes
 * the folder around every test. */
#ifndef KS_TEST_TASK_FIXTURE_H
#define KS_TEST_TASK_FIXTURE_H

#include "ksearch.h"

extern char tt_dir[512];  /* the test's folder */
extern char tt_json[600]; /* <tt_dir>/task.json */

/* Converts ' to " so fixtures read as JSON without escapes (malloc'd). */
char *tt_quote(const char *q);
/* Parses the quoted task as if read from tt_json. */
ks_code tt_load(const char *q, ks_task *t, ks_err *err);
void tt_load_ok(const char *q, ks_task *t);
/* Asserts bad input (exit 2), the file named, and every NULL-terminated
 * substring present. */
void tt_bad(const char *q, ...);
/* The repository root (KSEARCH_SRC, else "."), for the built-in tasks. */
const char *tt_src(void);

/* A small valid task; tests below vary one part of it. */
#define TT_HEAD "{'name': 't1', 'class': 'row_reduction', "
#define TT_AXES "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'var'}}, "
#define TT_IN                                                                  \
  "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
#define TT_OUT                                                                 \
  "'outputs': {'y': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
#define TT_REF "'reference': 'reference.c', "
#define TT_WL "'workloads': [{'rows': 4, 'cols': 8}]}"

#endif
