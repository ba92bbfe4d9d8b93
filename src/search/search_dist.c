/* search_dist.c — `ksearch run --broker URL --parallel N` (DESIGN.md:
 * Workers). The planner proposes up to N candidates at once, each from an
 * open plan no other job in flight holds (the node is marked running while
 * its job is out); each becomes a job on the target's stream; results come
 * back on the run's own stream and fold into the store and the world model
 * in arrival order. With N = 1 the rounds are those of a local run: propose,
 * evaluate, observe.
 *
 * Exactly once: every job has an id unique in the store (ks_store_begin_job)
 * and a result is recorded only while its evaluation is running, so a job
 * delivered twice (a worker killed after answering, a job sent again after
 * the broker restarted) is recorded once. A resumed run sends its running
 * evaluations again under the same job ids and reads its result stream from
 * the start, so results posted while it was down are not lost. */
#include "dist/job.h"
#include "llm/llm.h"
#include "search/search_internal.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_INFLIGHT 256
#define WAIT_WORKERS_S 60

typedef struct inflight {
  ks_store_job job;
  char entry[64]; /* stream entry of the job */
  char cand_hash[17];
} inflight;

typedef struct waiter { /* an identical candidate proposed while in flight */
  int64_t cand_id;
  char node_id[KS_WM_ID_MAX];
} waiter;

typedef struct ks_search_dist {
  ks_broker_url url;
  ks_broker *b;
  char run_id[17], target[17], jobs_key[KS_DIST_KEY_MAX];
  char results_key[KS_DIST_KEY_MAX], last[64];
  char *task_json, *reference, ref_name[128];
  inflight fl[MAX_INFLIGHT];
  int n_fl;
  waiter *wt;
  int n_wt, cap_wt;
  json_t *running; /* node id -> jobs in flight on it */
} ks_search_dist;

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* Picks the target: the one of --target, else the only one that live
 * workers of the run's backend registered. */
static ks_code find_target(run_state *s, ks_roofline *roof, ks_err *err) {
  ks_search_dist *d = s->dist;
  const ks_search_opts *o = s->o;
  double until = ks_now() + WAIT_WORKERS_S;
  bool said = false;
  for (;;) {
    json_t *regs;
    ks_code rc = ks_broker_scan_json(d->b, "ksearch:worker:*", &regs, err);
    if (rc)
      return rc;
    json_t *pick = NULL, *targets = json_object();
    size_t i;
    json_t *r;
    json_array_foreach(regs, i, r) {
      const char *be = json_string_value(json_object_get(r, "backend"));
      const char *t = json_string_value(json_object_get(r, "target"));
      const char *id = json_string_value(json_object_get(r, "identity"));
      if (!be || !t || !id || strcmp(be, o->backend))
        continue;
      if (o->target && strcmp(o->target, t) && strcmp(o->target, id))
        continue;
      json_object_set_new(targets, t, json_string(id));
      if (!pick)
        pick = r;
    }
    if (json_object_size(targets) > 1) {
      ks_buf list;
      ks_buf_init(&list);
      const char *k;
      json_t *v;
      json_object_foreach(targets, k, v)
          ks_buf_printf(&list, " %s (%s)", k, json_string_value(v));
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "--broker: workers of %d targets of backend %s are "
                      "live:%s; timings of different targets are never "
                      "mixed, so give --target one of them",
                      (int)json_object_size(targets), o->backend, list.data);
      ks_buf_free(&list);
    } else if (pick) {
      ks_strlcpy(d->target, json_string_value(json_object_get(pick, "target")),
                 sizeof d->target);
      ks_err e2;
      if (ks_roofline_from_json(json_object_get(pick, "roofline"), roof, &e2) !=
          KS_OK)
        memset(roof, 0, sizeof *roof);
      if (!o->quiet)
        ks_log(KS_LOG_INFO, "broker: target %s (%s), first worker %s",
               d->target, json_string_value(json_object_get(pick, "identity")),
               json_string_value(json_object_get(pick, "worker")));
    }
    json_decref(targets);
    json_decref(regs);
    if (rc || d->target[0])
      return rc;
    if (ks_now() >= until || ks_search_interrupted())
      return ks_err_set(err, KS_ERR_ENV,
                        "--broker: no live worker of backend %s%s%s after "
                        "%d s; start one with `ksearch worker --broker URL "
                        "--backend %s`",
                        o->backend, o->target ? " and target " : "",
                        o->target ? o->target : "", WAIT_WORKERS_S, o->backend);
    if (!said && !o->quiet)
      ks_log(KS_LOG_INFO, "broker: waiting for a worker of backend %s",
             o->backend);
    said = true;
    sleep_s(0.5);
  }
}

ks_code ks_search_dist_open(run_state *s, ks_roofline *roof, ks_err *err) {
  memset(roof, 0, sizeof *roof);
  ks_search_dist *d = ks_xcalloc(1, sizeof *d);
  s->dist = d;
  d->running = json_object();
  ks_strlcpy(d->last, "0-0", sizeof d->last);
  ks_code rc = ks_broker_url_parse(s->o->broker, &d->url, err);
  if (!rc)
    rc = ks_broker_connect(&d->url, &d->b, err);
  /* the run id names the result stream and prefixes job ids: stable for
   * the run folder across resumed sessions */
  ks_store_run run;
  bool found = false;
  char real[PATH_MAX];
  if (!rc)
    rc = ks_store_get_run(s->store, &run, &found, err);
  if (!rc) {
    if (!realpath(s->dir, real))
      ks_strlcpy(real, s->dir, sizeof real);
    char seed[64];
    snprintf(seed, sizeof seed, "%.6f", found ? run.created : 0.0);
    ks_hash_hex(ks_hash_str(real, ks_hash_str(seed, 0)), d->run_id);
    if (found)
      ks_store_run_free(&run);
    snprintf(d->results_key, sizeof d->results_key, "ksearch:results:%s",
             d->run_id);
  }
  if (!rc)
    rc = find_target(s, roof, err);
  if (!rc) {
    ks_dist_jobs_key(d->target, d->jobs_key);
    rc = ks_broker_ensure_group(d->b, d->jobs_key, err);
  }
  if (!rc)
    rc = ks_read_file(s->task.json_path, &d->task_json, NULL, err);
  if (!rc)
    rc = ks_read_file(s->task.reference_path, &d->reference, NULL, err);
  if (!rc) {
    const char *slash = strrchr(s->task.reference_path, '/');
    ks_strlcpy(d->ref_name, slash ? slash + 1 : s->task.reference_path,
               sizeof d->ref_name);
  }
  return rc;
}

void ks_search_dist_close(run_state *s) {
  ks_search_dist *d = s->dist;
  if (!d)
    return;
  ks_broker_free(d->b);
  free(d->task_json);
  free(d->reference);
  free(d->wt);
  json_decref(d->running);
  memset(&d->url, 0, sizeof d->url);
  free(d);
  s->dist = NULL;
}

/* Broker calls retry across a broken connection until the run stops. */
static ks_code reconnect(run_state *s, ks_err *err);
#define BROKER(s, call)                                                        \
  ({                                                                           \
    ks_code rc_;                                                               \
    while ((rc_ = (call)) == KS_ERR_IO && !ks_search_interrupted()) {          \
      if ((rc_ = reconnect(s, err)))                                           \
        break;                                                                 \
    }                                                                          \
    rc_;                                                                       \
  })

/* ---- nodes held by jobs in flight */
static void hold(run_state *s, const char *node) {
  json_t *c = json_object_get(s->dist->running, node);
  json_int_t n = c ? json_integer_value(c) : 0;
  const ks_wm_node *x = ks_wm_find(s->wm, node);
  ks_err e;
  if (n == 0 && x && x->status == KS_WM_OPEN)
    ks_wm_set_status(s->wm, node, KS_WM_RUNNING, &e);
  json_object_set_new(s->dist->running, node, json_integer(n + 1));
}

static void release(run_state *s, const char *node) {
  json_t *c = json_object_get(s->dist->running, node);
  json_int_t n = c ? json_integer_value(c) - 1 : 0;
  if (n > 0) {
    json_object_set_new(s->dist->running, node, json_integer(n));
    return;
  }
  json_object_del(s->dist->running, node);
  const ks_wm_node *x = ks_wm_find(s->wm, node);
  ks_err e;
  if (x && x->status == KS_WM_RUNNING)
    ks_wm_set_status(s->wm, node, KS_WM_OPEN, &e);
}

/* Sends (or sends again) the job of f. */
static ks_code send_job(run_state *s, inflight *f, ks_err *err) {
  ks_search_dist *d = s->dist;
  const ks_search_opts *o = s->o;
  ks_store_candidate c;
  memset(&c, 0, sizeof c);
  ks_code rc = ks_store_get_candidate(s->store, f->job.candidate_id, &c, err);
  if (rc)
    return rc;
  ks_dist_job j;
  memset(&j, 0, sizeof j);
  ks_strlcpy(j.job_id, f->job.job_id, sizeof j.job_id);
  ks_strlcpy(j.reply_to, d->results_key, sizeof j.reply_to);
  ks_strlcpy(j.target, d->target, sizeof j.target);
  ks_strlcpy(j.backend, o->backend, sizeof j.backend);
  ks_strlcpy(j.task_name, s->task.name, sizeof j.task_name);
  ks_hash_hex(s->task.hash, j.task_hash);
  ks_strlcpy(j.reference_name, d->ref_name, sizeof j.reference_name);
  j.task_json = d->task_json;
  j.reference = d->reference;
  j.source = c.source;
  j.params = json_loads(c.params_json, 0, NULL);
  ks_strlcpy(j.cand_hash, c.hash, sizeof j.cand_hash);
  ks_strlcpy(f->cand_hash, c.hash, sizeof f->cand_hash);
  j.n_seeds = o->eval.n_seeds;
  j.topt = o->eval.topt;
  j.timing = o->eval.timing;
  j.timeout_s = o->eval.timeout_s;
  j.max_tries = o->max_tries;
  char *text = ks_dist_job_encode(&j);
  json_decref(j.params);
  ks_store_candidate_free(&c);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "run: cannot encode a job");
  rc = BROKER(s, ks_broker_add(d->b, d->jobs_key, text, f->entry, err));
  free(text);
  return rc;
}

static ks_code reconnect(run_state *s, ks_err *err) {
  ks_search_dist *d = s->dist;
  double next_log = 0, delay = 0.1;
  for (;;) {
    ks_code rc = ks_broker_reconnect(d->b, err);
    if (rc == KS_OK)
      break;
    if (rc == KS_ERR_INPUT || ks_search_interrupted())
      return rc;
    if (ks_now() >= next_log) {
      ks_log(KS_LOG_INFO, "%s; retrying", err->msg);
      next_log = ks_now() + 10;
    }
    sleep_s(delay);
    delay = delay * 2 > 2 ? 2 : delay * 2;
  }
  ks_log(KS_LOG_INFO, "broker: connected again");
  ks_code rc = ks_broker_ensure_group(d->b, d->jobs_key, err);
  /* a job the broker lost (not persisted yet) is sent again; one that a
   * worker already answered comes back as a duplicate and is dropped */
  for (int i = 0; !rc && i < d->n_fl; i++) {
    bool there = true;
    rc = ks_broker_exists(d->b, d->jobs_key, d->fl[i].entry, &there, err);
    if (!rc && !there) {
      rc = send_job(s, &d->fl[i], err);
    }
  }
  return rc;
}

static ks_code start_job(run_state *s, int64_t cand_id, const char *node,
                         ks_err *err) {
  ks_search_dist *d = s->dist;
  inflight *f = &d->fl[d->n_fl];
  memset(f, 0, sizeof *f);
  ks_code rc =
      ks_store_begin_job(s->store, cand_id, node, d->run_id, &f->job, err);
  if (!rc)
    rc = send_job(s, f, err);
  if (!rc) {
    d->n_fl++;
    hold(s, node);
  }
  return rc;
}

static int inflight_of_cand(const ks_search_dist *d, int64_t cand) {
  for (int i = 0; i < d->n_fl; i++)
    if (d->fl[i].job.candidate_id == cand)
      return i;
  return -1;
}

/* One proposal (consumed): a duplicate is observed at once (or when its
 * twin in flight answers), a new candidate becomes a job. *made: a job or
 * a waiter was added. */
static ks_code take_proposal(run_state *s, ks_proposal *prp, bool *made,
                             ks_err *err) {
  ks_search_dist *d = s->dist;
  ks_proposal pr = *prp;
  ks_code rc = KS_OK;
  char hex[17];
  ks_hash_hex(ks_hash_str(pr.cand.source, 0), hex);
  char *params = ks_candidate_params_json(&pr.cand);
  int64_t cand_id = 0;
  rc = ks_store_find_candidate(s->store, hex, params, &cand_id, err);
  char key[32];
  snprintf(key, sizeof key, "%lld", (long long)cand_id);
  json_t *sc = cand_id ? json_object_get(s->score_of, key) : NULL;
  if (!rc && sc) {
    /* identical candidate already measured: reuse its result */
    rc = s->pi->observe(s->pl, s->wm, pr.node_id, cand_id,
                        json_number_value(sc), NULL, err);
    if (!rc)
      rc = ks_search_save_tree(s, err);
  } else if (!rc && cand_id && inflight_of_cand(d, cand_id) >= 0) {
    if (d->n_wt == d->cap_wt) {
      d->cap_wt = d->cap_wt ? 2 * d->cap_wt : 8;
      d->wt = realloc(d->wt, (size_t)d->cap_wt * sizeof *d->wt);
      if (!d->wt)
        abort();
    }
    d->wt[d->n_wt].cand_id = cand_id;
    ks_strlcpy(d->wt[d->n_wt].node_id, pr.node_id, KS_WM_ID_MAX);
    d->n_wt++;
    hold(s, pr.node_id);
    *made = true;
  } else if (!rc) {
    if (!cand_id)
      rc = ks_store_add_candidate(s->store, pr.node_id, pr.cand.source, params,
                                  hex, &cand_id, NULL, err);
    s->pi->remember(s->pl, cand_id, params);
    if (!rc)
      rc = start_job(s, cand_id, pr.node_id, err);
    *made = !rc;
  }
  free(params);
  ks_proposal_free(&pr);
  return rc;
}

/* Proposals for up to `slots` free slots: one, or a batch from distinct
 * plans where the planner writes them concurrently (the LLM's coder).
 * *made: at least one job or waiter was added. */
static ks_code propose_some(run_state *s, int *iteration, int slots,
                            bool *exhausted, bool *made, ks_err *err) {
  *made = false;
  int k = slots < 1 ? 1 : slots > 64 ? 64 : slots;
  ks_proposal *pr = ks_xcalloc((size_t)k, sizeof *pr); /* 21 KB each */
  int n = 0;
  ks_code rc;
  if (k > 1 && s->pi->propose_batch) {
    rc = s->pi->propose_batch(s->pl, s->wm, (*iteration)++, k, pr, &n, err);
  } else {
    rc = s->pi->propose(s->pl, s->wm, (*iteration)++, &pr[0], err);
    n = !rc && pr[0].node_id[0] ? 1 : 0;
  }
  if (!rc && n == 0)
    *exhausted = true;
  for (int i = 0; i < n; i++) {
    bool m = false;
    if (!rc)
      rc = take_proposal(s, &pr[i], &m, err);
    else
      ks_proposal_free(&pr[i]);
    *made |= m;
  }
  free(pr);
  return rc;
}

/* One entry of the result stream. */
static ks_code take_result(run_state *s, const char *text, double t0,
                           ks_err *err) {
  ks_search_dist *d = s->dist;
  ks_dist_result r;
  ks_err e;
  if (ks_dist_result_decode(text, s->task.n_workloads, &r, &e)) {
    /* a result that names its job but cannot be read still ends the job
     * (as crash, with the reason), so the run does not wait for it */
    ks_log(KS_LOG_INFO, "broker: unreadable result: %s", e.msg);
    json_t *o = json_loads(text, 0, NULL);
    const char *id = json_string_value(json_object_get(o, "job_id"));
    int k = -1;
    for (int i = 0; id && i < d->n_fl; i++)
      if (!strcmp(d->fl[i].job.job_id, id))
        k = i;
    ks_dist_result_free(&r);
    char reason[2100];
    snprintf(reason, sizeof reason, "the worker's result could not be read: %s",
             e.msg);
    char *fake = k >= 0 ? ks_dist_result_failure(id, d->fl[k].cand_hash,
                                                 json_object_get(o, "machine"),
                                                 KS_EVAL_CRASH, reason)
                        : NULL;
    json_decref(o);
    if (!fake)
      return KS_OK;
    ks_code rc = ks_dist_result_decode(fake, s->task.n_workloads, &r, err);
    free(fake);
    if (rc)
      return rc;
  }
  ks_store_job job;
  ks_store_job_state st;
  ks_code rc = ks_store_job_lookup(s->store, r.job_id, &job, &st, err);
  int k = -1;
  for (int i = 0; i < d->n_fl; i++)
    if (!strcmp(d->fl[i].job.job_id, r.job_id))
      k = i;
  if (!rc && (st != KS_STORE_JOB_RUNNING || k < 0)) {
    ks_log(KS_LOG_INFO, "broker: job %s answered again (%s); duplicate dropped",
           r.job_id, st == KS_STORE_JOB_UNKNOWN ? "unknown job" : "recorded");
  } else if (!rc && strcmp(d->fl[k].cand_hash, r.cand_hash)) {
    ks_log(KS_LOG_INFO,
           "broker: job %s answered for candidate %s, not %s; dropped",
           r.job_id, r.cand_hash, d->fl[k].cand_hash);
  } else if (!rc) {
    inflight f = d->fl[k];
    d->fl[k] = d->fl[--d->n_fl];
    release(s, f.job.node_id);
    rc = ks_search_record(s, f.job.node_id, f.job.candidate_id, f.job.eval_id,
                          &r.res, r.result_json, t0, err);
    /* identical candidates proposed meanwhile learn the same score */
    char key[32];
    snprintf(key, sizeof key, "%lld", (long long)f.job.candidate_id);
    double score = json_number_value(json_object_get(s->score_of, key));
    for (int i = 0; !rc && i < d->n_wt;) {
      if (d->wt[i].cand_id != f.job.candidate_id) {
        i++;
        continue;
      }
      waiter w = d->wt[i];
      d->wt[i] = d->wt[--d->n_wt];
      release(s, w.node_id);
      rc = s->pi->observe(s->pl, s->wm, w.node_id, w.cand_id, score, NULL, err);
      if (!rc)
        rc = ks_search_save_tree(s, err);
    }
  }
  ks_dist_result_free(&r);
  return rc;
}

static ks_code read_results(run_state *s, double t0, ks_err *err) {
  ks_search_dist *d = s->dist;
  char ids[16][64];
  char *texts[16];
  int n = 0;
  ks_code rc = BROKER(s, ks_broker_read(d->b, d->results_key, d->last, 500, 16,
                                        ids, texts, &n, err));
  for (int i = 0; i < n; i++) {
    if (!rc && texts[i])
      rc = take_result(s, texts[i], t0, err);
    free(texts[i]);
    if (!rc) {
      ks_strlcpy(d->last, ids[i], sizeof d->last);
      /* recorded (committed) first, then dropped from the stream */
      rc = BROKER(s, ks_broker_del(d->b, d->results_key, ids[i], err));
    }
  }
  return rc;
}

ks_code ks_search_dist_loop(run_state *s, double t0, const char **stopped,
                            ks_err *err) {
  ks_search_dist *d = s->dist;
  const ks_search_opts *o = s->o;
  int parallel = o->parallel < 1              ? 1
                 : o->parallel > MAX_INFLIGHT ? MAX_INFLIGHT
                                              : o->parallel;
  /* a resumed run sends what was in flight again, under the same ids */
  ks_store_job *rows = NULL;
  size_t nrows = 0;
  ks_code rc = ks_store_running_jobs(s->store, d->run_id, &rows, &nrows, err);
  for (size_t i = 0; !rc && i < nrows && d->n_fl < MAX_INFLIGHT; i++) {
    inflight *f = &d->fl[d->n_fl];
    memset(f, 0, sizeof *f);
    f->job = rows[i];
    rc = send_job(s, f, err);
    if (!rc) {
      d->n_fl++;
      hold(s, f->job.node_id);
    }
  }
  if (!rc && nrows)
    ks_log(KS_LOG_INFO, "resume: %zu evaluation(s) in flight sent again",
           nrows);
  free(rows);
  int iteration = (int)s->evaluations, dup_rounds = 0;
  bool exhausted = false;
  *stopped = "budget";
  while (!rc) {
    if (o->time_s > 0 && ks_now() - t0 >= o->time_s) {
      *stopped = "time";
      break;
    }
    if (ks_search_interrupted()) {
      *stopped = "interrupted";
      break;
    }
    bool stagnant = o->stagnation > 0 && s->since_best >= o->stagnation;
    /* fill the free slots from distinct open plans */
    while (!rc && !exhausted && !stagnant && d->n_fl < parallel &&
           s->evaluations + d->n_fl < o->budget && dup_rounds <= 500) {
      bool made = false;
      int64_t n0 = s->evaluations;
      int slots = parallel - d->n_fl;
      if (slots > o->budget - (int)s->evaluations - d->n_fl)
        slots = o->budget - (int)s->evaluations - d->n_fl;
      rc = propose_some(s, &iteration, slots, &exhausted, &made, err);
      if (!rc && exhausted && d->n_fl > 0)
        exhausted = false, made = false; /* results may open new plans */
      if (!rc && !made) {
        dup_rounds = s->evaluations == n0 ? dup_rounds + 1 : 0;
        if (!exhausted && d->n_fl > 0 && dup_rounds > 0)
          break; /* wait for a result before asking again */
      }
      if (made)
        dup_rounds = 0;
    }
    if (rc)
      break;
    if (d->n_fl == 0 && d->n_wt == 0) {
      if (s->evaluations >= o->budget)
        *stopped = "budget";
      else if (stagnant)
        *stopped = "stagnation";
      else if (exhausted || dup_rounds > 500)
        *stopped = "search space exhausted";
      else
        continue;
      break;
    }
    rc = read_results(s, t0, err);
  }
  if (rc == KS_LLM_ERR_TOKEN_BUDGET) {
    rc = KS_OK;
    *stopped = "token budget";
  }
  if (!rc && d->n_fl && !o->quiet)
    ks_log(KS_LOG_INFO,
           "%d evaluation(s) still with the workers; `ksearch run --resume "
           "%s --broker URL` records them",
           d->n_fl, s->dir);
  return rc;
}
