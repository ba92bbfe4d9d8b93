/* worker.c — the worker loop of worker.h. The main thread takes and
 * evaluates jobs; a heartbeat thread with its own connection refreshes the
 * registration and touches the pending entry of the job in hand. Delivery
 * is at least once: a result is posted before the job is acknowledged, so a
 * worker killed in between makes a duplicate, which the run drops by job
 * id. */
#include "dist/worker.h"
#include "backend/roofline.h"
#include "dist/job.h"
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

void ks_worker_opts_default(ks_worker_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = "c";
  o->claim_after_s = 30;
}

typedef struct worker {
  const ks_worker_opts *o;
  volatile int *stop;
  ks_broker *b;
  char name[128], key[KS_DIST_KEY_MAX], reg_key[KS_DIST_KEY_MAX + 64];
  char target[17], identity[512];
  json_t *machine; /* what every result carries */
  char *reg_text;  /* the registration value */
  int ttl_s;
  double hb_s;
  /* the job in hand, for the heartbeat thread */
  pthread_mutex_t mu;
  char entry[64];
  int hb_stop;
  /* the evaluator of the last task */
  char ev_key[512];
  ks_task task;
  bool have_task;
  ks_evaluator *ev;
  int answered;
} worker;

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static void *heartbeat(void *arg) {
  worker *w = arg;
  ks_broker *b = NULL;
  ks_err e;
  while (!__atomic_load_n(&w->hb_stop, __ATOMIC_SEQ_CST)) {
    if (!b)
      ks_broker_connect(&w->o->url, &b, &e);
    else if (ks_broker_set(b, w->reg_key, w->reg_text, w->ttl_s, &e) ==
             KS_ERR_IO)
      ks_broker_reconnect(b, &e);
    char entry[64];
    pthread_mutex_lock(&w->mu);
    ks_strlcpy(entry, w->entry, sizeof entry);
    pthread_mutex_unlock(&w->mu);
    if (b && entry[0])
      ks_broker_touch(b, w->key, w->name, entry, &e);
    for (double t = 0;
         t < w->hb_s && !__atomic_load_n(&w->hb_stop, __ATOMIC_SEQ_CST);
         t += 0.05)
      sleep_s(0.05);
  }
  ks_broker_free(b);
  return NULL;
}

static void set_entry(worker *w, const char *entry) {
  pthread_mutex_lock(&w->mu);
  ks_strlcpy(w->entry, entry, sizeof w->entry);
  pthread_mutex_unlock(&w->mu);
}

/* Runs op until it is not a broken connection (reconnecting in between) or
 * the worker is told to stop. */
#define RETRY(w, call)                                                         \
  ({                                                                           \
    ks_code rc_;                                                               \
    while ((rc_ = (call)) == KS_ERR_IO && !*(w)->stop) {                       \
      ks_log(KS_LOG_INFO, "%s; reconnecting", err->msg);                       \
      if (ks_broker_reconnect_wait((w)->b, (w)->stop, 0, err) == KS_OK)        \
        ks_broker_ensure_group((w)->b, (w)->key, err);                         \
    }                                                                          \
    rc_;                                                                       \
  })

static ks_code post(worker *w, const char *reply_to, const char *text,
                    ks_err *err) {
  return RETRY(w, ks_broker_add(w->b, reply_to, text, NULL, err));
}

/* Removes reference outputs a killed worker left half-written
 * (<cache>/ref/<task hash>-X/NAME.tmp.PID), which the next evaluator would
 * otherwise rename into place. Called under the evaluator lock. */
static void drop_stale_refs(const char *cache, const char *task_hash) {
  char ref[4200];
  snprintf(ref, sizeof ref, "%s/ref", cache);
  DIR *d = opendir(ref);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, task_hash, 16) || e->d_name[16] != '-')
      continue;
    char sub[4500];
    snprintf(sub, sizeof sub, "%s/%s", ref, e->d_name);
    DIR *s = opendir(sub);
    struct dirent *f;
    while (s && (f = readdir(s))) {
      if (!strstr(f->d_name, ".tmp."))
        continue;
      char path[4800];
      snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
      unlink(path);
    }
    if (s)
      closedir(s);
  }
  closedir(d);
}

/* Writes the job's task into this worker's cache and loads it (once per
 * task hash and evaluation options). */
static ks_code evaluator_for(worker *w, const ks_dist_job *j, ks_err *err) {
  char key[512];
  snprintf(key, sizeof key, "%s|%d|%g|%g|%d|%d|%d|%g", j->task_hash, j->n_seeds,
           j->topt.min_time_s, j->topt.max_wall_s, j->topt.min_reps,
           j->topt.flush, j->timing, j->timeout_s);
  if (w->ev && !strcmp(key, w->ev_key))
    return KS_OK;
  ks_evaluator_free(w->ev);
  w->ev = NULL;
  if (w->have_task)
    ks_task_free(&w->task);
  w->have_task = false;
  char cache[4096], dir[4300], path[4500];
  ks_code rc = ks_cache_dir(cache, sizeof cache, err);
  if (rc)
    return rc;
  snprintf(dir, sizeof dir, "%s/worker-tasks/%s", cache, j->task_hash);
  if ((rc = ks_mkdir_p(dir, err)))
    return rc;
  snprintf(path, sizeof path, "%s/task.json", dir);
  if ((rc =
           ks_write_file_atomic(path, j->task_json, strlen(j->task_json), err)))
    return rc;
  snprintf(path, sizeof path, "%s/%s", dir, j->reference_name);
  if ((rc =
           ks_write_file_atomic(path, j->reference, strlen(j->reference), err)))
    return rc;
  if ((rc = ks_task_load(dir, &w->task, err)))
    return ks_err_set(err, KS_ERR_INPUT, "job %s: the task does not load: %s",
                      j->job_id, err->msg);
  w->have_task = true;
  char hex[17];
  ks_hash_hex(w->task.hash, hex);
  if (strcmp(hex, j->task_hash) || strcmp(w->task.name, j->task_name))
    return ks_err_set(err, KS_ERR_INPUT,
                      "job %s: the task sent (%s, hash %s) is not the one "
                      "named (%s, hash %s)",
                      j->job_id, w->task.name, hex, j->task_name, j->task_hash);
  ks_eval_opts eo;
  ks_eval_opts_default(&eo);
  eo.backend = w->o->backend;
  eo.threads = w->o->threads;
  eo.n_seeds = j->n_seeds;
  eo.topt.min_time_s = j->topt.min_time_s;
  eo.topt.max_wall_s = j->topt.max_wall_s;
  eo.topt.min_reps = j->topt.min_reps;
  eo.topt.flush = j->topt.flush;
  eo.timing = j->timing;
  eo.timeout_s = j->timeout_s;
  eo.quiet = true;
  /* Workers on one host share the cache, and the evaluator settles the
   * reference outputs of its folder as a whole (eval.c renames every
   * *.tmp.* file there), so two building the same task's reference at once
   * would publish each other's unfinished files: one at a time. */
  snprintf(path, sizeof path, "%s/evaluator.lock", dir);
  int lock = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0)
    flock(lock, LOCK_EX);
  drop_stale_refs(cache, j->task_hash);
  rc = ks_evaluator_new(&w->task, &eo, &w->ev, err);
  if (lock >= 0)
    close(lock);
  if (rc)
    return rc;
  ks_strlcpy(w->ev_key, key, sizeof w->ev_key);
  return KS_OK;
}

/* Evaluates one decoded job; *text is the result to post. KS_OK also for a
 * candidate that failed; an error only when this worker cannot evaluate. */
static ks_code evaluate(worker *w, ks_dist_job *j, char **text, ks_err *err) {
  *text = NULL;
  ks_err e;
  if (strcmp(j->target, w->target) || strcmp(j->backend, w->o->backend)) {
    char why[700];
    snprintf(why, sizeof why,
             "job %s was sent to target %s (%s) but reached worker %s of "
             "target %s (%s)",
             j->job_id, j->target, j->backend, w->name, w->target,
             w->o->backend);
    *text = ks_dist_result_failure(j->job_id, j->cand_hash, w->machine,
                                   KS_EVAL_REJECTED, why);
    return KS_OK;
  }
  ks_code rc = evaluator_for(w, j, &e);
  if (rc == KS_ERR_INPUT) {
    *text = ks_dist_result_failure(j->job_id, j->cand_hash, w->machine,
                                   KS_EVAL_REJECTED, e.msg);
    return KS_OK;
  }
  if (rc) {
    *err = e;
    return rc;
  }
  ks_candidate cand;
  memset(&cand, 0, sizeof cand);
  char path[160];
  snprintf(path, sizeof path, "<job %s>", j->job_id);
  rc = ks_candidate_parse(j->source, path, w->task.name, &cand, &e);
  const char *k;
  json_t *v;
  json_object_foreach(j->params, k, v) {
    if (!rc)
      rc = ks_candidate_set_param(&cand, k, json_string_value(v), &e);
  }
  if (rc) {
    *text = ks_dist_result_failure(j->job_id, j->cand_hash, w->machine,
                                   KS_EVAL_REJECTED, e.msg);
    ks_candidate_free(&cand);
    return KS_OK;
  }
  ks_eval_result res;
  rc = ks_evaluate(w->ev, &cand, &res, &e);
  ks_candidate_free(&cand);
  if (rc == KS_ERR_INPUT || rc == KS_ERR_CANDIDATE) {
    *text = ks_dist_result_failure(j->job_id, j->cand_hash, w->machine,
                                   KS_EVAL_REJECTED, e.msg);
    rc = KS_OK;
  } else if (rc) {
    *err = e;
  } else {
    *text = ks_dist_result_encode(j, w->machine, &w->task, &res);
  }
  ks_eval_result_free(&res);
  return rc;
}

/* One job from the stream: decode, evaluate (or give up on it), post, ack. */
static ks_code handle(worker *w, const char *entry, const char *json,
                      int64_t deliveries, ks_err *err) {
  ks_dist_job j;
  ks_err e;
  char *text = NULL;
  ks_code rc = ks_dist_job_decode(json, &j, &e);
  double t0 = ks_now();
  if (rc) {
    ks_log(KS_LOG_INFO, "entry %s: %s", entry, e.msg);
    if (j.reply_to[0] && !strncmp(j.reply_to, "ksearch:results:", 16))
      text = ks_dist_result_failure(j.job_id, j.cand_hash, w->machine,
                                    KS_EVAL_REJECTED, e.msg);
    rc = KS_OK;
  } else if (j.echo) {
    text = ks_dist_result_failure(j.job_id, "", w->machine, KS_EVAL_OK, "");
  } else if (deliveries > j.max_tries) {
    char why[400];
    snprintf(why, sizeof why,
             "the job was taken %lld times and every worker that took it "
             "stopped before answering (killed, or cut off from the "
             "broker); given up after max_tries = %d",
             (long long)deliveries - 1, j.max_tries);
    ks_log(KS_LOG_INFO, "job %s: %s", j.job_id, why);
    text = ks_dist_result_failure(j.job_id, j.cand_hash, w->machine,
                                  KS_EVAL_CRASH, why);
  } else {
    if (!w->o->quiet)
      ks_log(KS_LOG_INFO, "job %s: evaluating (delivery %lld)", j.job_id,
             (long long)deliveries);
    set_entry(w, entry);
    rc = evaluate(w, &j, &text, err);
  }
  if (!rc && text) {
    rc = post(w, j.reply_to, text, err);
    if (!rc && !w->o->quiet && !j.echo)
      ks_log(KS_LOG_INFO, "job %s: answered in %.1f s", j.job_id,
             ks_now() - t0);
  }
  if (!rc)
    rc = RETRY(w, ks_broker_ack(w->b, w->key, entry, err));
  set_entry(w, "");
  free(text);
  ks_dist_job_free(&j);
  if (!rc)
    w->answered++;
  return rc;
}

static ks_code setup(worker *w, ks_err *err) {
  const ks_worker_opts *o = w->o;
  ks_roofline roof;
  int threads = o->threads > 0 ? o->threads : ks_nproc();
  ks_code rc = ks_roofline_get(o->backend, threads, false, &roof, err);
  if (rc)
    return rc;
  char device[256], ident[512];
  ks_strlcpy(device, roof.device, sizeof device);
  ks_strlcpy(ident, roof.device, sizeof ident);
  if (!strcmp(o->backend, "opencl") &&
      !ks_roofline_opencl_identity(device, sizeof device, ident, sizeof ident))
    return ks_err_set(err, KS_ERR_ENV, "worker: no OpenCL device here");
  ks_dist_target(o->backend, ident, threads, w->identity, w->target);
  ks_dist_jobs_key(w->target, w->key);
  char host[128] = "host";
  gethostname(host, sizeof host - 1);
  ks_rng rng;
  ks_rng_seed(&rng, (uint64_t)ks_now_ns(), (uint64_t)getpid());
  snprintf(w->name, sizeof w->name, "%.64s-%d-%04x", host, (int)getpid(),
           (unsigned)(ks_rng_u64(&rng) & 0xffff));
  snprintf(w->reg_key, sizeof w->reg_key, "ksearch:worker:%s", w->name);
  w->machine = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "worker", w->name,
                         "host", host, "backend", o->backend, "device", device,
                         "target", w->target, "threads", threads);
  json_t *reg = json_deep_copy(w->machine);
  json_object_set_new(reg, "identity", json_string(w->identity));
  json_object_set_new(reg, "pid", json_integer(getpid()));
  json_object_set_new(reg, "claim_after_s", json_real(o->claim_after_s));
  json_object_set_new(reg, "roofline", ks_roofline_to_json(&roof));
  w->reg_text = json_dumps(reg, JSON_COMPACT);
  json_decref(reg);
  w->hb_s = o->claim_after_s / 4 < 2 ? o->claim_after_s / 4 : 2;
  if (w->hb_s < 0.1)
    w->hb_s = 0.1;
  w->ttl_s = (int)ceil(w->hb_s * 3) + 1;
  if ((rc = ks_broker_connect(&o->url, &w->b, err)))
    return rc;
  if ((rc = ks_broker_ensure_group(w->b, w->key, err)))
    return rc;
  return ks_broker_set(w->b, w->reg_key, w->reg_text, w->ttl_s, err);
}

ks_code ks_worker_run(const ks_worker_opts *o, volatile int *stop,
                      ks_err *err) {
  worker *w = ks_xcalloc(1, sizeof *w);
  w->o = o;
  w->stop = stop;
  pthread_mutex_init(&w->mu, NULL);
  ks_code rc = setup(w, err);
  pthread_t hb;
  bool hb_started = false;
  if (!rc) {
    hb_started = pthread_create(&hb, NULL, heartbeat, w) == 0;
    char disp[700];
    ks_broker_url_display(&o->url, disp, sizeof disp);
    if (!o->quiet)
      ks_log(KS_LOG_INFO, "worker %s: %s, target %s, jobs from %s on %s",
             w->name, w->identity, w->target, w->key, disp);
  }
  int64_t claim_ms = (int64_t)(o->claim_after_s * 1000);
  while (!rc && !*stop && !(o->max_jobs > 0 && w->answered >= o->max_jobs)) {
    char entry[64];
    char *json = NULL;
    int64_t deliveries = 1;
    rc = RETRY(w, ks_broker_claim_idle(w->b, w->key, w->name, claim_ms, entry,
                                       &json, &deliveries, err));
    if (!rc && !entry[0]) {
      deliveries = 1;
      rc = RETRY(w, ks_broker_read_group(w->b, w->key, w->name, 500, entry,
                                         &json, err));
    }
    if (!rc && entry[0]) {
      if (deliveries > 1 && !o->quiet)
        ks_log(KS_LOG_INFO, "claimed entry %s, left by a stopped worker",
               entry);
      rc = handle(w, entry, json, deliveries, err);
    }
    free(json);
    if (rc == KS_ERR_IO && *stop)
      rc = KS_OK;
  }
  if (hb_started) {
    __atomic_store_n(&w->hb_stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(hb, NULL);
  }
  if (w->b) {
    ks_err e2;
    ks_broker_del_key(w->b, w->reg_key, &e2);
  }
  ks_broker_free(w->b);
  ks_evaluator_free(w->ev);
  if (w->have_task)
    ks_task_free(&w->task);
  json_decref(w->machine);
  free(w->reg_text);
  pthread_mutex_destroy(&w->mu);
  free(w);
  return rc;
}
