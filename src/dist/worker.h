/* worker.h — `ksearch worker` (DESIGN.md: Workers): one evaluator on one
 * target, fed from that target's job stream. It registers its backend,
 * device identity, thread count and roofline under ksearch:worker:<name>
 * (refreshed by a heartbeat thread, which also keeps the job it is running
 * from being claimed), takes jobs with XREADGROUP or claims those a dead
 * worker left pending longer than claim_after_s, evaluates them with its own
 * evaluator (the sandboxed runner, as `ksearch eval` does), posts the result
 * on the job's result stream and acknowledges the job. A job delivered more
 * than its max_tries times is answered with status crash instead of being
 * evaluated again. */
#ifndef KS_DIST_WORKER_H
#define KS_DIST_WORKER_H

#include "dist/broker.h"

typedef struct ks_worker_opts {
  ks_broker_url url;
  const char *backend; /* "c" */
  int threads;         /* 0: online CPUs */
  double claim_after_s;
  int max_jobs; /* stop after this many answers; 0: no limit */
  bool quiet;
} ks_worker_opts;

void ks_worker_opts_default(ks_worker_opts *o);
/* Runs until *stop (set by a signal handler) or max_jobs; the job in hand is
 * finished first. */
ks_code ks_worker_run(const ks_worker_opts *o, volatile int *stop, ks_err *err);

#endif
