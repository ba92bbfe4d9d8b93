/* search.c — see search.h.
 *
 * Crash safety: an evaluation is committed to the store when it ends, before
 * the world model learns from it. If ksearch dies in between, --resume finds
 * finished evaluations whose candidate is not in its node's evidence and
 * replays them into the planner, so nothing finished is lost or repeated.
 */
#include "search/search.h"
#include "llm/llm.h"
#include "report/report.h"
#include "search/planner.h"
#include "search/search_internal.h"
#include "search/tournament.h"
#include "store/store.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_interrupted; /* set by SIGINT/SIGTERM */

bool ks_search_interrupted(void) { return g_interrupted != 0; }

static void on_signal(int sig) {
  (void)sig;
  g_interrupted = 1;
}

void ks_search_opts_default(ks_search_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = "c";
  o->planner = "builtin";
  o->budget = 30;
  o->stagnation = 25;
  o->finalists = -1; /* 8 for budgets of 10 or more, else none */
  o->tourney_rounds = 6;
  o->tourney_tie_rounds = 10;
  o->seed = 1;
  o->max_attempts = 3;
  o->parallel = 1;
  o->max_tries = 3;
  ks_eval_opts_default(&o->eval);
  o->eval.topt.min_time_s = 0.05;
  o->eval.topt.max_wall_s = 0.5;
}

ks_code ks_search_save_tree(run_state *s, ks_err *err) {
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/world_model.json", s->dir);
  ks_code rc = ks_wm_save(s->wm, path, err);
  if (rc)
    return rc;
  json_t *j = ks_wm_to_json(s->wm);
  rc = ks_store_replace_nodes(s->store, json_object_get(j, "nodes"), err);
  json_decref(j);
  return rc;
}

void ks_search_remember_score(run_state *s, int64_t cand, double score) {
  char key[32];
  snprintf(key, sizeof key, "%lld", (long long)cand);
  json_object_set_new(s->score_of, key, json_real(score));
}

void ks_search_note_result(run_state *s, int64_t cand, double score,
                           bool correct) {
  s->evaluations++;
  s->correct += correct;
  if (correct && score > s->best_score * 1.01) {
    s->since_best = 0;
  } else {
    s->since_best++;
  }
  if (correct && score > s->best_score) {
    s->best_score = score;
    s->best_cand = cand;
  }
}

static bool in_evidence(const ks_wm_node *n, int64_t cand) {
  for (int i = 0; i < n->n_evidence; i++)
    if (n->evidence[i] == cand)
      return true;
  return false;
}

/* Rebuilds the in-memory state of a resumed run from the store. */
static ks_code replay(run_state *s, ks_err *err) {
  ks_store_eval *rows = NULL;
  size_t n = 0;
  ks_code rc = ks_store_list_evaluations(s->store, &rows, &n, err);
  for (size_t i = 0; !rc && i < n; i++) {
    ks_store_candidate c;
    memset(&c, 0, sizeof c);
    rc = ks_store_get_candidate(s->store, rows[i].candidate_id, &c, err);
    if (rc)
      break;
    s->pi->remember(s->pl, c.id, c.params_json);
    ks_store_candidate_free(&c);
    double score =
        rows[i].correct && isfinite(rows[i].score) ? rows[i].score : 0;
    ks_search_remember_score(s, rows[i].candidate_id, score);
    ks_search_note_result(s, rows[i].candidate_id, score, rows[i].correct);
    const ks_wm_node *node = ks_wm_find(s->wm, rows[i].node_id);
    if (node && !in_evidence(node, rows[i].candidate_id)) {
      ks_log(KS_LOG_INFO, "resume: replaying evaluation %lld into node %s",
             (long long)rows[i].id, rows[i].node_id);
      rc = s->pi->observe(s->pl, s->wm, rows[i].node_id, rows[i].candidate_id,
                          score, NULL, err);
    }
  }
  free(rows);
  return rc;
}

void ks_search_progress(run_state *s, const char *node, const char *plan,
                        const ks_eval_result *r, double t0) {
  if (s->o->quiet)
    return;
  double el = ks_now() - t0;
  double eta = s->evaluations > 0 ? el / (double)s->evaluations *
                                        (double)(s->o->budget - s->evaluations)
                                  : 0;
  char line[600];
  snprintf(line, sizeof line,
           "[%lld/%d] best %.2fx | %s %s -> %s %.2fx | eta %.0fs",
           (long long)s->evaluations, s->o->budget, s->best_score, node, plan,
           ks_eval_status_name(r->status), r->score, eta);
  if (s->tty)
    fprintf(stderr, "\r\033[K%.*s", 150, line);
  else
    fprintf(stderr, "%s\n", line);
}

/* winner: the final tournament's pick (0: the best recorded score). */
static ks_code write_best(run_state *s, json_t *summary, int64_t winner,
                          ks_err *err) {
  ks_store_eval be;
  ks_store_candidate bc;
  bool found = false;
  memset(&bc, 0, sizeof bc);
  ks_code rc = ks_store_best(s->store, &be, &bc, &found, err);
  if (!rc && found && winner > 0 && winner != bc.id) {
    ks_store_eval *top = NULL;
    size_t n = 0;
    if (ks_store_top(s->store, KS_TOURNEY_MAX, &top, &n, err) == KS_OK)
      for (size_t i = 0; i < n; i++)
        if (top[i].candidate_id == winner) {
          ks_store_candidate_free(&bc);
          memset(&bc, 0, sizeof bc);
          be = top[i];
          rc = ks_store_get_candidate(s->store, winner, &bc, err);
          break;
        }
    free(top);
  }
  if (rc || !found) {
    json_object_set_new(summary, "best", json_null());
    return rc;
  }
  /* the template with its parameters baked in: one file to copy */
  json_t *params = json_loads(bc.params_json, 0, NULL);
  ks_buf src;
  ks_buf_init(&src);
  const char *p = bc.source;
  bool header_done = false;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    bool is_param = !strncmp(p, "// ksearch: param ", 18);
    bool is_header = !strncmp(p, "// ksearch:", 11);
    if (!header_done && !is_header) {
      header_done = true;
      ks_buf_printf(&src,
                    "// best of ksearch run %s (candidate %lld, score "
                    "%.3f); parameters baked in:\n",
                    s->dir, (long long)bc.id, be.score);
      const char *k;
      json_t *v;
      json_object_foreach(params, k, v)
          ks_buf_printf(&src, "#define %s %s\n", k, json_string_value(v));
    }
    if (!is_param)
      ks_buf_append(&src, p, len);
    p += len;
  }
  char dir[PATH_MAX + 8], file[PATH_MAX + 80];
  snprintf(dir, sizeof dir, "%s/best", s->dir);
  snprintf(file, sizeof file, "%s/%s.c", dir, s->task.name);
  rc = ks_mkdir_p(dir, err);
  if (!rc)
    rc = ks_write_file_atomic(file, src.data, src.len, err);
  ks_buf_free(&src);
  char *result = NULL;
  if (!rc)
    rc = ks_store_get_result_json(s->store, be.id, &result, err);
  json_t *rj = result ? json_loads(result, 0, NULL) : NULL;
  free(result);
  json_t *plan = json_array();
  char steps[32][KS_WM_PLAN_STEP];
  int ns = ks_wm_plan(s->wm, bc.node_id, steps, 32);
  for (int i = 0; i < ns && i < 32; i++)
    json_array_append_new(plan, json_string(steps[i]));
  /* a damaged result (no workloads array) reads as none; "o" steals the
   * fresh array, where "O" on it would leak one reference */
  json_t *wls = rj ? json_object_get(rj, "workloads") : NULL;
  json_t *best =
      json_pack("{s:I, s:f, s:s, s:o, s:o, s:o}", "candidate_id",
                (json_int_t)bc.id, "score", be.score, "file", file, "params",
                params ? params : json_object(), "plan", plan, "workloads",
                json_is_array(wls) ? json_incref(wls) : json_array());
  json_decref(rj);
  json_object_set_new(summary, "best", best);
  ks_store_candidate_free(&bc);
  return rc;
}

ks_code ks_search_record(run_state *s, const char *node_id, int64_t cand_id,
                         int64_t eval_id, const ks_eval_result *res,
                         const json_t *result_json, double t0, ks_err *err) {
  ks_code rc = ks_store_add_build(
      s->store, cand_id, res->status != KS_EVAL_COMPILE_ERROR, res->build_s,
      res->build_log.data ? res->build_log.data : "", res->artifact_hash, NULL,
      err);
  if (!rc) {
    json_t *rj = result_json ? json_incref((json_t *)result_json)
                             : ks_eval_result_to_json(&s->task, res);
    char *rtext = json_dumps(rj, JSON_COMPACT);
    json_decref(rj);
    ks_store_measurement m[KS_MAX_WORKLOADS];
    for (int i = 0; i < res->n_workloads; i++) {
      memset(&m[i], 0, sizeof m[i]);
      m[i].workload = i;
      m[i].time_ns_median = res->wl[i].time_ns_median;
      m[i].time_ns_iqr = res->wl[i].time_ns_iqr;
      m[i].gbps = res->wl[i].gbps;
      m[i].roofline_fraction = res->wl[i].roofline_fraction;
      m[i].speedup = res->wl[i].speedup;
    }
    rc = ks_store_finish_evaluation(
        s->store, eval_id, ks_eval_status_name(res->status), res->correct,
        res->score, rtext, m, (size_t)res->n_workloads, err);
    free(rtext);
  }
  if (!rc) {
    double score = res->correct ? res->score : 0;
    ks_search_remember_score(s, cand_id, score);
    ks_search_note_result(s, cand_id, score, res->correct);
    const ks_wm_node *n = ks_wm_find(s->wm, node_id);
    char plan[300];
    snprintf(plan, sizeof plan, "(%s: %s)", n ? n->decision : "?",
             n ? n->choice : "?");
    rc = s->pi->observe(s->pl, s->wm, node_id, cand_id, score, res, err);
    if (!rc)
      rc = ks_search_save_tree(s, err);
    ks_search_progress(s, node_id, plan, res, t0);
    /* the report's only hook: context event, and the page with --report */
    ks_report_after_evaluation(s->store, s->dir,
                               s->ev ? ks_evaluator_roofline(s->ev) : NULL,
                               s->o->command_line, s->o->report);
  }
  return rc;
}

static ks_code one_round(run_state *s, int iteration, double t0,
                         bool *exhausted, ks_err *err) {
  ks_proposal pr;
  ks_code rc = s->pi->propose(s->pl, s->wm, iteration, &pr, err);
  if (rc)
    return rc;
  if (!pr.node_id[0]) {
    *exhausted = true;
    return KS_OK;
  }
  char hex[17];
  ks_hash_hex(ks_hash_str(pr.cand.source, 0), hex);
  char *params = ks_candidate_params_json(&pr.cand);
  int64_t cand_id = 0;
  rc = ks_store_find_candidate(s->store, hex, params, &cand_id, err);
  if (!rc && cand_id) {
    /* identical candidate: reuse its result, never evaluate it twice */
    char key[32];
    snprintf(key, sizeof key, "%lld", (long long)cand_id);
    json_t *sc = json_object_get(s->score_of, key);
    rc = s->pi->observe(s->pl, s->wm, pr.node_id, cand_id,
                        sc ? json_number_value(sc) : 0, NULL, err);
    if (!rc)
      rc = ks_search_save_tree(s, err);
    free(params);
    ks_proposal_free(&pr);
    return rc;
  }
  bool is_new;
  if (!rc)
    rc = ks_store_add_candidate(s->store, pr.node_id, pr.cand.source, params,
                                hex, &cand_id, &is_new, err);
  s->pi->remember(s->pl, cand_id, params);
  free(params);
  int64_t eval_id = 0;
  if (!rc)
    rc =
        ks_store_begin_evaluation(s->store, cand_id, pr.node_id, &eval_id, err);
  ks_eval_result res;
  memset(&res, 0, sizeof res);
  if (!rc)
    rc = ks_evaluate(s->ev, &pr.cand, &res, err);
  if (!rc)
    rc = ks_search_record(s, pr.node_id, cand_id, eval_id, &res, NULL, t0, err);
  ks_eval_result_free(&res);
  ks_proposal_free(&pr);
  return rc;
}

static void default_dir(const ks_task *t, char *out, size_t n) {
  char stamp[32];
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
  snprintf(out, n, "runs/%s-%s", t->name, stamp);
}

ks_code ks_search_run(const ks_search_opts *o, json_t **summary, ks_err *err) {
  *summary = NULL;
  run_state *s = ks_xcalloc(1, sizeof *s);
  s->o = o;
  s->tty = isatty(2);
  s->score_of = json_object();
  ks_code rc = ks_task_load(o->task, &s->task, err);
  if (!rc && o->workloads && o->broker)
    rc = ks_err_set(err, KS_ERR_UNIMPLEMENTED,
                    "--workloads with --broker is not built yet: workers "
                    "load the whole task; leave one of them out");
  if (!rc && o->workloads)
    rc = ks_task_select_workloads(&s->task, o->workloads, err);
  bool resume = o->resume_dir != NULL;
  if (!rc) {
    if (resume)
      ks_strlcpy(s->dir, o->resume_dir, sizeof s->dir);
    else if (o->out_dir)
      ks_strlcpy(s->dir, o->out_dir, sizeof s->dir);
    else
      default_dir(&s->task, s->dir, sizeof s->dir);
  }
  char db[PATH_MAX + 16];
  snprintf(db, sizeof db, "%s/ksearch.db", s->dir);
  if (!rc && resume && !ks_file_exists(db))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s: not a run folder (no ksearch.db); give the folder a "
                    "previous `ksearch run` wrote",
                    s->dir);
  if (!rc && !resume && ks_file_exists(db))
    rc = ks_err_set(err, KS_ERR_INPUT,
                    "%s already holds a run; continue it with --resume %s or "
                    "choose another --out",
                    s->dir, s->dir);
  s->pi = ks_planner_find(o->planner);
  if (!rc && !s->pi)
    rc = ks_err_set(err, KS_ERR_INPUT, "unknown planner \"%s\"", o->planner);
  if (!rc) {
    ks_err terr;
    ks_code trc = ks_templates_load(&s->task, o->backend, &s->tpls, &terr);
    if (trc && s->pi->needs_templates) {
      *err = terr;
      rc = trc;
    }
  }
  if (!rc)
    rc = ks_class_spec_load(s->task.klass, &s->spec, err);
  if (!rc)
    rc = ks_mkdir_p(s->dir, err);
  if (!rc)
    rc = ks_store_open(db, !resume, &s->store, err);
  char th[17];
  /* a selection is part of what the run measures: resuming it with
   * another is refused like another task */
  ks_hash_hex(o->workloads
                  ? ks_hash64(o->workloads, strlen(o->workloads), s->task.hash)
                  : s->task.hash,
              th);
  if (!rc && resume) {
    rc = ks_store_check_task(s->store, s->task.name, th, err);
    int64_t *lost = NULL;
    size_t n_lost = 0;
    /* with a broker, evaluations in flight are sent again instead */
    if (!rc && !o->broker)
      rc = ks_store_abandon_running(s->store, &lost, &n_lost, err);
    if (!rc && n_lost)
      ks_log(KS_LOG_INFO,
             "resume: %zu evaluation(s) were in flight when the run stopped; "
             "they will be proposed again",
             n_lost);
    free(lost);
  } else if (!rc) {
    json_t *cfg = json_pack(
        "{s:s, s:s, s:i, s:f, s:i, s:I, s:i, s:i}", "planner", o->planner,
        "backend", o->backend, "budget", o->budget, "time_s", o->time_s,
        "stagnation", o->stagnation, "seed", (json_int_t)o->seed, "threads",
        o->eval.threads ? o->eval.threads : ks_nproc(), "seeds",
        o->eval.n_seeds);
    if (o->broker) /* the workers' threads count; never the password */
      json_object_set_new(cfg, "parallel", json_integer(o->parallel));
    char *cj = json_dumps(cfg, JSON_COMPACT);
    json_decref(cfg);
    rc = ks_store_put_run(s->store, s->task.name, th, o->backend,
                          (int64_t)o->seed, cj, err);
    free(cj);
    char *tj = NULL, *ref = NULL;
    if (!rc)
      rc = ks_read_file(s->task.json_path, &tj, NULL, err);
    if (!rc)
      rc = ks_read_file(s->task.reference_path, &ref, NULL, err);
    if (!rc)
      rc = ks_store_put_task_snapshot(s->store, tj, ref, err);
    free(tj);
    free(ref);
  }
  ks_eval_opts eo = o->eval;
  eo.backend = o->backend;
  eo.quiet = o->quiet;
  /* through a broker the workers evaluate; the analysis reads the roofline
   * their target registered */
  ks_roofline dist_roof;
  const ks_roofline *roof = NULL;
  if (!rc && o->broker) {
    rc = ks_search_dist_open(s, &dist_roof, err);
    roof = &dist_roof;
  } else if (!rc) {
    rc = ks_evaluator_new(&s->task, &eo, &s->ev, err);
    if (!rc)
      roof = ks_evaluator_roofline(s->ev);
  }
  if (!rc) {
    ks_analyze(&s->task, roof, s->ev ? ks_evaluator_ref_times(s->ev) : NULL,
               &s->an);
    ks_planner_ctx ctx = {&s->task,
                          o->backend,
                          &s->tpls,
                          &s->spec,
                          &s->an,
                          roof,
                          s->store,
                          s->dir,
                          o->seed,
                          o->max_attempts,
                          o->planner_options};
    rc = s->pi->create(&ctx, &s->pl, err);
    char wm_path[PATH_MAX + 32];
    snprintf(wm_path, sizeof wm_path, "%s/world_model.json", s->dir);
    if (resume && ks_file_exists(wm_path))
      rc = ks_wm_load(wm_path, &s->wm, err);
    else
      s->wm = ks_wm_new(s->task.name);
    /* a node left running by a stopped session is open again (a broker
     * run marks the ones it sends again) */
    for (int i = 0; !rc && s->wm && i < ks_wm_count(s->wm); i++) {
      const ks_wm_node *n = ks_wm_node_at(s->wm, i);
      if (n->status == KS_WM_RUNNING)
        rc = ks_wm_set_status(s->wm, n->id, KS_WM_OPEN, err);
    }
    if (!rc)
      rc = s->pi->init_tree(s->pl, s->wm, err);
    if (!rc)
      rc = replay(s, err);
    if (!rc)
      rc = ks_search_count_ties(s, err);
    if (!rc)
      rc = ks_search_save_tree(s, err);
  }
  const char *stopped = "budget";
  if (!rc) {
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    g_interrupted = 0;
    double t0 = ks_now();
    int iteration = (int)s->evaluations, dup_rounds = 0;
    int64_t before = s->evaluations;
    if (!o->quiet)
      ks_log(KS_LOG_INFO,
             "run %s: %s on %s, %d templates, budget %d (%lld "
             "done)",
             s->dir, s->task.name, o->backend, s->tpls.n, o->budget,
             (long long)s->evaluations);
    for (; o->broker;) {
      rc = ks_search_dist_loop(s, t0, &stopped, err);
      break;
    }
    for (; !o->broker;) {
      if (s->evaluations + s->retimes >= o->budget) {
        stopped = "budget";
        break;
      }
      if (o->time_s > 0 && ks_now() - t0 >= o->time_s) {
        stopped = "time";
        break;
      }
      if (o->stagnation > 0 && s->since_best >= o->stagnation) {
        stopped = "stagnation";
        break;
      }
      if (g_interrupted) {
        stopped = "interrupted";
        break;
      }
      bool exhausted = false, settled = false;
      int64_t n0 = s->evaluations;
      rc = ks_search_settle_tie(s, t0, &settled, err);
      if (!rc && !settled)
        rc = one_round(s, iteration++, t0, &exhausted, err);
      if (rc == KS_LLM_ERR_TOKEN_BUDGET) { /* the LLM planner's clean end */
        rc = KS_OK;
        stopped = "token budget";
        break;
      }
      if (rc)
        break;
      if (exhausted) {
        stopped = "search space exhausted";
        break;
      }
      dup_rounds = s->evaluations == n0 && !settled ? dup_rounds + 1 : 0;
      if (dup_rounds > 500) {
        stopped = "search space exhausted";
        break;
      }
    }
    (void)before;
    if (s->tty && !o->quiet)
      fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  if (!rc || s->store) {
    ks_err e2;
    ks_store_counts cnt;
    json_t *sum = json_object();
    json_object_set_new(sum, "task", json_string(s->task.name));
    json_object_set_new(sum, "backend", json_string(o->backend));
    json_object_set_new(sum, "planner", json_string(o->planner));
    if (s->store && ks_store_counts_get(s->store, &cnt, &e2) == KS_OK) {
      json_object_set_new(sum, "evaluations", json_integer(cnt.finished));
      json_object_set_new(sum, "correct_evaluations",
                          json_integer(cnt.correct));
    }
    json_object_set_new(sum, "tie_settlements", json_integer(s->retimes / 2));
    json_object_set_new(sum, "stopped_because",
                        json_string(rc ? "error" : stopped));
    json_object_set_new(sum, "run_dir", json_string(s->dir));
    if (s->store) {
      ks_err *e = rc ? &e2 : err;
      int64_t winner = 0;
      /* the final tournament: the leaders timed again together */
      int fin = o->finalists >= 0 ? o->finalists : o->budget >= 10 ? 8 : 0;
      if (!rc && fin >= 2 && s->ev && strcmp(stopped, "interrupted")) {
        ks_tourney_opts to = {.finalists = fin,
                              .rounds = o->tourney_rounds,
                              .tie_rounds = o->tourney_tie_rounds,
                              .seed = o->seed,
                              .quiet = o->quiet};
        ks_tourney_result tr;
        if (!o->quiet)
          ks_log(KS_LOG_INFO, "final tournament: %d leaders, %d rounds", fin,
                 o->tourney_rounds);
        if (ks_tournament(s->ev, s->store, &s->task, &to, &tr, &e2) == KS_OK &&
            tr.n >= 2) {
          json_t *tj = ks_tourney_to_json(&tr);
          char *tt = json_dumps(tj, JSON_COMPACT);
          if (tt)
            ks_store_add_event(s->store, "tournament", tt, &e2);
          free(tt);
          if (!o->quiet)
            ks_log(KS_LOG_INFO, "final tournament: %s",
                   json_string_value(json_object_get(tj, "note")));
          json_object_set_new(sum, "tournament", tj);
          winner = tr.cand[tr.winner];
        }
      }
      ks_code r2 = write_best(s, sum, winner, e);
      if (!rc)
        rc = r2;
      ks_store_set_stopped(s->store, rc ? "error" : stopped, &e2);
    }
    char *text = json_dumps(sum, JSON_INDENT(2));
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary.json", s->dir);
    if (s->store && text)
      ks_write_file_atomic(path, text, strlen(text), &e2);
    free(text);
    *summary = sum;
  }
  ks_search_dist_close(s);
  if (s->pl)
    s->pi->destroy(s->pl);
  ks_wm_free(s->wm);
  ks_evaluator_free(s->ev);
  if (s->store)
    ks_store_close(s->store);
  ks_templates_free(&s->tpls);
  ks_task_free(&s->task);
  json_decref(s->score_of);
  free(s);
  return rc;
}
