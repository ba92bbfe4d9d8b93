/* job.h — what travels on the streams (DESIGN.md: Workers, "job" and
 * "result"): an evaluation job (the task as text, the candidate source and
 * parameters, evaluation options, where to answer) and its result (the
 * `eval --json` object, the build, and the machine it was measured on).
 * Both are JSON texts in field "j" of a stream entry. A worker treats a job
 * as hostile input: every field is checked before anything is written or
 * run, and a job it cannot read becomes a `rejected` result. */
#ifndef KS_DIST_JOB_H
#define KS_DIST_JOB_H

#include "dist/broker.h"
#include "eval/eval.h"

#define KS_DIST_JOB_VERSION 1
#define KS_DIST_ID_MAX 96

typedef struct ks_dist_job {
  char job_id[KS_DIST_ID_MAX];
  char reply_to[KS_DIST_KEY_MAX]; /* the run's result stream */
  char target[64];                /* target hash (ks_dist_target) */
  char backend[16];
  char task_name[64], task_hash[17];
  char reference_name[128];             /* file name the task.json names */
  char *task_json, *reference, *source; /* owned */
  json_t *params;                       /* {"VEC": "8", ...}, owned */
  char cand_hash[17];
  int n_seeds;
  ks_timing_opts topt;
  bool timing;
  double timeout_s;
  int max_tries; /* deliveries before a job that kills workers is given up */
  bool echo;     /* "kind": "echo": answered at once, nothing evaluated (the
                    broker round trip of the benchmark and health checks) */
} ks_dist_job;

void ks_dist_job_free(ks_dist_job *j);
/* Encodes the job (JSON text, malloc'd). */
char *ks_dist_job_encode(const ks_dist_job *j);
/* Decodes and checks a job; errors name the field (KS_ERR_INPUT). On error
 * j->job_id and j->reply_to hold whatever could be read, so the worker can
 * still answer. */
ks_code ks_dist_job_decode(const char *text, ks_dist_job *j, ks_err *err);

/* The target of a worker: backend, device identity and thread count, the
 * things that make timings comparable. key: "ksearch:jobs:<hash>". */
void ks_dist_target(const char *backend, const char *device_identity,
                    int threads, char identity[512], char hash[17]);
void ks_dist_jobs_key(const char *target_hash, char key[KS_DIST_KEY_MAX]);

/* The result text a worker posts: {v, job_id, candidate_hash, machine,
 * result (eval --json), build {ok, seconds, log, artifact}}. */
char *ks_dist_result_encode(const ks_dist_job *j, const json_t *machine,
                            const ks_task *task, const ks_eval_result *r);
/* A result for a job that could not be evaluated (unreadable job, a job
 * that killed its workers max_tries times): status and reason only. */
char *ks_dist_result_failure(const char *job_id, const char *cand_hash,
                             const json_t *machine, ks_eval_status status,
                             const char *reason);

typedef struct ks_dist_result {
  char job_id[KS_DIST_ID_MAX], cand_hash[17];
  ks_eval_result res;  /* status, score, workloads, error, build */
  json_t *result_json; /* eval --json + "machine", owned */
} ks_dist_result;
/* Parses a result; the workload count must match n_workloads. */
ks_code ks_dist_result_decode(const char *text, int n_workloads,
                              ks_dist_result *out, ks_err *err);
void ks_dist_result_free(ks_dist_result *r);

#endif
