/* protocol.h — what ksearch tells ksearch-runner (a job, as a JSON file) and
 * what the runner answers (JSON lines on fd 3, one event per line).
 *
 * Events, in order:
 *   {"event":"loaded"}                          artifact loaded, sandbox closed
 *   {"event":"workload_start","index":i}        the parent knows what was in
 *                                               flight if the child dies
 *   {"event":"workload","index":i,"correct":b,"reason":s,"max_abs_err":x,
 *    "max_rel_err":x,"time_ns_median":t,"time_ns_min":t,"time_ns_iqr":t,
 *    "reps":n}
 *   {"event":"alloc_failed","bytes":n}          from the malloc interposer
 *   {"event":"sigsys","nr":n}                   forbidden system call
 *   {"event":"done"}
 */
#ifndef KS_PROTOCOL_H
#define KS_PROTOCOL_H

#include "ksearch.h"

#include <jansson.h>
#include <limits.h>

#define KS_RESULT_FD 3
#define KS_MAX_SEEDS 8

typedef struct ks_timing_opts {
  double min_time_s; /* keep repeating until the timed runs add up to this */
  int min_reps, max_reps, warmup;
  double max_wall_s; /* per workload, flushes included */
  bool flush;        /* evict caches between repetitions */
} ks_timing_opts;

typedef struct ks_job {
  char task_path[PATH_MAX];
  char backend[16];
  char artifact[PATH_MAX];
  bool reference; /* compute and store reference outputs */
  bool timing;    /* time on the timing seed */
  int n_workloads;
  int workloads[KS_MAX_WORKLOADS];
  int n_seeds;
  uint64_t seeds[KS_MAX_SEEDS];
  uint64_t timing_seed;
  char ref_dir[PATH_MAX];
  int threads;
  ks_timing_opts topt;
  int64_t mem_limit_bytes;
  double cpu_limit_s;
} ks_job;

json_t *ks_job_to_json(const ks_job *job);
ks_code ks_job_from_json(const json_t *j, ks_job *job, ks_err *err);
/* Path of one reference output: <ref_dir>/<workload axes
 * hash>-s<seed>-<name>.bin */
void ks_ref_file(const ks_job *job, const ks_task *task, const ks_workload *w,
                 uint64_t seed, const char *out_name, char *path, size_t n);

#endif
