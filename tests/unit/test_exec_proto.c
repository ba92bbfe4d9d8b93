/* test_exec_proto.c — the judge's reader of the executor stream
 * (src/eval/exec_proto.c) and its end of the channel (exec_client.c): every
 * valid event parses (the probe's optional flops among them); unknown events
 * and fields, wrong types, negative numbers, duplicate keys, NUL bytes,
 * oversized and truncated lines and random bytes never do; a hostile executor
 * (tests/fake_executor/hostile.py) that answers twice, early, with another id,
 * oversized, with garbage, an unknown event or an extra field is a protocol
 * violation, while one that sends a valid answer a byte at a time is accepted.
 * The start (spawn to ready) has its own limit, and the calls' limit counts
 * from ready: a slow start within its limit leaves the calls their whole
 * limit, one past it times out before ready.
 */
#include "eval/exec_client.h"
#include "eval/exec_proto.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static bool parse(const char *s, ks_exec_event *ev, char *why) {
  return ks_exec_parse_event(s, strlen(s), ev, why, 300);
}

static const char *const k_valid[] = {
    "{\"ev\":\"ready\"}",
    "{\"ev\":\"loaded\"}",
    "{\"ev\":\"pong\",\"id\":3}",
    "{\"ev\":\"prepped\",\"id\":4}",
    "{\"ev\":\"ret\",\"id\":5,\"ns\":1234}",
    "{\"ev\":\"ret\",\"id\":5,\"ns\":1234,\"dev_ns\":1000}",
    "{\"ev\":\"collected\",\"id\":6}",
    "{\"ev\":\"collected\",\"id\":6,\"fail\":\"wrote past the end\"}",
    "{\"ev\":\"probed\",\"id\":7,\"ns\":99}",
    "{\"ev\":\"probed\",\"id\":7,\"ns\":99,\"fl\":268435456}",
    "{\"ev\":\"error\",\"code\":3,\"message\":\"no device\"}",
    "{\"ev\":\"alloc_failed\",\"bytes\":68719476736}",
    "{\"ev\":\"sigsys\",\"nr\":57}",
    "{\"ev\":\"fault\",\"sig\":11,\"what\":\"modified input x\"}",
};

Test(exec_proto, every_valid_event_parses) {
  for (size_t i = 0; i < sizeof k_valid / sizeof *k_valid; i++) {
    ks_exec_event ev;
    char why[300] = "";
    cr_assert(parse(k_valid[i], &ev, why), "%s: %s", k_valid[i], why);
    cr_assert_neq(ev.kind, KS_EV_NONE);
  }
  ks_exec_event ev;
  char why[300];
  cr_assert(parse("{\"ev\":\"ret\",\"id\":5,\"ns\":1234}", &ev, why));
  cr_assert_eq(ev.kind, KS_EV_RET);
  cr_assert_eq(ev.id, 5);
  cr_assert_eq(ev.ns, 1234);
  cr_assert_eq(ev.dev_ns, -1);
  /* the compute probe says the flops it did */
  cr_assert(
      parse("{\"ev\":\"probed\",\"id\":7,\"ns\":99,\"fl\":4096}", &ev, why));
  cr_assert_eq(ev.value, 4096);
  cr_assert(parse("{\"ev\":\"probed\",\"id\":7,\"ns\":99}", &ev, why));
  cr_assert_eq(ev.value, 0);
}

Test(exec_proto, off_protocol_lines_are_refused_with_a_reason) {
  static const char *const bad[] = {
      "",
      "[]",
      "42",
      "{}",
      "{\"event\":\"done\"}",
      "{\"ev\":\"done\"}",
      "{\"ev\":5}",
      "{\"ev\":\"ret\",\"id\":5}",
      "{\"ev\":\"ret\",\"id\":-1,\"ns\":3}",
      "{\"ev\":\"ret\",\"id\":5,\"ns\":1.5}",
      "{\"ev\":\"ret\",\"id\":5,\"ns\":\"3\"}",
      "{\"ev\":\"ret\",\"id\":5,\"ns\":3,\"correct\":true}",
      "{\"ev\":\"ret\",\"id\":5,\"id\":6,\"ns\":3}",
      "{\"ev\":\"ret\",\"id\":99999999999999999999999,\"ns\":3}",
      "{\"ev\":\"pong\",\"id\":3} trailing",
      "{\"ev\":\"error\",\"code\":3}",
      "{\"ev\":\"collected\",\"id\":1,\"fail\":7}",
      "{\"ev\":\"ready\",\"score\":1e9}",
      "{\"ev\":\"probed\",\"id\":7,\"ns\":99,\"fl\":-5}",
      "{\"ev\":\"probed\",\"id\":7,\"ns\":99,\"fl\":\"many\"}",
      "{\"ev\":\"probed\",\"id\":7,\"ns\":99,\"fl\":2.5}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ks_exec_event ev;
    char why[300] = "";
    cr_assert_not(parse(bad[i], &ev, why), "accepted: %s", bad[i]);
    cr_assert(why[0], "no reason for %s", bad[i]);
  }
}

Test(exec_proto, nul_bytes_and_oversized_lines_are_refused) {
  ks_exec_event ev;
  char why[300];
  const char withnul[] = "{\"ev\":\"pong\",\"id\":3}\0";
  cr_assert_not(
      ks_exec_parse_event(withnul, sizeof withnul - 1, &ev, why, sizeof why));
  cr_assert(strstr(why, "NUL"));
  size_t n = KS_EXEC_MAX_LINE + 10;
  char *big = ks_xmalloc(n + 1);
  memset(big, ' ', n);
  memcpy(big, "{\"ev\":\"ready\"}", 14);
  big[n] = 0;
  cr_assert_not(ks_exec_parse_event(big, n, &ev, why, sizeof why));
  cr_assert(strstr(why, "bytes"));
  free(big);
}

Test(exec_proto, no_truncation_of_a_valid_event_parses) {
  for (size_t i = 0; i < sizeof k_valid / sizeof *k_valid; i++) {
    size_t n = strlen(k_valid[i]);
    for (size_t cut = 0; cut < n; cut++) {
      ks_exec_event ev;
      char why[300];
      cr_assert_not(ks_exec_parse_event(k_valid[i], cut, &ev, why, sizeof why),
                    "prefix %zu of %s", cut, k_valid[i]);
    }
  }
}

Test(exec_proto, random_and_mutated_bytes_never_crash_nor_yield_bad_events) {
  ks_rng r;
  ks_rng_seed(&r, 12345, 1);
  char buf[512];
  for (int it = 0; it < 20000; it++) {
    size_t n;
    if (it % 2) { /* random bytes */
      n = ks_rng_u64(&r) % sizeof buf;
      for (size_t i = 0; i < n; i++)
        buf[i] = (char)ks_rng_u64(&r);
    } else { /* a valid event with a few bytes changed */
      const char *v =
          k_valid[ks_rng_u64(&r) % (sizeof k_valid / sizeof *k_valid)];
      n = strlen(v);
      memcpy(buf, v, n);
      for (int k = 0; k < 3; k++)
        buf[ks_rng_u64(&r) % n] = (char)(ks_rng_u64(&r) % 128);
    }
    ks_exec_event ev;
    char why[300];
    if (ks_exec_parse_event(buf, n, &ev, why, sizeof why)) {
      cr_assert_neq(ev.kind, KS_EV_NONE);
      cr_assert_geq(ev.id, 0);
      cr_assert_geq(ev.ns, 0);
      cr_assert_geq(ev.value, 0);
    }
  }
}

/* A real exchange with the hostile fake executor. */
static void talk(const char *mode, ks_exec *x, bool *call_ok) {
  char path[4096];
  const char *src = getenv("KSEARCH_SRC");
  cr_assert(src, "KSEARCH_SRC must name the source tree");
  snprintf(path, sizeof path, "%s/tests/fake_executor/hostile.py", src);
  setenv("KSEARCH_RUNNER", path, 1);
  setenv("KS_HOSTILE", mode, 1);
  int in = memfd_create("in", MFD_CLOEXEC), out = memfd_create("out", 0);
  cr_assert(in >= 0 && out >= 0);
  ks_err err;
  cr_assert_eq(ks_exec_start(x, "{\"job\":1}", in, out, 1, 20, &err), KS_OK,
               "%s", err.msg);
  cr_assert(x->ready, "%s: not ready: %s", mode, x->violation);
  ks_exec_event ev;
  int64_t win;
  cr_assert(ks_exec_ask(x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &win));
  cr_assert(ks_exec_ask(x, "\"cmd\":\"load\"", KS_EV_LOADED, &ev, NULL));
  cr_assert(
      ks_exec_ask(x, "\"cmd\":\"prep\",\"wl\":0", KS_EV_PREPPED, &ev, NULL));
  *call_ok = ks_exec_ask(x, "\"cmd\":\"call\"", KS_EV_RET, &ev, &win);
  if (*call_ok) /* a second call shows what the first left behind */
    *call_ok = ks_exec_ask(x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &win);
  close(in);
  close(out);
}

Test(exec_proto, a_hostile_executor_is_a_protocol_violation) {
  static const char *const modes[] = {
      "extra", "early", "wrongid", "oversize", "garbage", "unknown", "field"};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
    ks_exec x;
    bool ok;
    talk(modes[i], &x, &ok);
    cr_assert_not(ok, "%s was accepted", modes[i]);
    cr_assert(strstr(x.violation, "protocol violation"), "%s: '%s'", modes[i],
              x.violation);
    ks_exec_free(&x);
  }
}

Test(exec_proto, answers_split_into_single_bytes_are_accepted) {
  ks_exec x;
  bool ok;
  talk("split", &x, &ok);
  cr_assert(ok, "split: %s", x.violation);
  cr_assert_str_empty(x.violation);
  ks_exec_free(&x);
}

Test(exec_proto, an_executor_that_exits_mid_call_is_no_violation_but_dead) {
  ks_exec x;
  bool ok;
  talk("exit", &x, &ok);
  cr_assert_not(ok);
  cr_assert_str_empty(x.violation);
  cr_assert(x.dead);
  cr_assert_eq(x.proc.exit_status, 3);
  ks_exec_free(&x);
}

/* An executor whose start takes 1.2 s (KS_SLOW_READY) under limits of
 * start_s before ready and 0.6 s after it. */
static void slow_start(double start_s, ks_exec *x) {
  char path[4096];
  const char *src = getenv("KSEARCH_SRC");
  cr_assert(src, "KSEARCH_SRC must name the source tree");
  snprintf(path, sizeof path, "%s/tests/fake_executor/hostile.py", src);
  setenv("KSEARCH_RUNNER", path, 1);
  setenv("KS_HOSTILE", "slowstart", 1);
  setenv("KS_SLOW_READY", "1.2", 1);
  int in = memfd_create("in", MFD_CLOEXEC), out = memfd_create("out", 0);
  cr_assert(in >= 0 && out >= 0);
  ks_err err;
  cr_assert_eq(ks_exec_start_argv(x, NULL, "{\"job\":1}", in, out, 1, false,
                                  start_s, 0.6, &err),
               KS_OK, "%s", err.msg);
  close(in);
  close(out);
}

Test(exec_proto, the_start_has_its_own_limit_and_calls_count_from_ready) {
  ks_exec x;
  slow_start(10, &x);
  cr_assert(x.ready, "a 1.2 s start under a 10 s start limit: %s", x.violation);
  cr_assert_not(x.timed_out);
  /* 1.2 s after the spawn, the 0.6 s of the calls are all still there */
  ks_exec_event ev;
  int64_t win;
  cr_assert(ks_exec_ask(&x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &win),
            "the calls' limit counted from the spawn, not from ready");
  usleep(800 * 1000); /* past the calls' 0.6 s: the next answer is too late */
  cr_assert_not(ks_exec_ask(&x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &win));
  cr_assert(x.timed_out);
  ks_exec_free(&x);

  slow_start(0.5, &x);
  cr_assert_not(x.ready, "a 1.2 s start got ready under a 0.5 s limit");
  cr_assert(x.timed_out);
  ks_exec_free(&x);
  unsetenv("KS_SLOW_READY");
}
