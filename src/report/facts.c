/* facts.c — gathers everything the report shows from a run folder into one
 * JSON object (DESIGN.md: Report): the run row, counts, the session context
 * (`run_context` events), every finished evaluation with the best score so
 * far, the world model with the best path marked, the top candidates, each
 * workload's best point for the roofline chart, the best kernel with its diff
 * against its parent, LLM calls and summary.json. html.c draws the page from
 * this object alone and `ksearch show --json` prints it. */
#include "report/report.h"
#include "report/report_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define TOP_MAX 10
#define DIFF_CONTEXT 3
#define DIFF_MAX_LINES 4000
#define REASON_MAX 4000

static void note(json_t *notes, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(json_t *notes, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_array_append_new(notes, ks_report_str(msg, strlen(msg)));
}

static json_t *src_json(const char *s) {
  return ks_report_str(s ? s : "", s ? strlen(s) : 0);
}

/* A failure reason as JSON, cut at max bytes (compiler logs can be long;
 * their head says what went wrong). */
static json_t *clipped(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n <= max)
    return src_json(s);
  char *cut = ks_xmalloc(max + 48);
  memcpy(cut, s, max);
  snprintf(cut + max, 48, " ... (%zu bytes cut)", n - max);
  json_t *j = src_json(cut);
  free(cut);
  return j;
}

static json_t *num_or_null(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* A JSON file of the run folder; NULL (and a note) when missing or bad. */
static json_t *load_file(const char *dir, const char *name, json_t *notes,
                         const char *missing_note) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!ks_file_exists(path)) {
    if (missing_note)
      note(notes, "%s", missing_note);
    return NULL;
  }
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j || !json_is_object(j))
    note(notes,
         "%s is unreadable (%s, line %d); the page shows what the store "
         "holds",
         path, j ? "not a JSON object" : je.text, je.line);
  if (j && !json_is_object(j)) {
    json_decref(j);
    j = NULL;
  }
  return j;
}

/* Whether another process holds the run lock, i.e. a search is writing. */
static bool lock_held(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ksearch.db.lock", dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd); /* releases the shared lock if we took it */
  return held;
}

static json_t *run_row(ks_store *st, ks_err *err, ks_code *rc) {
  ks_store_run r;
  bool found = false;
  *rc = ks_store_get_run(st, &r, &found, err);
  if (*rc || !found)
    return json_null();
  json_t *cfg = json_loads(r.config_json ? r.config_json : "{}", 0, NULL);
  json_t *o = json_pack(
      "{s:s, s:s, s:s, s:I, s:o, s:f, s:f}", "task", r.task_name, "task_hash",
      r.task_hash, "backend", r.backend, "seed", (json_int_t)r.seed, "config",
      cfg ? cfg : json_object(), "created", r.created, "updated", r.updated);
  json_object_set_new(o, "stopped_because",
                      r.stopped_because ? json_string(r.stopped_because)
                                        : json_null());
  ks_store_run_free(&r);
  return o;
}

/* The reason of a failed evaluation: the error, else the first workload's. */
static const char *reason_of(const json_t *res) {
  const char *e = json_string_value(json_object_get(res, "error"));
  if (e && *e)
    return e;
  size_t i;
  const json_t *w;
  json_array_foreach(json_object_get(res, "workloads"), i, w) {
    const char *r = json_string_value(json_object_get(w, "reason"));
    if (r && *r)
      return r;
  }
  return "";
}

typedef struct point {
  double time_ns_min;
  json_t *w; /* borrowed workload object */
  int64_t cand;
} point;

/* Evaluations in order, the statuses, and each workload's fastest correct
 * result (the roofline chart's points). */
static ks_code evaluations(ks_store *st, json_t *facts, ks_err *err) {
  ks_store_eval *rows = NULL;
  size_t n = 0;
  ks_code rc = ks_store_list_evaluations(st, &rows, &n, err);
  if (rc)
    return rc;
  json_t *arr = json_array(), *statuses = json_object();
  json_t *results = json_array(); /* keeps the parsed results alive */
  point pts[KS_MAX_WORKLOADS];
  memset(pts, 0, sizeof pts);
  double best = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const ks_store_eval *e = &rows[i];
    char *text = NULL;
    rc = ks_store_get_result_json(st, e->id, &text, err);
    json_t *res = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!res)
      res = json_object();
    json_array_append_new(results, res);
    double score = e->correct && isfinite(e->score) ? e->score : 0;
    if (score > best)
      best = score;
    json_t *c = json_object_get(statuses, e->status);
    json_object_set_new(statuses, e->status,
                        json_integer(c ? json_integer_value(c) + 1 : 1));
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:s, s:s, s:b, s:f, s:f, s:o, s:f, s:o}", "index",
        (json_int_t)i + 1, "id", (json_int_t)e->id, "candidate_id",
        (json_int_t)e->candidate_id, "node_id", e->node_id, "status", e->status,
        "correct", e->correct, "score", score, "started", e->started,
        "finished", num_or_null(e->finished), "best_so_far", best, "reason",
        clipped(e->correct ? "" : reason_of(res), REASON_MAX));
    json_array_append_new(arr, o);
    if (!e->correct)
      continue;
    size_t wi;
    json_t *w;
    json_array_foreach(json_object_get(res, "workloads"), wi, w) {
      double t = jnum(w, "time_ns_min");
      if (wi >= KS_MAX_WORKLOADS || !(t > 0))
        continue;
      if (!pts[wi].w || t < pts[wi].time_ns_min)
        pts[wi] = (point){t, w, e->candidate_id};
    }
  }
  free(rows);
  json_t *rpts = json_array();
  for (int wi = 0; wi < KS_MAX_WORKLOADS; wi++) {
    if (!pts[wi].w)
      continue;
    const json_t *w = pts[wi].w;
    double gb = jnum(w, "gbps"), gf = jnum(w, "gflops");
    json_t *p = json_pack(
        "{s:i, s:O, s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "workload", wi, "axes",
        json_object_get(w, "axes"), "candidate_id", (json_int_t)pts[wi].cand,
        "time_ns_min", pts[wi].time_ns_min, "gbps", num_or_null(gb), "gflops",
        num_or_null(gf), "intensity", num_or_null(gb > 0 ? gf / gb : NAN),
        "roofline_fraction", num_or_null(jnum(w, "roofline_fraction")),
        "speedup", num_or_null(jnum(w, "speedup")));
    if (p)
      json_array_append_new(rpts, p);
  }
  json_decref(results);
  json_object_set_new(facts, "evaluations", arr);
  json_object_set_new(facts, "statuses", statuses);
  json_object_set_new(facts, "roofline_points", rpts);
  return rc;
}

static json_t *node_by_id(const json_t *nodes, const char *id) {
  size_t i;
  json_t *n;
  json_array_foreach(nodes, i, n) if (!strcmp(jstr(n, "id"), id)) return n;
  return NULL;
}

/* "decision: choice" from the root's child down to id (root and split group
 * headers left out), like ks_wm_plan. */
static json_t *plan_of(const json_t *nodes, const char *id) {
  json_t *steps = json_array();
  const json_t *n = node_by_id(nodes, id);
  for (int guard = 0; n && guard < 4096; guard++) {
    const char *p = json_string_value(json_object_get(n, "parent"));
    if (!p || !*p)
      break; /* the root */
    if (!json_is_true(json_object_get(n, "split"))) {
      char step[512];
      snprintf(step, sizeof step, "%s: %s", jstr(n, "decision"),
               jstr(n, "choice"));
      json_array_insert_new(steps, 0, ks_report_str(step, strlen(step)));
    }
    n = node_by_id(nodes, p);
  }
  return steps;
}

/* The node with the best solution, its path marked on_best_path. */
static void mark_best_path(json_t *nodes, int64_t best_cand, json_t *tree) {
  json_t *best = NULL;
  size_t i;
  json_t *n;
  json_array_foreach(nodes, i, n) {
    json_t *sol = json_object_get(n, "solution");
    if (best_cand > 0 &&
        json_integer_value(json_object_get(sol, "candidate_id")) == best_cand)
      best = n;
    json_object_set_new(n, "on_best_path", json_false());
  }
  json_object_set_new(tree, "best_node",
                      best ? json_string(jstr(best, "id")) : json_null());
  for (int guard = 0; best && guard < 4096; guard++) {
    json_object_set_new(best, "on_best_path", json_true());
    const char *p = json_string_value(json_object_get(best, "parent"));
    best = p && *p ? node_by_id(nodes, p) : NULL;
  }
}

/* The candidate's source as one file: `#define`s of its parameters after
 * the `// ksearch:` header, `param` lines dropped (like best/<task>.c), so
 * that two candidates of one template differ where their values do. */
static char *baked_source(const char *src, const char *params_json) {
  json_t *params = json_loads(params_json ? params_json : "{}", 0, NULL);
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_puts(&b, "");
  bool header_done = false;
  const char *p = src ? src : "";
  for (;;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    bool is_header = !strncmp(p, "// ksearch:", 11);
    if (!header_done && (!is_header || !*p)) {
      header_done = true;
      const char *k;
      json_t *v;
      json_object_foreach(params, k, v) {
        if (json_is_string(v))
          ks_buf_printf(&b, "#define %s %s\n", k, json_string_value(v));
        else if (json_is_integer(v))
          ks_buf_printf(&b, "#define %s %lld\n", k,
                        (long long)json_integer_value(v));
      }
    }
    if (!*p)
      break;
    if (strncmp(p, "// ksearch: param ", 18))
      ks_buf_append(&b, p, len);
    p += len;
  }
  json_decref(params);
  return b.data;
}

/* The best kernel, its parent (the parent node's best candidate, else the
 * reference: the plan's starting point) and the diff between them. */
static ks_code best_kernel(ks_store *st, const json_t *nodes, json_t *facts,
                           ks_err *err) {
  ks_store_eval be;
  ks_store_candidate bc;
  bool found = false;
  ks_code rc = ks_store_best(st, &be, &bc, &found, err);
  if (rc || !found) {
    json_object_set_new(facts, "best", json_null());
    return rc;
  }
  char *mine = baked_source(bc.source, bc.params_json);
  json_t *params = json_loads(bc.params_json, 0, NULL);
  json_t *best = json_pack(
      "{s:I, s:I, s:s, s:f, s:o, s:o, s:o}", "candidate_id", (json_int_t)bc.id,
      "evaluation_id", (json_int_t)be.id, "node_id",
      bc.node_id ? bc.node_id : "", "score", be.score, "params",
      params ? params : json_object(), "plan",
      plan_of(nodes, bc.node_id ? bc.node_id : ""), "source", src_json(mine));
  /* the parent: the best candidate of the node's parent */
  const json_t *node = node_by_id(nodes, bc.node_id ? bc.node_id : "");
  const json_t *pn = node ? node_by_id(nodes, jstr(node, "parent")) : NULL;
  while (pn && json_is_true(json_object_get(pn, "split")))
    pn = node_by_id(nodes, jstr(pn, "parent"));
  int64_t pc = pn ? json_integer_value(json_object_get(
                        json_object_get(pn, "solution"), "candidate_id"))
                  : 0;
  char *theirs = NULL;
  json_t *parent = NULL;
  ks_store_candidate c;
  memset(&c, 0, sizeof c);
  if (pc > 0 && pc != bc.id && ks_store_get_candidate(st, pc, &c, err) == 0) {
    theirs = baked_source(c.source, c.params_json);
    parent =
        json_pack("{s:s, s:I, s:s, s:o}", "kind", "candidate", "candidate_id",
                  (json_int_t)pc, "node_id", jstr(pn, "id"), "score",
                  num_or_null(jnum(json_object_get(pn, "solution"), "score")));
    ks_store_candidate_free(&c);
  } else if (ks_store_get_task_snapshot(st, NULL, &theirs, err) == 0) {
    parent = json_pack("{s:s}", "kind", "reference");
  }
  if (parent) {
    json_t *d = ks_report_diff(theirs, mine, DIFF_CONTEXT, DIFF_MAX_LINES);
    json_object_set_new(parent, "diff", d ? d : json_null());
  }
  json_object_set_new(best, "parent", parent ? parent : json_null());
  free(theirs);
  free(mine);
  ks_store_candidate_free(&bc);
  json_object_set_new(facts, "best", best);
  return KS_OK;
}

static ks_code top_candidates(ks_store *st, const json_t *nodes, json_t *facts,
                              ks_err *err) {
  ks_store_eval *rows = NULL;
  size_t n = 0;
  ks_code rc = ks_store_top(st, TOP_MAX, &rows, &n, err);
  json_t *arr = json_array();
  for (size_t i = 0; i < n && !rc; i++) {
    ks_store_candidate c;
    memset(&c, 0, sizeof c);
    rc = ks_store_get_candidate(st, rows[i].candidate_id, &c, err);
    char *text = NULL;
    if (!rc)
      rc = ks_store_get_result_json(st, rows[i].id, &text, err);
    if (rc) {
      ks_store_candidate_free(&c);
      break;
    }
    json_t *res = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *wl = json_array();
    size_t wi;
    json_t *w;
    json_array_foreach(json_object_get(res, "workloads"), wi, w) {
      json_t *o = json_pack(
          "{s:O, s:o, s:o, s:o, s:o, s:o, s:o}", "axes",
          json_object_get(w, "axes"), "time_ns_min",
          num_or_null(jnum(w, "time_ns_min")), "time_ns_median",
          num_or_null(jnum(w, "time_ns_median")), "speedup",
          num_or_null(jnum(w, "speedup")), "gbps", num_or_null(jnum(w, "gbps")),
          "gflops", num_or_null(jnum(w, "gflops")), "roofline_fraction",
          num_or_null(jnum(w, "roofline_fraction")));
      if (o)
        json_array_append_new(wl, o);
    }
    json_decref(res);
    json_t *params = json_loads(c.params_json, 0, NULL);
    json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:f, s:o, s:o, s:o}", "rank",
                          (json_int_t)i + 1, "candidate_id", (json_int_t)c.id,
                          "evaluation_id", (json_int_t)rows[i].id, "node_id",
                          rows[i].node_id, "score", rows[i].score, "params",
                          params ? params : json_object(), "plan",
                          plan_of(nodes, rows[i].node_id), "workloads", wl);
    if (o)
      json_array_append_new(arr, o);
    ks_store_candidate_free(&c);
  }
  free(rows);
  json_object_set_new(facts, "top", arr);
  return rc;
}

static ks_code llm_calls(ks_store *st, json_t *facts, ks_err *err) {
  json_t *calls = NULL;
  ks_code rc = ks_store_list_llm_calls(st, &calls, err);
  if (rc)
    return rc;
  json_int_t pt = 0, ct = 0;
  double lat = 0;
  json_t *by = json_object();
  size_t i;
  json_t *c;
  json_array_foreach(calls, i, c) {
    pt += json_integer_value(json_object_get(c, "prompt_tokens"));
    ct += json_integer_value(json_object_get(c, "completion_tokens"));
    double l = jnum(c, "latency_s");
    lat += isfinite(l) ? l : 0;
    const char *s = jstr(c, "status");
    json_t *k = json_object_get(by, s);
    json_object_set_new(by, s, json_integer(k ? json_integer_value(k) + 1 : 1));
  }
  json_object_set_new(facts, "llm",
                      json_pack("{s:o, s:I, s:I, s:f, s:o}", "calls", calls,
                                "prompt_tokens", pt, "completion_tokens", ct,
                                "latency_s", lat, "by_status", by));
  return KS_OK;
}

/* The context of the latest session that recorded one (hook.c). */
static ks_code context(ks_store *st, json_t *facts, ks_err *err) {
  json_t *ev = NULL;
  ks_code rc = ks_store_list_events(st, "run_context", &ev, err);
  if (rc)
    return rc;
  size_t n = json_array_size(ev);
  json_t *last = n ? json_object_get(json_array_get(ev, n - 1), "json") : NULL;
  json_object_set(facts, "context", last ? last : json_null());
  json_object_set_new(facts, "sessions", json_integer((json_int_t)n));
  json_decref(ev);
  return KS_OK;
}

/* The run's state and the notes that explain an empty, failed, stopped or
 * unfinished run. */
/* own_store: the caller passed its own (writable) store, whose lock is the
 * caller's: then only `live` says whether a search is running. */
static void state_and_notes(const char *dir, bool live, bool own_store,
                            json_t *facts, json_t *notes,
                            const ks_store_counts *cnt) {
  const json_t *run = json_object_get(facts, "run");
  const char *stopped =
      json_string_value(json_object_get(run, "stopped_because"));
  const char *state;
  if (live || (!own_store && lock_held(dir)))
    state = "in progress";
  else if (!stopped)
    state = "stopped";
  else if (!strcmp(stopped, "interrupted"))
    state = "interrupted";
  else if (!strcmp(stopped, "error"))
    state = "error";
  else
    state = "finished";
  json_object_set_new(facts, "state", json_string(state));
  if (!strcmp(state, "in progress"))
    note(notes,
         "The search is in progress (%lld evaluations so far, %lld "
         "running): this page shows it as it was when written; `ksearch "
         "run --report` rewrites it after every evaluation (refresh).",
         (long long)cnt->finished, (long long)cnt->running);
  else if (!strcmp(state, "stopped"))
    note(notes,
         "The run stopped without recording why (killed, or ksearch "
         "crashed) after %lld evaluations; `ksearch run --resume %s` "
         "continues it without losing a finished evaluation.",
         (long long)cnt->finished, dir);
  else if (!strcmp(state, "interrupted"))
    note(notes,
         "The run was interrupted (Ctrl-C or SIGTERM) after %lld "
         "evaluations; `ksearch run --resume %s` continues it.",
         (long long)cnt->finished, dir);
  else if (!strcmp(state, "error"))
    note(notes,
         "The run ended with an error after %lld evaluations (its "
         "message was printed by `ksearch run`).",
         (long long)cnt->finished);
  if (cnt->finished == 0)
    note(notes, "No evaluation has finished: there is no score, tree "
                "evidence or kernel to show yet.");
  else if (cnt->correct == 0)
    note(notes,
         "All %lld evaluations failed: no correct kernel yet (the "
         "evaluations table gives each reason).",
         (long long)cnt->finished);
  if (cnt->running && !live && strcmp(state, "in progress"))
    note(notes,
         "%lld evaluation(s) were in flight when the run stopped; "
         "--resume proposes them again.",
         (long long)cnt->running);
  if (cnt->interrupted)
    note(notes,
         "%lld evaluation(s) were cut short by an earlier stop and "
         "proposed again on resume.",
         (long long)cnt->interrupted);
}

ks_code ks_report_facts(const char *run_dir, ks_store *store, bool live,
                        json_t **out, ks_err *err) {
  *out = NULL;
  ks_store *st = store;
  char db[4096];
  snprintf(db, sizeof db, "%s/%s", run_dir, KS_STORE_FILE);
  if (!st) {
    if (!ks_file_exists(db))
      return ks_err_set(err, KS_ERR_INPUT,
                        "%s: not a run folder (no %s); give a folder that "
                        "`ksearch run` wrote",
                        run_dir, KS_STORE_FILE);
    ks_code rc = ks_store_open_readonly(db, &st, err);
    if (rc)
      return rc;
  }
  json_t *facts = json_object(), *notes = json_array();
  json_object_set_new(facts, "ksearch_report",
                      json_integer(KS_REPORT_FACTS_VERSION));
  json_object_set_new(facts, "run_dir", src_json(run_dir));
  json_object_set_new(facts, "generated", json_real((double)time(NULL)));
  ks_code rc;
  json_object_set_new(facts, "run", run_row(st, err, &rc));
  ks_store_counts cnt;
  memset(&cnt, 0, sizeof cnt);
  if (!rc)
    rc = ks_store_counts_get(st, &cnt, err);
  json_object_set_new(facts, "counts",
                      json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                                "candidates", (json_int_t)cnt.candidates,
                                "evaluations", (json_int_t)cnt.finished,
                                "correct", (json_int_t)cnt.correct, "failed",
                                (json_int_t)(cnt.finished - cnt.correct),
                                "running", (json_int_t)cnt.running,
                                "interrupted", (json_int_t)cnt.interrupted,
                                "llm_calls", (json_int_t)cnt.llm_calls));
  if (!rc && json_is_null(json_object_get(facts, "run")))
    note(notes, "The store holds no run yet: ksearch stopped before it "
                "recorded one.");
  if (!rc)
    state_and_notes(run_dir, live, store != NULL, facts, notes, &cnt);
  /* the tree: world_model.json, else the store's copy */
  json_t *wm = load_file(run_dir, "world_model.json", notes, NULL);
  json_t *nodes = wm ? json_incref(json_object_get(wm, "nodes")) : NULL;
  const char *tree_src = "world_model.json";
  if (!json_is_array(nodes)) {
    json_decref(nodes);
    nodes = NULL;
    if (!rc && ks_store_list_nodes(st, &nodes, err) == 0 &&
        json_array_size(nodes))
      tree_src = "ksearch.db";
    else
      tree_src = NULL;
  }
  json_decref(wm);
  if (!nodes)
    nodes = json_array();
  if (!tree_src)
    note(notes, "No world model was saved yet (world_model.json is "
                "missing): the run stopped before its tree was written.");
  const json_t *root = node_by_id(nodes, "root");
  json_object_set_new(facts, "analysis", json_string(jstr(root, "notes")));
  if (!rc)
    rc = evaluations(st, facts, err);
  if (!rc)
    rc = best_kernel(st, nodes, facts, err);
  json_t *tree = json_object();
  const json_t *best = json_object_get(facts, "best");
  mark_best_path(
      nodes, json_integer_value(json_object_get(best, "candidate_id")), tree);
  json_object_set_new(tree, "source",
                      tree_src ? json_string(tree_src) : json_null());
  json_object_set_new(tree, "nodes", nodes);
  json_object_set_new(facts, "tree", tree);
  if (!rc)
    rc = top_candidates(st, nodes, facts, err);
  if (!rc)
    rc = llm_calls(st, facts, err);
  if (!rc)
    rc = context(st, facts, err);
  if (!rc && json_is_null(json_object_get(facts, "context")))
    note(notes, "Machine, roofline and command line are unknown: ksearch "
                "records them at a session's first evaluation (this run has "
                "none, or an older ksearch made it).");
  json_t *summary = load_file(run_dir, "summary.json", notes, NULL);
  json_object_set_new(facts, "summary", summary ? summary : json_null());
  json_object_set_new(facts, "notes", notes);
  if (!store)
    ks_store_close(st);
  if (rc) {
    json_decref(facts);
    return rc;
  }
  *out = facts;
  return KS_OK;
}
