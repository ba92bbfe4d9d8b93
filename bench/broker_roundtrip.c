/* broker_roundtrip.c — issue benchmark: the broker's overhead per job.
 *
 * Sends N empty ("echo") jobs one after another to the target of the first
 * live worker on the broker and waits for each answer on a result stream of
 * its own: the round trip a real job pays on top of its evaluation (XADD,
 * the worker's XREADGROUP, its XADD of the result and XACK + XDEL, our
 * XREAD). Prints the median and 90th percentile in milliseconds as JSON.
 * Usage: bench_broker_roundtrip URL [N]. Needs a running `ksearch worker`. */
#include "dist/job.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: bench_broker_roundtrip URL [N]\n", stderr);
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 1 || n > 100000)
    n = 200;
  ks_err err;
  ks_broker_url u;
  ks_broker *b;
  if (ks_broker_url_parse(argv[1], &u, &err) ||
      ks_broker_connect(&u, &b, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return err.code == KS_ERR_INPUT ? 2 : 3;
  }
  json_t *regs;
  if (ks_broker_scan_json(b, "ksearch:worker:*", &regs, &err) ||
      !json_array_size(regs)) {
    fprintf(stderr, "no live worker on the broker; start `ksearch worker`\n");
    return 3;
  }
  ks_dist_job j;
  memset(&j, 0, sizeof j);
  j.echo = true;
  ks_strlcpy(
      j.target,
      json_string_value(json_object_get(json_array_get(regs, 0), "target")),
      sizeof j.target);
  snprintf(j.reply_to, sizeof j.reply_to, "ksearch:results:bench-%d",
           (int)getpid());
  char key[KS_DIST_KEY_MAX], last[64] = "0-0";
  ks_dist_jobs_key(j.target, key);
  double *ms = calloc((size_t)n, sizeof *ms);
  for (int i = 0; i < n; i++) {
    snprintf(j.job_id, sizeof j.job_id, "echo-%d", i);
    char *text = ks_dist_job_encode(&j);
    double t0 = ks_now();
    if (ks_broker_add(b, key, text, NULL, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 3;
    }
    free(text);
    int got = 0;
    char ids[1][64];
    char *texts[1];
    while (!got) {
      if (ks_broker_read(b, j.reply_to, last, 5000, 1, ids, texts, &got,
                         &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 3;
      }
      if (!got && ks_now() - t0 > 10) {
        fprintf(stderr, "no answer to echo job %d in 10 s\n", i);
        return 3;
      }
    }
    ms[i] = (ks_now() - t0) * 1e3;
    ks_strlcpy(last, ids[0], sizeof last);
    free(texts[0]);
  }
  ks_broker_del_key(b, j.reply_to, &err);
  qsort(ms, (size_t)n, sizeof *ms, cmp);
  printf("{\"jobs\": %d, \"round_trip_ms_median\": %.3f, "
         "\"round_trip_ms_p90\": %.3f, \"round_trip_ms_min\": %.3f}\n",
         n, ms[n / 2], ms[(n * 9) / 10], ms[0]);
  free(ms);
  json_decref(regs);
  ks_broker_free(b);
  return 0;
}
