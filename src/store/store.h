/* store.h — the SQLite store of one search run (DESIGN.md: Store, Run).
 *
 * One database per run, `<run_dir>/ksearch.db`, in WAL mode with STRICT
 * tables and foreign keys on. It holds the run's configuration, a snapshot of
 * the task, the world-model nodes, every candidate, build, evaluation (with
 * its per-workload measurements), LLM call and event. Each evaluation is
 * committed in one transaction when it finishes, so `kill -9` loses at most
 * the evaluation in flight and `--resume` continues from here.
 *
 * A writable store also holds an advisory lock (`ksearch.db.lock`, flock) for
 * as long as it is open, so a second ksearch on the same run folder is refused
 * at once instead of interleaving with the first. Read-only stores (report,
 * show) take no lock and may be opened while a run is in progress.
 *
 * Every call returns a ks_code and fills err; strings handed out are the
 * caller's (free() or the matching *_free function). Times are Unix seconds.
 */
#ifndef KS_STORE_H
#define KS_STORE_H

#include "ksearch.h"

#include <jansson.h>
#include <sqlite3.h>

/* Written to PRAGMA user_version; a database with a larger one is refused. */
#define KS_STORE_SCHEMA_VERSION 2
/* Written to PRAGMA application_id ("ksrc"): marks a ksearch database. */
#define KS_STORE_APPLICATION_ID 0x6b737263
#define KS_STORE_FILE "ksearch.db"
#define KS_STORE_BUSY_MS 2000

/* The schema (schema.c): the one place the tables are defined. */
extern const char ks_store_schema_sql[];
/* Brings a version 1 database to version 2 (inside one transaction). */
extern const char ks_store_migrate_v2_sql[];
/* Its inverse on an empty database: the version-1 form the schema check of
 * an unmigrated file compares with. */
extern const char ks_store_schema_v1_sql[];

typedef struct ks_store ks_store;

/* "<run_dir>/ksearch.db" into out. */
ks_code ks_store_db_path(const char *run_dir, char *out, size_t n, ks_err *err);

/* Opens (create: or creates when missing) a run database for writing and
 * takes the run lock. Refuses, without touching the file, one that is not a
 * ksearch database, is corrupt, or has a newer schema (KS_ERR_INPUT), and one
 * that another ksearch holds (KS_ERR_INPUT). */
ks_code ks_store_open(const char *db_path, bool create, ks_store **out,
                      ks_err *err);
/* Opens an existing run database for reading only; takes no lock. */
ks_code ks_store_open_readonly(const char *db_path, ks_store **out,
                               ks_err *err);
void ks_store_close(ks_store *s);
const char *ks_store_path(const ks_store *s);
/* How long a write waits for another connection's lock (default 2000 ms). */
void ks_store_set_busy_timeout(ks_store *s, int ms);
/* The raw connection, for tests and one-off queries; owned by the store. */
sqlite3 *ks_store_handle(ks_store *s);

/* ---- the run (one row) */
typedef struct ks_store_run {
  char *task_name, *task_hash, *backend, *config_json;
  char *stopped_because; /* NULL while running or after a crash */
  int64_t seed;
  double created, updated;
} ks_store_run;
void ks_store_run_free(ks_store_run *r);

/* Records the run (first call) or updates backend, seed and config (later
 * calls); refuses a different task like ks_store_check_task. */
ks_code ks_store_put_run(ks_store *s, const char *task_name,
                         const char *task_hash, const char *backend,
                         int64_t seed, const char *config_json, ks_err *err);
/* *found is false (and *out zeroed) when no run was recorded yet. */
ks_code ks_store_get_run(ks_store *s, ks_store_run *out, bool *found,
                         ks_err *err);
ks_code ks_store_set_stopped(ks_store *s, const char *reason, ks_err *err);
/* KS_ERR_INPUT naming both tasks when the run folder belongs to another task
 * (or to this task before its task.json/reference changed); KS_OK when it
 * matches or no run was recorded yet. */
ks_code ks_store_check_task(ks_store *s, const char *task_name,
                            const char *task_hash, ks_err *err);

/* ---- task snapshot (one row): what the run was started with */
ks_code ks_store_put_task_snapshot(ks_store *s, const char *task_json,
                                   const char *reference_source, ks_err *err);
/* Either output may be NULL; KS_ERR_INPUT when no snapshot was stored. */
ks_code ks_store_get_task_snapshot(ks_store *s, char **task_json,
                                   char **reference_source, ks_err *err);

/* ---- world-model nodes */
ks_code ks_store_put_node(ks_store *s, const char *node_id,
                          const char *node_json, ks_err *err);
/* Replaces all nodes in one transaction: nodes is an array of objects, each
 * with a string "id". */
ks_code ks_store_replace_nodes(ks_store *s, const json_t *nodes, ks_err *err);
/* *out: a new JSON array of the node objects, in first-stored order. */
ks_code ks_store_list_nodes(ks_store *s, json_t **out, ks_err *err);

/* ---- candidates: never stored twice (same source hash and params) */
typedef struct ks_store_candidate {
  int64_t id;
  char *node_id; /* NULL when none */
  char *source, *params_json, *hash;
  double created;
} ks_store_candidate;
void ks_store_candidate_free(ks_store_candidate *c);

/* params_json is a JSON object (NULL: {}), compared in canonical form (keys
 * sorted, compact). If an identical candidate exists, *id is its id and
 * *is_new (may be NULL) false. */
ks_code ks_store_add_candidate(ks_store *s, const char *node_id,
                               const char *source, const char *params_json,
                               const char *hash, int64_t *id, bool *is_new,
                               ks_err *err);
/* *id = the identical candidate's id, or 0. */
ks_code ks_store_find_candidate(ks_store *s, const char *hash,
                                const char *params_json, int64_t *id,
                                ks_err *err);
ks_code ks_store_get_candidate(ks_store *s, int64_t id, ks_store_candidate *out,
                               ks_err *err);

/* ---- builds */
ks_code ks_store_add_build(ks_store *s, int64_t candidate_id, bool ok,
                           double seconds, const char *log,
                           const char *artifact, int64_t *id, ks_err *err);

/* ---- evaluations
 * Statuses 'running' and 'interrupted' belong to the store; the evaluator
 * chooses the others (e.g. "ok", "wrong", "build_failed", "timeout"). */
#define KS_STORE_STATUS_MAX 32
#define KS_STORE_NODE_ID_MAX 128

typedef struct ks_store_measurement {
  int workload;         /* index into the task's workloads */
  char axes_json[1024]; /* {"rows":4096,"cols":4096}; "" means {} */
  /* NAN where unknown (stored as NULL) */
  double time_ns_median, time_ns_iqr, gbps, roofline_fraction, speedup;
} ks_store_measurement;

typedef struct ks_store_eval {
  int64_t id, candidate_id;
  char node_id[KS_STORE_NODE_ID_MAX]; /* "" when none */
  char status[KS_STORE_STATUS_MAX];
  bool correct;
  double score;             /* NAN while running */
  double started, finished; /* finished: NAN while running */
} ks_store_eval;

/* Records an evaluation as 'running' (committed at once). */
ks_code ks_store_begin_evaluation(ks_store *s, int64_t candidate_id,
                                  const char *node_id, int64_t *eval_id,
                                  ks_err *err);
/* Finishes a running evaluation and stores its measurements, all in one
 * transaction: after a crash either all of it is there or none. */
ks_code ks_store_finish_evaluation(ks_store *s, int64_t eval_id,
                                   const char *status, bool correct,
                                   double score, const char *result_json,
                                   const ks_store_measurement *m, size_t n_m,
                                   ks_err *err);
/* On resume: marks evaluations left 'running' by a dead process as
 * 'interrupted' and returns their candidate ids (malloc'd, may be NULL when
 * *n is 0; candidate_ids may be NULL). Finished evaluations are untouched. */
ks_code ks_store_abandon_running(ks_store *s, int64_t **candidate_ids,
                                 size_t *n, ks_err *err);

typedef struct ks_store_counts {
  int64_t candidates;
  int64_t finished; /* evaluations neither running nor interrupted */
  int64_t correct;  /* finished with correct = 1 */
  int64_t running, interrupted;
  int64_t llm_calls;
} ks_store_counts;
ks_code ks_store_counts_get(ks_store *s, ks_store_counts *out, ks_err *err);

/* Finished evaluations in the order they were started (malloc'd array). */
ks_code ks_store_list_evaluations(ks_store *s, ks_store_eval **rows, size_t *n,
                                  ks_err *err);
/* The best correct evaluation of each candidate, best first, at most limit
 * rows (ties: earlier first). */
ks_code ks_store_top(ks_store *s, size_t limit, ks_store_eval **rows, size_t *n,
                     ks_err *err);
/* The best correct evaluation and (cand may be NULL) its candidate; *found is
 * false when none is correct yet. */
ks_code ks_store_best(ks_store *s, ks_store_eval *eval,
                      ks_store_candidate *cand, bool *found, ks_err *err);
/* The full per-workload result JSON (NULL while running). */
ks_code ks_store_get_result_json(ks_store *s, int64_t eval_id, char **out,
                                 ks_err *err);
ks_code ks_store_list_measurements(ks_store *s, int64_t eval_id,
                                   ks_store_measurement **rows, size_t *n,
                                   ks_err *err);

/* ---- jobs (jobs.c): evaluations sent to workers through a broker. A
 * job id is unique in the store, so a result delivered twice is recorded
 * once: the first finishes the evaluation, later ones are duplicates. */
#define KS_STORE_JOB_ID_MAX 96
typedef enum ks_store_job_state {
  KS_STORE_JOB_UNKNOWN, /* no evaluation has this job id */
  KS_STORE_JOB_RUNNING,
  KS_STORE_JOB_DONE /* finished or interrupted: a result now is a duplicate */
} ks_store_job_state;
typedef struct ks_store_job {
  int64_t eval_id, candidate_id;
  char node_id[KS_STORE_NODE_ID_MAX];
  char job_id[KS_STORE_JOB_ID_MAX];
} ks_store_job;
/* Begins a running evaluation whose job id is "<prefix>-<evaluation id>",
 * in one transaction. */
ks_code ks_store_begin_job(ks_store *s, int64_t candidate_id,
                           const char *node_id, const char *prefix,
                           ks_store_job *out, ks_err *err);
ks_code ks_store_job_lookup(ks_store *s, const char *job_id, ks_store_job *out,
                            ks_store_job_state *state, ks_err *err);
/* Evaluations left running (a resumed run sends them again), oldest first;
 * one without a job id (a local run's) gets "<prefix>-<id>". */
ks_code ks_store_running_jobs(ks_store *s, const char *prefix,
                              ks_store_job **rows, size_t *n, ks_err *err);

/* ---- LLM calls: request_json is stored with credentials redacted (keys
 * such as api_key/authorization, "Bearer ..." and "sk-..." strings). */
typedef struct ks_store_llm_call {
  const char *role, *model, *request_json, *response_text, *status;
  int64_t prompt_tokens, completion_tokens; /* < 0: unknown */
  double latency_s;
} ks_store_llm_call;
ks_code ks_store_add_llm_call(ks_store *s, const ks_store_llm_call *c,
                              int64_t *id, ks_err *err);

/* ---- events: json is a JSON value (NULL: {}) */
ks_code ks_store_add_event(ks_store *s, const char *kind, const char *json,
                           ks_err *err);

/* ---- read-only lists for the report and `show --json`; *out is a new JSON
 * array, oldest first. LLM calls: {id, role, model, status, prompt_tokens,
 * completion_tokens, latency_s, created} (unknown values null; requests and
 * responses are left out). Events: {id, time, kind, json}; kind NULL = all. */
ks_code ks_store_list_llm_calls(ks_store *s, json_t **out, ks_err *err);
ks_code ks_store_list_events(ks_store *s, const char *kind, json_t **out,
                             ks_err *err);

#endif
