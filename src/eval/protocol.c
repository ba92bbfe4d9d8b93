/* protocol.c — job (de)serialisation; see protocol.h. */
#include "eval/protocol.h"
#include "util/util.h"

#include <string.h>

json_t *ks_job_to_json(const ks_job *job) {
  json_t *j = json_object();
  json_object_set_new(j, "task", json_string(job->task_path));
  json_object_set_new(j, "backend", json_string(job->backend));
  json_object_set_new(j, "artifact", json_string(job->artifact));
  json_object_set_new(j, "reference", json_boolean(job->reference));
  json_object_set_new(j, "timing", json_boolean(job->timing));
  json_t *w = json_array();
  for (int i = 0; i < job->n_workloads; i++)
    json_array_append_new(w, json_integer(job->workloads[i]));
  json_object_set_new(j, "workloads", w);
  json_t *s = json_array();
  for (int i = 0; i < job->n_seeds; i++)
    json_array_append_new(s, json_integer((json_int_t)job->seeds[i]));
  json_object_set_new(j, "seeds", s);
  json_object_set_new(j, "timing_seed",
                      json_integer((json_int_t)job->timing_seed));
  json_object_set_new(j, "ref_dir", json_string(job->ref_dir));
  json_object_set_new(j, "threads", json_integer(job->threads));
  json_object_set_new(j, "min_time_s", json_real(job->topt.min_time_s));
  json_object_set_new(j, "min_reps", json_integer(job->topt.min_reps));
  json_object_set_new(j, "max_reps", json_integer(job->topt.max_reps));
  json_object_set_new(j, "warmup", json_integer(job->topt.warmup));
  json_object_set_new(j, "max_wall_s", json_real(job->topt.max_wall_s));
  json_object_set_new(j, "flush", json_boolean(job->topt.flush));
  json_object_set_new(j, "mem_limit_bytes", json_integer(job->mem_limit_bytes));
  json_object_set_new(j, "cpu_limit_s", json_real(job->cpu_limit_s));
  return j;
}

ks_code ks_job_from_json(const json_t *j, ks_job *job, ks_err *err) {
  memset(job, 0, sizeof *job);
  json_t *w = NULL, *s = NULL;
  const char *task = NULL, *backend = NULL, *artifact = NULL, *ref = NULL;
  int reference = 0, timing = 0, flush = 0;
  json_int_t tseed = 0, mem = 0;
  json_error_t je;
  if (json_unpack_ex(
          (json_t *)j, &je, 0,
          "{s:s, s:s, s:s, s:b, s:b, s:o, s:o, s:I, s:s, s:i, "
          "s:F, s:i, s:i, s:i, s:F, s:b, s:I, s:F}",
          "task", &task, "backend", &backend, "artifact", &artifact,
          "reference", &reference, "timing", &timing, "workloads", &w, "seeds",
          &s, "timing_seed", &tseed, "ref_dir", &ref, "threads", &job->threads,
          "min_time_s", &job->topt.min_time_s, "min_reps", &job->topt.min_reps,
          "max_reps", &job->topt.max_reps, "warmup", &job->topt.warmup,
          "max_wall_s", &job->topt.max_wall_s, "flush", &flush,
          "mem_limit_bytes", &mem, "cpu_limit_s", &job->cpu_limit_s) != 0)
    return ks_err_set(err, KS_ERR_INTERNAL, "bad runner job: %s", je.text);
  ks_strlcpy(job->task_path, task, sizeof job->task_path);
  ks_strlcpy(job->backend, backend, sizeof job->backend);
  ks_strlcpy(job->artifact, artifact, sizeof job->artifact);
  ks_strlcpy(job->ref_dir, ref, sizeof job->ref_dir);
  job->reference = reference;
  job->timing = timing;
  job->topt.flush = flush;
  job->timing_seed = (uint64_t)tseed;
  job->mem_limit_bytes = mem;
  size_t i;
  json_t *v;
  json_array_foreach(w, i, v) {
    if (job->n_workloads < KS_MAX_WORKLOADS)
      job->workloads[job->n_workloads++] = (int)json_integer_value(v);
  }
  json_array_foreach(s, i, v) {
    if (job->n_seeds < KS_MAX_SEEDS)
      job->seeds[job->n_seeds++] = (uint64_t)json_integer_value(v);
  }
  return KS_OK;
}

void ks_ref_file(const ks_job *job, const ks_task *task, const ks_workload *w,
                 uint64_t seed, const char *out_name, char *path, size_t n) {
  char hex[17];
  ks_hash_hex(ks_hash64(w->axis, sizeof(int64_t) * (size_t)task->n_axes, 5),
              hex);
  snprintf(path, n, "%.3900s/%s-s%llu-%s.bin", job->ref_dir, hex,
           (unsigned long long)seed, out_name);
}
