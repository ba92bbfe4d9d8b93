/* test_llm_cache.c — the call cache (src/llm/cache.c): what the key covers
 * (model, sampling options, messages) and ignores (stream flags, decimal
 * numbers such as measured timings), and answers surviving a round trip
 * through the disk; a damaged entry is a miss. */
#include "llm/context.h"
#include "llm/llm.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *req(const char *model, const char *content, double temp) {
  json_t *r = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "model", model,
                        "messages", "role", "system", "content", "be exact",
                        "role", "user", "content", content);
  if (temp >= 0)
    json_object_set_new(r, "temperature", json_real(temp));
  return r;
}

static void key_of(json_t *r, char out[33]) {
  ks_llm_cache_key(r, out);
  json_decref(r);
}

Test(llm_cache, key_ignores_measured_decimals_and_stream_flags) {
  char a[33], b[33], c[33];
  key_of(req("m", "node n3: score 1.850x, 0.2551 ms, fraction 0.084", 0.2), a);
  key_of(req("m", "node n3: score 2.007x, 0.3100 ms, fraction 0.091", 0.2), b);
  cr_assert_str_eq(a, b);
  json_t *r = req("m", "node n3: score 1.850x, 0.2551 ms, fraction 0.084", 0.2);
  json_object_set_new(r, "stream", json_true());
  json_object_set_new(r, "stream_options",
                      json_pack("{s:b}", "include_usage", 1));
  key_of(r, c);
  cr_assert_str_eq(a, c);
  cr_assert_eq(strlen(a), 32);
}

Test(llm_cache, key_sees_what_decides_an_answer) {
  char base[33], k[33];
  key_of(req("m", "node n3 rows=2048", 0.2), base);
  key_of(req("m2", "node n3 rows=2048", 0.2), k);
  cr_assert_str_neq(base, k, "model");
  key_of(req("m", "node n4 rows=2048", 0.2), k);
  cr_assert_str_neq(base, k, "integer in the prompt (ids, sizes)");
  key_of(req("m", "node n3 rows=2049", 0.2), k);
  cr_assert_str_neq(base, k);
  key_of(req("m", "node n3 rows=2048", 0.7), k);
  cr_assert_str_neq(base, k, "temperature");
  key_of(req("m", "node n3 rows=2048", -1), k);
  cr_assert_str_neq(base, k, "temperature unset");
}

Test(llm_cache, mask_decimals) {
  char *m = ks_llm_mask_decimals("t=1.25 ms, -0.5e-3, 3e8 and 42 ids n12 v1.2 "
                                 "x.5 7.");
  cr_assert_str_eq(m, "t=# ms, #, # and 42 ids n12 v1.2 x.5 7.");
  free(m);
}

/* The figures a prompt quotes are decimals the key masks, whatever their
 * size: %#g wrote "858." and "123.x", which read as integers there, so a
 * recorded H200 session missed on replay once a figure crossed 100. */
static char *masked_result(const ks_task *t, double ns, double gbps,
                           double speedup) {
  json_t *r = json_pack(
      "{s:b, s:f, s:[{s:{s:i, s:i}, s:b, s:f, s:f, s:f, s:f, s:f}]}", "correct",
      1, "score", speedup, "workloads", "axes", "rows", 1024, "cols", 8192,
      "correct", 1, "time_ns_median", ns, "reference_time_ns_median",
      ns * speedup, "speedup", speedup, "gbps", gbps, "roofline_fraction", 0.5);
  char *text = ks_llm_result_text(t, r);
  json_decref(r);
  char *m = ks_llm_mask_decimals(text);
  free(text);
  return m;
}

Test(llm_cache, measured_figures_mask_alike_at_any_size) {
  ks_task t;
  memset(&t, 0, sizeof t);
  ks_err err;
  char dir[4096];
  const char *src = getenv("KSEARCH_SRC");
  snprintf(dir, sizeof dir, "%s/tasks/rmsnorm", src ? src : ".");
  cr_assert_eq(ks_task_load(dir, &t, &err), KS_OK, "%s", err.msg);
  char *a = masked_result(&t, 88150, 3563.2, 1.083);
  char *b = masked_result(&t, 1234567, 858.2, 123.4);
  char *c = masked_result(&t, 20, 49.7, 0.5);
  cr_assert_str_eq(a, b);
  cr_assert_str_eq(a, c);
  cr_assert_not_null(strstr(a, "# ms"), "%s", a);
  free(a);
  free(b);
  free(c);
  ks_task_free(&t);
}

Test(llm_cache, round_trip_and_damaged_entries) {
  char dir[] = "/tmp/ksearch-llm-cache-test.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char sub[128];
  snprintf(sub, sizeof sub, "%s/made/on/demand", dir);
  json_t *r = req("m", "hello", -1);
  char key[33];
  ks_llm_cache_key(r, key);
  bool hit = true;
  ks_llm_reply got;
  ks_llm_cache_get(sub, key, &hit, &got);
  cr_assert_not(hit);
  ks_llm_reply a = {0};
  a.text = "the answer \xc3\xa9";
  a.outcome = KS_LLM_TRUNCATED;
  a.prompt_tokens = 12;
  a.completion_tokens = 34;
  strcpy(a.finish_reason, "length");
  ks_err err;
  cr_assert_eq(ks_llm_cache_put(sub, key, r, &a, &err), KS_OK, "%s", err.msg);
  ks_llm_cache_get(sub, key, &hit, &got);
  cr_assert(hit);
  cr_assert(got.from_cache);
  cr_assert_str_eq(got.text, a.text);
  cr_assert_eq(got.outcome, KS_LLM_TRUNCATED);
  cr_assert_eq(got.prompt_tokens, 12);
  cr_assert_eq(got.completion_tokens, 34);
  cr_assert_str_eq(got.finish_reason, "length");
  ks_llm_reply_free(&got);
  /* a damaged file is a miss, not an error */
  char path[256];
  snprintf(path, sizeof path, "%s/%s.json", sub, key);
  FILE *f = fopen(path, "w");
  fputs("{\"answer\": ", f);
  fclose(f);
  ks_llm_cache_get(sub, key, &hit, &got);
  cr_assert_not(hit);
  json_decref(r);
  ks_rm_rf(dir);
}

/* A cache recorded on one machine replays on another: the prompt lines that
 * name the machine (H200 run of 2026-12-04: the PoCL device is named after
 * the CPU, and the first request missed) do not count; the rest does. */
Test(llm_cache, key_ignores_the_machine_lines) {
  char a[33], b[33], c[33];
  key_of(req("m",
             "== Target\nmeasured on this device (pthread-skylake-avx512-AMD "
             "EPYC): memory bandwidth 82.9 GB/s\ndevice: AMD EPYC; SIMD: "
             "avx512; 2 OpenMP threads\nrows=8192",
             0.2),
         a);
  key_of(req("m",
             "== Target\nmeasured on this device (cpu-skylake-avx512-Intel(R) "
             "Xeon(R) Processor): memory bandwidth 301.5 GB/s\ndevice: Intel "
             "Xeon; SIMD: avx512; 16 OpenMP threads\nrows=8192",
             0.2),
         b);
  cr_assert_str_eq(a, b);
  key_of(req("m",
             "== Target\nmeasured on this device (x): memory bandwidth 82.9 "
             "GB/s\ndevice: AMD EPYC; SIMD: avx512; 2 OpenMP threads\n"
             "rows=4096",
             0.2),
         c);
  cr_assert_str_neq(a, c, "a workload line still counts");
  char *m = ks_llm_mask_machine("x\ndevice: A\nmeasured on this device (B)");
  cr_assert_str_eq(m, "x\ndevice: #\nmeasured on this device#");
  free(m);
}

/* Order-matched replay: a request no recorded one equals takes the earliest
 * unused recorded answer of its prompt kind; other kinds, and answers that
 * were given already, are passed over; none left is a miss. */
Test(llm_cache, order_match_takes_the_next_answer_of_the_kind) {
  char dir[] = "/tmp/ksearch-llm-order-test.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  const char *prompts[] = {"(ksearch prompt: init)\nplan rows=8",
                           "(ksearch prompt: code)\nwrite it, 1",
                           "(ksearch prompt: code)\nwrite it, 2",
                           "(ksearch prompt: refine)\nscore 3"};
  const char *answers[] = {"plan", "kernel one", "kernel two", "edits"};
  char keys[4][33];
  ks_err err;
  for (int i = 0; i < 4; i++) {
    json_t *r = req("m", prompts[i], -1);
    ks_llm_cache_key(r, keys[i]);
    ks_llm_reply a = {0};
    a.text = (char *)answers[i];
    cr_assert_eq(ks_llm_cache_put(dir, keys[i], r, &a, &err), KS_OK, "%s",
                 err.msg);
    json_decref(r);
    usleep(2000); /* recorded_ns apart */
  }
  json_t *used = json_object();
  char got_key[33];
  bool hit;
  ks_llm_reply got;
  /* another machine's code prompts: the two code answers, in their order */
  json_t *r = req("m", "(ksearch prompt: code)\nwrite it, on an H200", -1);
  char kind[64];
  ks_llm_prompt_kind(r, kind, sizeof kind);
  cr_assert_str_eq(kind, "code");
  ks_llm_cache_get_next(dir, r, used, got_key, &hit, &got);
  cr_assert(hit);
  cr_assert_str_eq(got.text, "kernel one");
  cr_assert_str_eq(got_key, keys[1]);
  ks_llm_reply_free(&got);
  ks_llm_cache_get_next(dir, r, used, got_key, &hit, &got);
  cr_assert(hit);
  cr_assert_str_eq(got.text, "kernel two");
  ks_llm_reply_free(&got);
  ks_llm_cache_get_next(dir, r, used, got_key, &hit, &got);
  cr_assert_not(hit, "every code answer was given");
  json_decref(r);
  /* an exact hit the caller marked used is not given again by order */
  json_object_set_new(used, keys[0], json_true());
  r = req("m", "(ksearch prompt: init)\nplan rows=9", -1);
  ks_llm_cache_get_next(dir, r, used, got_key, &hit, &got);
  cr_assert_not(hit);
  json_decref(r);
  r = req("m", "no kind at all", -1);
  ks_llm_prompt_kind(r, kind, sizeof kind);
  cr_assert_str_eq(kind, "");
  ks_llm_cache_get_next(dir, r, used, got_key, &hit, &got);
  cr_assert_not(hit, "no unlabelled entry was recorded");
  json_decref(r);
  json_decref(used);
  ks_rm_rf(dir);
}
