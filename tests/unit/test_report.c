/* test_report.c — the run report (src/report): the line diff, HTML escaping
 * and UTF-8 repair, a page drawn from hostile facts (no raw markup, the CSP
 * meta, charts with content) and the facts gathered from a real store
 * (state, notes, best kernel and its diff, roofline points). The browser
 * side is tests/integration/report.sh. */
#include "report/report.h"
#include "report/report_internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *op(const json_t *d, size_t i) {
  return json_string_value(json_array_get(json_array_get(d, i), 0));
}
static const char *txt(const json_t *d, size_t i) {
  return json_string_value(json_array_get(json_array_get(d, i), 1));
}

Test(report, diff_marks_changed_lines) {
  json_t *d = ks_report_diff("a\nb\nc\n", "a\nB\nc\nd\n", 3, 100);
  cr_assert_not_null(d);
  cr_assert_eq(json_array_size(d), 5);
  cr_assert_str_eq(op(d, 0), " ");
  cr_assert_str_eq(txt(d, 0), "a");
  cr_assert_str_eq(op(d, 1), "-");
  cr_assert_str_eq(txt(d, 1), "b");
  cr_assert_str_eq(op(d, 2), "+");
  cr_assert_str_eq(txt(d, 2), "B");
  cr_assert_str_eq(op(d, 3), " ");
  cr_assert_str_eq(op(d, 4), "+");
  cr_assert_str_eq(txt(d, 4), "d");
  json_decref(d);
  d = ks_report_diff("same\n", "same\n", 3, 100);
  cr_assert_eq(json_array_size(d), 0, "identical sources have no hunk");
  json_decref(d);
}

Test(report, diff_folds_unchanged_runs_and_caps_the_middle) {
  ks_buf a, b;
  ks_buf_init(&a);
  ks_buf_init(&b);
  for (int i = 0; i < 40; i++) {
    ks_buf_printf(&a, "line %d\n", i);
    ks_buf_printf(&b, "line %d\n", i == 20 ? -1 : i);
  }
  json_t *d = ks_report_diff(a.data, b.data, 2, 100);
  /* 2 context lines each side of the change, the rest folded */
  cr_assert_eq(json_array_size(d), 8);
  cr_assert_str_eq(op(d, 0), "~");
  cr_assert_str_eq(txt(d, 0), "18 unchanged lines");
  cr_assert_str_eq(txt(d, 1), "line 18");
  cr_assert_str_eq(op(d, 3), "-");
  cr_assert_str_eq(op(d, 4), "+");
  cr_assert_str_eq(op(d, 7), "~");
  cr_assert_str_eq(txt(d, 7), "17 unchanged lines");
  json_decref(d);
  /* every line differs: the middle is 40 lines, over a cap of 10 */
  cr_assert_null(ks_report_diff(a.data, "x\ny\n", 2, 10));
  ks_buf_free(&a);
  ks_buf_free(&b);
}

Test(report, escapes_html_and_repairs_utf8) {
  ks_buf b;
  ks_buf_init(&b);
  ks_html_esc(&b, "<a href=\"x\">&'</a>");
  cr_assert_str_eq(b.data, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  ks_buf_free(&b);
  const char bad[] = "ok\xff\xc3(\xc3\xa9";
  json_t *s = ks_report_str(bad, sizeof bad - 1);
  cr_assert_str_eq(json_string_value(s), "ok?"
                                         "?(\xc3\xa9");
  json_decref(s);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

Test(report, page_of_hostile_facts_has_no_raw_markup) {
  const char *evil = "</pre><script>alert(1)</script><img src=http://x/y>";
  json_t *f = json_pack(
      "{s:s, s:{s:s, s:s, s:{s:s}}, s:[s], s:[{s:s, s:f, s:f, s:I, s:s, "
      "s:s}, {s:s, s:f, s:f, s:I, s:s, s:s}], s:{s:f, s:I, s:s, s:s, s:{}, "
      "s:[]}, s:{s:{s:f, s:f}}, s:[{s:i, s:f, s:f, s:f, s:f, s:{}}]}",
      "state", "finished", "run", "task", evil, "backend", "c", "config",
      "planner", "builtin", "notes", evil, "evaluations", "status", "ok",
      "score", 2.0, "best_so_far", 2.0, "candidate_id", (json_int_t)1,
      "node_id", evil, "reason", "", "status", "compile_error", "score", 0.0,
      "best_so_far", 2.0, "candidate_id", (json_int_t)2, "node_id", "n2",
      "reason", evil, "best", "score", 2.0, "candidate_id", (json_int_t)1,
      "node_id", "n1", "source", evil, "params", "plan", "context", "roofline",
      "bandwidth_gbps", 30.0, "peak_gflops", 200.0, "roofline_points",
      "workload", 0, "intensity", 0.5, "gflops", 10.0, "gbps", 20.0,
      "roofline_fraction", 0.6, "axes");
  cr_assert_not_null(f);
  char *page = ks_report_html(f);
  cr_assert_eq(count(page, "<script"), 0, "no script element");
  cr_assert_eq(count(page, "<img"), 0, "no image element");
  cr_assert_geq(count(page, "&lt;img src="), 1, "the image is text");
  cr_assert_geq(count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"), 3);
  cr_assert_not_null(strstr(page, "http-equiv=\"Content-Security-Policy\" "
                                  "content=\"default-src 'none';"));
  /* charts: two progress points, a best-so-far line, the roofs, a point */
  cr_assert_eq(count(page, "class=\"pt\""), 2);
  cr_assert_eq(count(page, "class=\"best\""), 1);
  cr_assert_eq(count(page, "class=\"roof\""), 1);
  cr_assert_eq(count(page, "class=\"wpt\""), 1);
  free(page);
  json_decref(f);
}

typedef struct fixture {
  char dir[512];
} fixture;

/* The run folder of the test in this process (Criterion runs each test in
 * its own), removed after it. */
static fixture g_fx;
static void rm_run(void) {
  if (g_fx.dir[0])
    ks_rm_rf(g_fx.dir);
}

static ks_store *new_run(fixture *fx, bool stopped) {
  const char *t = getenv("TMPDIR");
  snprintf(fx->dir, sizeof fx->dir, "%s/ks_report_XXXXXX",
           t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(fx->dir));
  char db[600];
  ks_err err;
  cr_assert_eq(ks_store_db_path(fx->dir, db, sizeof db, &err), KS_OK);
  ks_store *s = NULL;
  cr_assert_eq(ks_store_open(db, true, &s, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_store_put_run(s, "softmax", "h1", "c", 1,
                                "{\"planner\":\"builtin\",\"budget\":3}", &err),
               KS_OK, "%s", err.msg);
  cr_assert_eq(ks_store_put_task_snapshot(s, "{}", "// ref\nint r;\n", &err),
               KS_OK);
  if (stopped)
    cr_assert_eq(ks_store_set_stopped(s, "budget", &err), KS_OK);
  return s;
}

static const char *note_with(const json_t *facts, const char *what) {
  size_t i;
  const json_t *n;
  json_array_foreach(json_object_get(facts, "notes"), i, n) {
    const char *s = json_string_value(n);
    if (strstr(s, what))
      return s;
  }
  return NULL;
}

Test(report, facts_of_a_store_with_a_correct_evaluation, .fini = rm_run) {
  fixture *fx = &g_fx;
  ks_store *s = new_run(fx, true);
  ks_err err;
  int64_t cand, ev;
  cr_assert_eq(ks_store_add_candidate(s, "n1", "// k\nint k;\n",
                                      "{\"VEC\":\"8\"}", "abc", &cand, NULL,
                                      &err),
               KS_OK, "%s", err.msg);
  cr_assert_eq(ks_store_begin_evaluation(s, cand, "n1", &ev, &err), KS_OK);
  const char *res = "{\"status\":\"ok\",\"workloads\":[{\"axes\":{\"rows\":4},"
                    "\"time_ns_min\":1000.0,\"gbps\":20.0,\"gflops\":5.0,"
                    "\"roofline_fraction\":0.5,\"speedup\":3.0}]}";
  cr_assert_eq(
      ks_store_finish_evaluation(s, ev, "ok", true, 3.0, res, NULL, 0, &err),
      KS_OK, "%s", err.msg);
  json_t *f = NULL;
  cr_assert_eq(ks_report_facts(fx->dir, s, false, &f, &err), KS_OK, "%s",
               err.msg);
  ks_store_close(s);
  cr_assert_str_eq(json_string_value(json_object_get(f, "state")), "finished");
  const json_t *best = json_object_get(f, "best");
  cr_assert_eq(json_integer_value(json_object_get(best, "candidate_id")), cand);
  cr_assert_not_null(strstr(json_string_value(json_object_get(best, "source")),
                            "#define VEC 8"),
                     "the source has its parameters baked in");
  const json_t *parent = json_object_get(best, "parent");
  cr_assert_str_eq(json_string_value(json_object_get(parent, "kind")),
                   "reference", "no parent node: the diff is vs the reference");
  cr_assert(json_array_size(json_object_get(parent, "diff")) > 0);
  const json_t *pt = json_array_get(json_object_get(f, "roofline_points"), 0);
  cr_assert_float_eq(json_number_value(json_object_get(pt, "intensity")), 0.25,
                     1e-12);
  cr_assert_eq(json_array_size(json_object_get(f, "evaluations")), 1);
  cr_assert_not_null(note_with(f, "Machine, roofline and command line are "
                                  "unknown"));
  cr_assert_null(note_with(f, "No evaluation"));
  json_decref(f);
}

Test(report, hook_records_the_context_once_and_writes_the_page,
     .fini = rm_run) {
  fixture *fx = &g_fx;
  ks_store *s = new_run(fx, false);
  ks_roofline rl;
  memset(&rl, 0, sizeof rl);
  snprintf(rl.backend, sizeof rl.backend, "c");
  rl.bandwidth_gbps = 40, rl.peak_gflops = 300, rl.threads = 2;
  ks_report_after_evaluation(s, fx->dir, &rl, "ksearch run softmax", true);
  ks_report_after_evaluation(s, fx->dir, &rl, "ksearch run softmax", true);
  json_t *ev = NULL;
  ks_err err;
  cr_assert_eq(ks_store_list_events(s, "run_context", &ev, &err), KS_OK);
  cr_assert_eq(json_array_size(ev), 1, "an unchanged context is not repeated");
  json_decref(ev);
  ks_report_after_evaluation(s, fx->dir, &rl, "ksearch run --resume x", false);
  json_t *f = NULL;
  cr_assert_eq(ks_report_facts(fx->dir, s, true, &f, &err), KS_OK, "%s",
               err.msg);
  cr_assert_eq(json_integer_value(json_object_get(f, "sessions")), 2);
  const json_t *ctx = json_object_get(f, "context");
  cr_assert_str_eq(json_string_value(json_object_get(ctx, "command_line")),
                   "ksearch run --resume x", "the latest session's context");
  cr_assert_float_eq(json_number_value(json_object_get(
                         json_object_get(ctx, "roofline"), "bandwidth_gbps")),
                     40, 1e-9);
  cr_assert_str_eq(json_string_value(json_object_get(f, "state")),
                   "in progress");
  json_decref(f);
  ks_store_close(s);
  char page[700];
  snprintf(page, sizeof page, "%s/report.html", fx->dir);
  char *text = NULL;
  cr_assert_eq(ks_read_file(page, &text, NULL, &err), KS_OK, "%s", err.msg);
  cr_assert_not_null(strstr(text, "in progress"));
  cr_assert_not_null(strstr(text, "</html>"));
  free(text);
}

Test(report, facts_of_a_stopped_run_without_evaluations, .fini = rm_run) {
  fixture *fx = &g_fx;
  ks_store *s = new_run(fx, false);
  ks_store_close(s);
  json_t *f = NULL;
  ks_err err;
  cr_assert_eq(ks_report_facts(fx->dir, NULL, false, &f, &err), KS_OK, "%s",
               err.msg);
  cr_assert_str_eq(json_string_value(json_object_get(f, "state")), "stopped");
  cr_assert_not_null(note_with(f, "No evaluation has finished"));
  cr_assert_not_null(note_with(f, "--resume"));
  cr_assert(json_is_null(json_object_get(f, "best")));
  char *page = ks_report_html(f);
  cr_assert_not_null(strstr(page, "no evaluation has finished yet"),
                     "the progress chart says why it is empty");
  free(page);
  json_decref(f);
}

Test(report, a_folder_without_a_run_is_bad_input) {
  json_t *f = NULL;
  ks_err err;
  cr_assert_eq(ks_report_facts("/nonexistent/run", NULL, false, &f, &err),
               KS_ERR_INPUT);
  cr_assert_not_null(strstr(err.msg, "not a run folder"));
  cr_assert_null(f);
}
