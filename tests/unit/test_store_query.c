/* test_store_query.c — reading a run back (src/store/store_query.c,
 * store_run.c, store_log.c): the best and top correct evaluations per
 * candidate, nodes, the task snapshot, events and LLM calls (credentials
 * redacted). Fixture: store_fixture.h. */
#include "store/store.h"
#include "store_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

Test(store, best_and_top_rank_correct_evaluations) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  ks_store_eval best;
  ks_store_candidate cand;
  bool found = true;
  cr_assert_eq(ks_store_best(s, &best, &cand, &found, &err), KS_OK);
  cr_assert_not(found);
  int64_t c1 = add_cand(s, "h1", "{}", "one");
  int64_t c2 = add_cand(s, "h2", "{}", "two");
  int64_t c3 = add_cand(s, "h3", "{}", "three");
  add_eval(s, c1, "ok", true, 1.5);
  int64_t e2 = add_eval(s, c2, "ok", true, 3.0);
  add_eval(s, c3, "wrong", false, 5.0); /* fast but wrong: never best */
  add_eval(s, c1, "ok", true, 2.0);     /* c1 measured again */
  int64_t running;
  cr_assert_eq(ks_store_begin_evaluation(s, c3, NULL, &running, &err), KS_OK);

  cr_assert_eq(ks_store_best(s, &best, &cand, &found, &err), KS_OK, "%s",
               err.msg);
  cr_assert(found);
  cr_assert_eq(best.id, e2);
  cr_assert_eq(best.candidate_id, c2);
  cr_assert_float_eq(best.score, 3.0, 1e-12);
  cr_assert_str_eq(cand.source, "two");
  ks_store_candidate_free(&cand);

  ks_store_eval *rows;
  size_t n;
  cr_assert_eq(ks_store_top(s, 10, &rows, &n, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(n, 2, "one row per candidate, correct ones only");
  cr_assert_eq(rows[0].candidate_id, c2);
  cr_assert_eq(rows[1].candidate_id, c1);
  cr_assert_float_eq(rows[1].score, 2.0, 1e-12);
  free(rows);
  cr_assert_eq(ks_store_top(s, 1, &rows, &n, &err), KS_OK);
  cr_assert_eq(n, 1);
  free(rows);

  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.finished, 4);
  cr_assert_eq(k.correct, 3);
  cr_assert_eq(k.running, 1);
  cr_assert_eq(ks_store_list_evaluations(s, &rows, &n, &err), KS_OK);
  cr_assert_eq(n, 4);
  for (size_t i = 1; i < n; i++)
    cr_assert_lt(rows[i - 1].id, rows[i].id, "in the order they ran");
  cr_assert_str_eq(rows[2].status, "wrong");
  cr_assert_not(rows[2].correct);
  free(rows);
  ks_store_close(s);
  fx_done(&f);
}

Test(store, nodes_snapshot_events_and_llm_calls) {
  fixture f;
  fx_init(&f);
  ks_store *s = open_ok(f.db, true);
  ks_err err = {0};
  cr_assert_eq(ks_store_put_node(s, "root", "{\"id\":\"root\"}", &err), KS_OK);
  cr_assert_eq(ks_store_put_node(s, "n1", "{\"id\":\"n1\",\"p\":1}", &err),
               KS_OK);
  cr_assert_eq(ks_store_put_node(s, "n1", "{\"id\":\"n1\",\"p\":2}", &err),
               KS_OK);
  json_t *nodes;
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  cr_assert_eq(
      json_integer_value(json_object_get(json_array_get(nodes, 1), "p")), 2);
  json_decref(nodes);
  json_t *repl =
      json_pack("[{s:s},{s:s,s:i}]", "id", "root", "id", "n2", "p", 5);
  cr_assert_eq(ks_store_replace_nodes(s, repl, &err), KS_OK, "%s", err.msg);
  json_decref(repl);
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  cr_assert_str_eq(
      json_string_value(json_object_get(json_array_get(nodes, 1), "id")), "n2");
  json_decref(nodes);
  repl = json_pack("[{s:i}]", "p", 1); /* no id: refused, old set kept */
  cr_assert_eq(ks_store_replace_nodes(s, repl, &err), KS_ERR_INTERNAL);
  json_decref(repl);
  cr_assert_eq(ks_store_list_nodes(s, &nodes, &err), KS_OK);
  cr_assert_eq(json_array_size(nodes), 2);
  json_decref(nodes);

  char *tj, *ref;
  cr_assert_eq(ks_store_get_task_snapshot(s, &tj, &ref, &err), KS_ERR_INPUT);
  cr_assert_eq(
      ks_store_put_task_snapshot(s, "{\"name\":\"t\"}", "void f(){}", &err),
      KS_OK);
  cr_assert_eq(ks_store_get_task_snapshot(s, &tj, &ref, &err), KS_OK);
  cr_assert_str_eq(tj, "{\"name\":\"t\"}");
  cr_assert_str_eq(ref, "void f(){}");
  free(tj);
  free(ref);

  cr_assert_eq(ks_store_add_event(s, "start", "{\"budget\":3}", &err), KS_OK);
  cr_assert_eq(ks_store_add_event(s, "stop", NULL, &err), KS_OK);
  cr_assert_eq(ks_store_add_event(s, "bad", "{oops", &err), KS_ERR_INTERNAL);

  ks_store_llm_call call = {
      .role = "coder",
      .model = "m",
      .request_json =
          "{\"api_key\":\"abc123\",\"headers\":{\"Authorization\":\"Bearer "
          "tok\"},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
          "\"extra\":[\"sk-abcdefghijklmnopqrstuvwxyz\"],\"max_tokens\":9}",
      .response_text = "hello",
      .status = "ok",
      .prompt_tokens = 10,
      .completion_tokens = -1,
      .latency_s = 0.25};
  int64_t id;
  cr_assert_eq(ks_store_add_llm_call(s, &call, &id, &err), KS_OK, "%s",
               err.msg);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(ks_store_handle(s),
                                  "SELECT request_json, completion_tokens "
                                  "FROM llm_calls WHERE id = ?",
                                  -1, &st, NULL),
               SQLITE_OK);
  sqlite3_bind_int64(st, 1, id);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  const char *stored = (const char *)sqlite3_column_text(st, 0);
  cr_assert_null(strstr(stored, "abc123"), "%s", stored);
  cr_assert_null(strstr(stored, "Bearer"), "%s", stored);
  cr_assert_null(strstr(stored, "sk-abc"), "%s", stored);
  cr_assert(strstr(stored, "\"content\":\"hi\"") != NULL, "%s", stored);
  cr_assert(strstr(stored, "\"max_tokens\":9") != NULL, "%s", stored);
  cr_assert_eq(sqlite3_column_type(st, 1), SQLITE_NULL);
  sqlite3_finalize(st);
  ks_store_counts k;
  cr_assert_eq(ks_store_counts_get(s, &k, &err), KS_OK);
  cr_assert_eq(k.llm_calls, 1);
  ks_store_close(s);
  fx_done(&f);
}
