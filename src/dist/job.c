/* job.c — encoding and checking of jobs and results (see job.h). */
#include "dist/job.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT (4u << 20) /* task, reference or candidate source */
#define MAX_LOG 65536       /* build log carried back */

void ks_dist_job_free(ks_dist_job *j) {
  free(j->task_json);
  free(j->reference);
  free(j->source);
  json_decref(j->params);
  memset(j, 0, sizeof *j);
}

void ks_dist_target(const char *backend, const char *device_identity,
                    int threads, char identity[512], char hash[17]) {
  snprintf(identity, 512, "%s|%s|t%d", backend, device_identity, threads);
  ks_hash_hex(ks_hash_str(identity, 0x6b737263), hash);
}

void ks_dist_jobs_key(const char *target_hash, char key[KS_DIST_KEY_MAX]) {
  snprintf(key, KS_DIST_KEY_MAX, "ksearch:jobs:%s", target_hash);
}

char *ks_dist_job_encode(const ks_dist_job *j) {
  if (j->echo) {
    json_t *e = json_pack("{s:i, s:s, s:s, s:s, s:s}", "v", KS_DIST_JOB_VERSION,
                          "kind", "echo", "job_id", j->job_id, "reply_to",
                          j->reply_to, "target", j->target);
    char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    return t;
  }
  json_t *o = json_pack(
      "{s:i, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}, "
      "s:{s:s, s:O, s:s}, s:{s:i, s:f, s:f, s:i, s:b, s:b, s:f}, s:i}",
      "v", KS_DIST_JOB_VERSION, "kind", "eval", "job_id", j->job_id, "reply_to",
      j->reply_to, "target", j->target, "backend", j->backend, "task", "name",
      j->task_name, "hash", j->task_hash, "json", j->task_json,
      "reference_name", j->reference_name, "reference", j->reference,
      "candidate", "source", j->source, "params",
      j->params ? j->params : json_object(), "hash", j->cand_hash, "eval",
      "seeds", j->n_seeds, "min_time_s", j->topt.min_time_s, "max_wall_s",
      j->topt.max_wall_s, "min_reps", j->topt.min_reps, "flush", j->topt.flush,
      "timing", j->timing, "timeout_s", j->timeout_s, "max_tries",
      j->max_tries);
  char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return t;
}

/* Copies string field `key` of o into out (cap bytes); errors name it. */
static ks_code str_field(const json_t *o, const char *path, const char *key,
                         char *out, size_t cap, bool required, ks_err *err) {
  const json_t *v = json_object_get(o, key);
  if (!v && !required)
    return KS_OK;
  if (!json_is_string(v) || json_string_length(v) >= cap ||
      strlen(json_string_value(v)) != json_string_length(v))
    return ks_err_set(err, KS_ERR_INPUT,
                      "job: %s%s: expected a string of < %zu bytes without "
                      "NUL; the run that sent it is broken or not ksearch",
                      path, key, cap);
  memcpy(out, json_string_value(v), json_string_length(v) + 1);
  return KS_OK;
}

static ks_code text_field(const json_t *o, const char *path, const char *key,
                          char **out, ks_err *err) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v) || json_string_length(v) > MAX_TEXT ||
      strlen(json_string_value(v)) != json_string_length(v))
    return ks_err_set(err, KS_ERR_INPUT,
                      "job: %s%s: expected a text of at most %u bytes "
                      "without NUL",
                      path, key, MAX_TEXT);
  *out = ks_strdup(json_string_value(v));
  return KS_OK;
}

static ks_code num_field(const json_t *o, const char *key, double lo, double hi,
                         double *out, ks_err *err) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_number(v) || !(json_number_value(v) >= lo) ||
      !(json_number_value(v) <= hi))
    return ks_err_set(err, KS_ERR_INPUT,
                      "job: eval.%s: expected a number in [%g, %g]", key, lo,
                      hi);
  *out = json_number_value(v);
  return KS_OK;
}

/* A file name the worker may create in its own task folder. */
static bool plain_name(const char *s) {
  if (!s[0] || s[0] == '.')
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
      return false;
  return true;
}

static bool hex16(const char *s) {
  if (strlen(s) != 16)
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

ks_code ks_dist_job_decode(const char *text, ks_dist_job *j, ks_err *err) {
  memset(j, 0, sizeof *j);
  json_error_t je;
  json_t *o = text ? json_loads(text, 0, &je) : NULL;
  if (!json_is_object(o)) {
    json_decref(o);
    return ks_err_set(err, KS_ERR_INPUT, "job: not a JSON object%s%s",
                      text ? ": " : "", text ? je.text : "");
  }
  /* what an answer needs first, so even a bad job gets one */
  ks_code rc =
      str_field(o, "", "job_id", j->job_id, sizeof j->job_id, true, err);
  if (!rc)
    rc = str_field(o, "", "reply_to", j->reply_to, sizeof j->reply_to, true,
                   err);
  const json_t *t = json_object_get(o, "task");
  const json_t *c = json_object_get(o, "candidate");
  const json_t *e = json_object_get(o, "eval");
  if (!rc && strncmp(j->reply_to, "ksearch:results:", 16))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: reply_to \"%s\" is not a ksearch result stream",
                    j->reply_to);
  if (!rc && json_integer_value(json_object_get(o, "v")) != KS_DIST_JOB_VERSION)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: v: version %lld, this worker reads %d; run the "
                    "same ksearch on the run and its workers",
                    (long long)json_integer_value(json_object_get(o, "v")),
                    KS_DIST_JOB_VERSION);
  const char *kind = json_string_value(json_object_get(o, "kind"));
  if (!rc && kind && !strcmp(kind, "echo")) {
    j->echo = true;
    rc = str_field(o, "", "target", j->target, sizeof j->target, true, err);
    json_decref(o);
    return rc;
  }
  if (!rc && (!kind || strcmp(kind, "eval")))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: kind: expected \"eval\" or \"echo\"");
  if (!rc && (!json_is_object(t) || !json_is_object(c) || !json_is_object(e)))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: task, candidate and eval must be objects");
  if (!rc)
    rc = str_field(o, "", "target", j->target, sizeof j->target, true, err);
  if (!rc)
    rc = str_field(o, "", "backend", j->backend, sizeof j->backend, true, err);
  if (!rc)
    rc = str_field(t, "task.", "name", j->task_name, sizeof j->task_name, true,
                   err);
  if (!rc)
    rc = str_field(t, "task.", "hash", j->task_hash, sizeof j->task_hash, true,
                   err);
  if (!rc)
    rc = str_field(t, "task.", "reference_name", j->reference_name,
                   sizeof j->reference_name, true, err);
  if (!rc && !plain_name(j->reference_name))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: task.reference_name \"%s\": expected a plain file "
                    "name ([A-Za-z0-9._-], not starting with '.')",
                    j->reference_name);
  if (!rc && !hex16(j->task_hash))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: task.hash: expected 16 lower-case hex digits");
  if (!rc)
    rc = text_field(t, "task.", "json", &j->task_json, err);
  if (!rc)
    rc = text_field(t, "task.", "reference", &j->reference, err);
  if (!rc)
    rc = text_field(c, "candidate.", "source", &j->source, err);
  if (!rc)
    rc = str_field(c, "candidate.", "hash", j->cand_hash, sizeof j->cand_hash,
                   true, err);
  if (!rc) {
    const json_t *p = json_object_get(c, "params");
    const char *k;
    const json_t *v;
    if (!json_is_object(p) || json_object_size(p) > KS_MAX_PARAMS)
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "job: candidate.params: expected an object of at most "
                      "%d strings",
                      KS_MAX_PARAMS);
    json_object_foreach((json_t *)p, k, v) {
      if (!rc && (!json_is_string(v) || !ks_is_c_ident(k) ||
                  json_string_length(v) >= 64))
        rc = ks_err_set(err, KS_ERR_INPUT,
                        "job: candidate.params.%.64s: expected a C "
                        "identifier mapped to a string of < 64 bytes",
                        k);
    }
    if (!rc)
      j->params = json_deep_copy(p);
  }
  double x;
  if (!rc && !(rc = num_field(e, "seeds", 1, KS_MAX_SEEDS, &x, err)))
    j->n_seeds = (int)x;
  if (!rc && !(rc = num_field(e, "min_time_s", 0, 60, &x, err)))
    j->topt.min_time_s = x;
  if (!rc && !(rc = num_field(e, "max_wall_s", 0, 600, &x, err)))
    j->topt.max_wall_s = x;
  if (!rc && !(rc = num_field(e, "min_reps", 1, 1000, &x, err)))
    j->topt.min_reps = (int)x;
  if (!rc && !(rc = num_field(e, "timeout_s", 0, 86400, &x, err)))
    j->timeout_s = x;
  j->topt.flush = json_is_true(json_object_get(e, "flush"));
  j->timing = json_is_true(json_object_get(e, "timing"));
  j->max_tries = (int)json_integer_value(json_object_get(o, "max_tries"));
  if (!rc && (j->max_tries < 1 || j->max_tries > 100))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "job: max_tries: expected an integer in 1..100");
  json_decref(o);
  return rc;
}

static json_t *envelope(const char *job_id, const char *cand_hash,
                        const json_t *machine) {
  /* "o" steals the new reference: a borrowed machine gets one of its own */
  return json_pack("{s:i, s:s, s:s, s:o}", "v", KS_DIST_JOB_VERSION, "job_id",
                   job_id, "candidate_hash", cand_hash, "machine",
                   machine ? json_incref((json_t *)machine) : json_object());
}

char *ks_dist_result_encode(const ks_dist_job *j, const json_t *machine,
                            const ks_task *task, const ks_eval_result *r) {
  json_t *o = envelope(j->job_id, j->cand_hash, machine);
  json_object_set_new(o, "result", ks_eval_result_to_json(task, r));
  size_t loglen = r->build_log.len > MAX_LOG ? MAX_LOG : r->build_log.len;
  json_object_set_new(o, "build",
                      json_pack("{s:b, s:f, s:s%, s:s}", "ok",
                                r->status != KS_EVAL_COMPILE_ERROR, "seconds",
                                isfinite(r->build_s) ? r->build_s : 0.0, "log",
                                r->build_log.data ? r->build_log.data : "",
                                loglen, "artifact", r->artifact_hash));
  char *t = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return t;
}

char *ks_dist_result_failure(const char *job_id, const char *cand_hash,
                             const json_t *machine, ks_eval_status status,
                             const char *reason) {
  json_t *o = envelope(job_id, cand_hash, machine);
  json_object_set_new(o, "result",
                      json_pack("{s:s, s:b, s:f, s:[], s:s, s:i, s:b, s:f}",
                                "status", ks_eval_status_name(status),
                                "correct", 0, "score", 0.0, "workloads",
                                "error", reason, "threads", 0, "build_cached",
                                0, "build_s", 0.0));
  json_object_set_new(o, "build",
                      json_pack("{s:b, s:f, s:s, s:s}", "ok",
                                status != KS_EVAL_COMPILE_ERROR, "seconds", 0.0,
                                "log", "", "artifact", ""));
  char *t = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return t;
}

static double dnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

ks_code ks_dist_result_decode(const char *text, int n_workloads,
                              ks_dist_result *out, ks_err *err) {
  memset(out, 0, sizeof *out);
  json_t *o = text ? json_loads(text, 0, NULL) : NULL;
  json_t *r = json_object_get(o, "result");
  json_t *bld = json_object_get(o, "build");
  json_t *wls = json_object_get(r, "workloads");
  ks_code rc = KS_OK;
  if (!json_is_object(r) || !json_is_object(bld) || !json_is_array(wls))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "result: expected an object with result, build and "
                    "result.workloads");
  if (!rc)
    rc = str_field(o, "", "job_id", out->job_id, sizeof out->job_id, true, err);
  if (!rc)
    rc = str_field(o, "", "candidate_hash", out->cand_hash,
                   sizeof out->cand_hash, true, err);
  ks_eval_result *res = &out->res;
  const char *st = json_string_value(json_object_get(r, "status"));
  bool known = false;
  for (int s = KS_EVAL_OK; !rc && st && s <= KS_EVAL_IMPLAUSIBLE; s++)
    if (!strcmp(st, ks_eval_status_name((ks_eval_status)s))) {
      res->status = (ks_eval_status)s;
      known = true;
    }
  if (!rc && !known)
    rc = ks_err_set(err, KS_ERR_INPUT, "result: result.status \"%s\" unknown",
                    st ? st : "(none)");
  size_t nw = json_array_size(wls);
  /* a result lists the workloads of its device class, each with its index
   * in the task (older results: all of them, in order) */
  if (!rc && nw > (size_t)n_workloads)
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "result: %zu workloads where the task has %d", nw,
                    n_workloads);
  for (size_t i = 0; !rc && i < nw; i++) {
    json_t *ix = json_object_get(json_array_get(wls, i), "index");
    if (ix && (!json_is_integer(ix) || json_integer_value(ix) < 0 ||
               json_integer_value(ix) >= n_workloads))
      rc = ks_err_set(err, KS_ERR_INPUT,
                      "result: workloads[%zu].index out of range", i);
  }
  if (rc) {
    json_decref(o);
    return rc;
  }
  res->correct = json_is_true(json_object_get(r, "correct"));
  res->score = dnum(r, "score");
  if (!isfinite(res->score))
    res->score = 0;
  res->n_workloads = nw ? n_workloads : 0;
  for (int i = 0; i < res->n_workloads; i++)
    res->wl[i].index = i;
  for (size_t i = 0; i < nw; i++) {
    const json_t *w = json_array_get(wls, i);
    json_t *ix = json_object_get(w, "index");
    int at = ix ? (int)json_integer_value(ix) : (int)i;
    ks_wl_result *x = &res->wl[at];
    x->index = at;
    x->correct = json_is_true(json_object_get(w, "correct"));
    x->ran = json_is_number(json_object_get(w, "time_ns_median")) || x->correct;
    x->max_abs_err = dnum(w, "max_abs_err");
    x->max_rel_err = dnum(w, "max_rel_err");
    x->time_ns_median = dnum(w, "time_ns_median");
    x->time_ns_min = dnum(w, "time_ns_min");
    x->time_ns_iqr = dnum(w, "time_ns_iqr");
    x->reps = (int)json_integer_value(json_object_get(w, "reps"));
    x->ref_time_ns_median = dnum(w, "reference_time_ns_median");
    x->ref_time_ns_min = dnum(w, "reference_time_ns_min");
    x->speedup = dnum(w, "speedup");
    x->gbps = dnum(w, "gbps");
    x->gflops = dnum(w, "gflops");
    x->roofline_fraction = dnum(w, "roofline_fraction");
    const char *reason = json_string_value(json_object_get(w, "reason"));
    ks_strlcpy(x->reason, reason ? reason : "", sizeof x->reason);
  }
  const char *e = json_string_value(json_object_get(r, "error"));
  ks_strlcpy(res->error, e ? e : "", sizeof res->error);
  res->threads = (int)json_integer_value(json_object_get(r, "threads"));
  res->build_cached = json_is_true(json_object_get(r, "build_cached"));
  res->build_s = dnum(bld, "seconds");
  const char *art = json_string_value(json_object_get(bld, "artifact"));
  ks_strlcpy(res->artifact_hash, art ? art : "", sizeof res->artifact_hash);
  ks_buf_init(&res->build_log);
  const char *log = json_string_value(json_object_get(bld, "log"));
  ks_buf_puts(&res->build_log, log ? log : "");
  out->result_json = json_incref(r);
  json_object_set(out->result_json, "machine",
                  json_object_get(o, "machine") ? json_object_get(o, "machine")
                                                : json_null());
  json_decref(o);
  return KS_OK;
}

void ks_dist_result_free(ks_dist_result *r) {
  ks_eval_result_free(&r->res);
  json_decref(r->result_json);
  r->result_json = NULL;
}
