/* test_dist.c — distributed evaluation without a broker (src/dist): broker
 * URLs, job encoding and the checks a worker makes on a hostile job, result
 * decoding, and target keys. The streams themselves are exercised against a
 * real redis-server in tests/integration/workers.sh. */
#include "dist/broker.h"
#include "dist/job.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static ks_broker_url parse_ok(const char *text) {
  ks_broker_url u;
  ks_err err;
  cr_assert_eq(ks_broker_url_parse(text, &u, &err), KS_OK, "%s: %s", text,
               err.msg);
  return u;
}

static void parse_bad(const char *text, const char *needle) {
  ks_broker_url u;
  ks_err err = {0};
  cr_assert_eq(ks_broker_url_parse(text, &u, &err), KS_ERR_INPUT, "%s", text);
  cr_assert(strstr(err.msg, needle), "%s: \"%s\" lacks \"%s\"", text, err.msg,
            needle);
}

Test(dist, broker_url_forms) {
  ks_broker_url u = parse_ok("redis://127.0.0.1");
  cr_assert_str_eq(u.host, "127.0.0.1");
  cr_assert_eq(u.port, 6379);
  cr_assert_eq(u.db, 0);
  cr_assert(!u.tls && !u.password[0] && !u.user[0]);
  u = parse_ok("redis://:pa%40ss@cache.example:6380/3");
  cr_assert_str_eq(u.password, "pa@ss");
  cr_assert_str_eq(u.host, "cache.example");
  cr_assert_eq(u.port, 6380);
  cr_assert_eq(u.db, 3);
  u = parse_ok("rediss://alice:pw@[::1]:7000/");
  cr_assert(u.tls);
  cr_assert_str_eq(u.user, "alice");
  cr_assert_str_eq(u.password, "pw");
  cr_assert_str_eq(u.host, "::1");
  cr_assert_eq(u.port, 7000);
  char disp[512];
  ks_broker_url_display(&u, disp, sizeof disp);
  cr_assert_str_eq(disp, "rediss://alice:***@::1:7000/0");
  cr_assert_null(strstr(disp, "pw"));
}

Test(dist, broker_url_errors_name_the_part) {
  parse_bad("http://127.0.0.1", "redis://");
  parse_bad("", "empty");
  parse_bad("redis://host:0", "port");
  parse_bad("redis://host:99999", "port");
  parse_bad("redis://host:12ab", "port");
  parse_bad("redis://host/x", "database");
  parse_bad("redis://secret@host", "[USER]:PASSWORD");
  parse_bad("redis://:@host", "empty password");
  parse_bad("redis://:a%zzb@host", "escape");
  parse_bad("redis://:pw@", "no host");
}

static ks_dist_job sample_job(void) {
  ks_dist_job j;
  memset(&j, 0, sizeof j);
  strcpy(j.job_id, "abc-7");
  strcpy(j.reply_to, "ksearch:results:0123456789abcdef");
  strcpy(j.target, "fedcba9876543210");
  strcpy(j.backend, "c");
  strcpy(j.task_name, "softmax");
  strcpy(j.task_hash, "00112233445566aa");
  strcpy(j.reference_name, "reference.c");
  j.task_json = strdup("{\"name\": \"softmax\"}");
  j.reference = strdup("void softmax(void) {}\n");
  j.source = strdup("// ksearch: backend=c\n");
  j.params = json_pack("{s:s, s:s}", "VEC", "8", "NACC", "2");
  strcpy(j.cand_hash, "aaaabbbbccccdddd");
  j.n_seeds = 2;
  j.topt.min_time_s = 0.05;
  j.topt.max_wall_s = 0.5;
  j.topt.min_reps = 10;
  j.topt.flush = true;
  j.timing = true;
  j.timeout_s = 0;
  j.max_tries = 3;
  return j;
}

Test(dist, job_round_trip) {
  ks_dist_job j = sample_job();
  char *text = ks_dist_job_encode(&j);
  cr_assert_not_null(text);
  ks_dist_job k;
  ks_err err;
  cr_assert_eq(ks_dist_job_decode(text, &k, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(k.job_id, "abc-7");
  cr_assert_str_eq(k.reply_to, j.reply_to);
  cr_assert_str_eq(k.task_json, j.task_json);
  cr_assert_str_eq(k.reference, j.reference);
  cr_assert_str_eq(k.source, j.source);
  cr_assert_str_eq(json_string_value(json_object_get(k.params, "VEC")), "8");
  cr_assert_eq(k.n_seeds, 2);
  cr_assert_eq(k.topt.min_reps, 10);
  cr_assert(k.topt.flush && k.timing && !k.echo);
  cr_assert_eq(k.max_tries, 3);
  free(text);
  ks_dist_job_free(&k);
  ks_dist_job_free(&j);
}

/* Replaces the first `from` in an encoded job by `to` and decodes it. */
static void hostile(const char *from, const char *to, const char *needle) {
  ks_dist_job j = sample_job();
  char *text = ks_dist_job_encode(&j);
  char *at = strstr(text, from);
  cr_assert_not_null(at, "%s not in %s", from, text);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *bad = malloc(n);
  snprintf(bad, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  ks_dist_job k;
  ks_err err = {0};
  cr_assert_eq(ks_dist_job_decode(bad, &k, &err), KS_ERR_INPUT, "%s", bad);
  cr_assert(strstr(err.msg, needle), "\"%s\" lacks \"%s\"", err.msg, needle);
  /* the answer still knows where to go */
  cr_assert_str_eq(k.job_id, "abc-7");
  ks_dist_job_free(&k);
  free(bad);
  free(text);
  ks_dist_job_free(&j);
}

Test(dist, hostile_jobs_are_refused_naming_the_field) {
  hostile("\"reference.c\"", "\"../../etc/cron.d/x\"", "reference_name");
  hostile("\"reference.c\"", "\".hidden\"", "reference_name");
  hostile("\"VEC\"", "\"VEC; rm -rf /\"", "candidate.params");
  hostile("\"v\":1", "\"v\":2", "version");
  hostile("\"seeds\":2", "\"seeds\":99", "eval.seeds");
  hostile("\"max_tries\":3", "\"max_tries\":0", "max_tries");
  hostile("\"00112233445566aa\"", "\"XYZ\"", "task.hash");
  hostile("\"kind\":\"eval\"", "\"kind\":\"shell\"", "kind");
  ks_dist_job k;
  ks_err err;
  cr_assert_eq(ks_dist_job_decode("not json", &k, &err), KS_ERR_INPUT);
  cr_assert_eq(ks_dist_job_decode("{\"v\":1,\"kind\":\"eval\",\"job_id\":\"a\","
                                  "\"reply_to\":\"mykey\"}",
                                  &k, &err),
               KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "reply_to"), "%s", err.msg);
}

Test(dist, echo_job) {
  ks_dist_job j;
  memset(&j, 0, sizeof j);
  j.echo = true;
  strcpy(j.job_id, "e-1");
  strcpy(j.reply_to, "ksearch:results:x");
  strcpy(j.target, "t");
  char *text = ks_dist_job_encode(&j);
  ks_dist_job k;
  ks_err err;
  cr_assert_eq(ks_dist_job_decode(text, &k, &err), KS_OK, "%s", err.msg);
  cr_assert(k.echo);
  cr_assert_null(k.source);
  free(text);
  ks_dist_job_free(&k);
}

Test(dist, failure_result_round_trip) {
  json_t *machine = json_pack("{s:s}", "worker", "w1");
  char *text = ks_dist_result_failure("j-9", "aaaabbbbccccdddd", machine,
                                      KS_EVAL_CRASH, "given up");
  ks_dist_result r;
  ks_err err;
  cr_assert_eq(ks_dist_result_decode(text, 3, &r, &err), KS_OK, "%s", err.msg);
  cr_assert_str_eq(r.job_id, "j-9");
  cr_assert_str_eq(r.cand_hash, "aaaabbbbccccdddd");
  cr_assert_eq(r.res.status, KS_EVAL_CRASH);
  cr_assert(!r.res.correct);
  cr_assert_str_eq(r.res.error, "given up");
  cr_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(r.result_json, "machine"), "worker")),
                   "w1");
  ks_dist_result_free(&r);
  free(text);
  json_decref(machine);
}

Test(dist, result_with_wrong_workloads_or_status_is_refused) {
  ks_dist_result r;
  ks_err err;
  const char *two = "{\"job_id\":\"a\",\"candidate_hash\":\"b\",\"build\":{},"
                    "\"result\":{\"status\":\"ok\",\"workloads\":[{},{}]}}";
  /* more workloads than the task has; an index outside it */
  cr_assert_eq(ks_dist_result_decode(two, 1, &r, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "2 workloads"), "%s", err.msg);
  ks_dist_result_free(&r);
  const char *far =
      "{\"job_id\":\"a\",\"candidate_hash\":\"b\",\"build\":{},"
      "\"result\":{\"status\":\"ok\",\"workloads\":[{\"index\":3}]}}";
  cr_assert_eq(ks_dist_result_decode(far, 3, &r, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "index"), "%s", err.msg);
  ks_dist_result_free(&r);
  /* the workloads of one device class, placed by their index */
  const char *some =
      "{\"job_id\":\"a\",\"candidate_hash\":\"b\",\"build\":{},"
      "\"result\":{\"status\":\"ok\",\"workloads\":[{\"index\":2,"
      "\"correct\":true}]}}";
  cr_assert_eq(ks_dist_result_decode(some, 3, &r, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(r.res.n_workloads, 3);
  cr_assert(r.res.wl[2].correct);
  cr_assert_not(r.res.wl[0].correct);
  ks_dist_result_free(&r);
  const char *st = "{\"job_id\":\"a\",\"candidate_hash\":\"b\",\"build\":{},"
                   "\"result\":{\"status\":\"great\",\"workloads\":[]}}";
  cr_assert_eq(ks_dist_result_decode(st, 3, &r, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "great"), "%s", err.msg);
  ks_dist_result_free(&r);
  cr_assert_eq(ks_dist_result_decode("[]", 3, &r, &err), KS_ERR_INPUT);
  ks_dist_result_free(&r);
}

Test(dist, targets_differ_by_device_and_threads) {
  char id1[512], id2[512], id3[512], h1[17], h2[17], h3[17];
  ks_dist_target("c", "AMD EPYC", 1, id1, h1);
  ks_dist_target("c", "AMD EPYC", 2, id2, h2);
  ks_dist_target("c", "Intel Xeon", 1, id3, h3);
  cr_assert_str_eq(id1, "c|AMD EPYC|t1");
  cr_assert_str_neq(h1, h2);
  cr_assert_str_neq(h1, h3);
  char key[KS_DIST_KEY_MAX];
  ks_dist_jobs_key(h1, key);
  cr_assert(!strncmp(key, "ksearch:jobs:", 13));
  cr_assert_str_eq(key + 13, h1);
}
