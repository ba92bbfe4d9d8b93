/* planner_llm.c — the "llm" planner (DESIGN.md: LLM planner and coder;
 * issues 4 and 22). An LLM behind any OpenAI-compatible endpoint (llm/llm.h)
 * plays K-Search's two roles on any backend the coder has a row for
 * (llm/target.h: c, opencl, cuda):
 *
 * 1. It keeps the world model up to date through edit operations. init: a
 *    deep analysis and the initial tree as an edit script of inserts. After
 *    each evaluation, refine: a required reflection and edits (children of a
 *    node just solved, priorities moved by the evidence, pruning). When a
 *    node used up its attempts, too-hard: split it into smaller steps or
 *    lower its priority (one review per node; after that it fails). When
 *    the frontier runs dry, propose: new open actions. Every script is
 *    validated (llm/edits.h, ks_wm_apply_json) and applied all or nothing
 *    (planner_llm_ask.c).
 * 2. It writes the candidate for the node chosen by ks_wm_select
 *    (planner_llm_coder.c): code, debug or improve prompts carrying the
 *    target's facts, format, baseline and concepts; the answer checked
 *    before any compiler.
 *
 * This file holds the planner interface and the world-model roles; memory
 * and helpers are in planner_llm_state.c. Judging is ksearch's, from
 * measurements, as in the built-in planner: a node is solved when a
 * candidate is correct and it is a first-level node or beats its parent's
 * score; it goes to too-hard review after --attempts attempts without that.
 * The token budget ends the run through KS_LLM_ERR_TOKEN_BUDGET (search.c:
 * stopped_because "token budget"). --seed-cuda (spec/seed.h) puts the CUDA
 * kernel's concepts, their form on the target and its source into the
 * prompts' target section. */
#include "eval/eval.h"
#include "llm/prompts.h"
#include "search/planner_llm_internal.h"
#include "spec/spec.h"
#include "store/store.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

const char *const ks_llmp_prompt_names[P_COUNT] = {
    "system", "edit_ops", "init",   "propose", "code",
    "debug",  "improve",  "refine", "too_hard"};

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- create */

static void planner_free(void *self) {
  llm_planner *p = self;
  if (!p)
    return;
  ks_llm_free(p->llm);
  for (int i = 0; i < P_COUNT; i++)
    free(p->prompt[i]);
  free(p->system);
  free(p->task_text);
  free(p->task_short);
  free(p->spec_text);
  ks_spec_seed_free(p->cuda_seed);
  json_decref(p->memo);
  json_decref(p->results);
  json_decref(p->sources);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

static ks_code create(const ks_planner_ctx *ctx, void **self, ks_err *err) {
  *self = NULL;
  const char *bname = ctx->backend ? ctx->backend : "c";
  const ks_llm_backend *be = ks_llm_backend_find(bname);
  if (!be)
    return ks_err_set(
        err, KS_ERR_ENV,
        "--planner llm: the LLM coder cannot write for backend "
        "%s yet (it knows c, opencl, cuda and mlx; a backend plugs "
        "in as a row of src/llm/target.c); use --planner "
        "builtin",
        bname);
  /* --seed-cuda is every planner's option, not the LLM client's */
  json_t *opts = ctx->options ? json_deep_copy(ctx->options) : json_object();
  const char *seed_path =
      json_string_value(json_object_get(ctx->options, "seed_cuda"));
  json_object_del(opts, "seed_cuda");
  ks_llm_config cfg;
  ks_code rc = ks_llm_config_from_json(opts, &cfg, err);
  json_decref(opts);
  if (rc)
    return rc;
  llm_planner *p = ks_xcalloc(1, sizeof *p);
  p->task = ctx->task;
  p->backend = bname;
  p->be = be;
  p->tpls = ctx->tpls;
  p->spec = ctx->spec;
  p->an = ctx->an;
  p->roof = ctx->roof;
  p->store = ctx->store;
  p->seed = ctx->seed;
  p->max_attempts = ctx->max_attempts > 0 ? ctx->max_attempts : 3;
  p->memo = json_object();
  p->results = json_object();
  p->sources = json_object();
  pthread_mutex_init(&p->mu, NULL);
  if (seed_path)
    rc = ks_spec_seed_load(seed_path, p->backend, &p->cuda_seed, err);
  for (int i = 0; i < P_COUNT && !rc; i++)
    rc = ks_prompt_load(ks_llmp_prompt_names[i], &p->prompt[i], err);
  if (!rc) {
    ks_prompt_var v[] = {{"backend", p->backend}, {"build", be->build}};
    rc = ks_prompt_render(p->prompt[P_SYSTEM], "system.txt", v, 2, &p->system,
                          err);
  }
  if (!rc)
    rc = ks_llm_new(&cfg, p->store, &p->llm, err);
  if (rc) {
    planner_free(p);
    return rc;
  }
  const ks_spec_target *st;
  ks_err se;
  bool spec_checker = ks_spec_target_get(be->target, &st, &se) == KS_OK;
  p->task_text = ks_llm_task_text(p->task, true);
  p->task_short = ks_llm_task_short(p->task);
  ks_llm_target_in tin = {be, p->task, p->roof, p->spec, p->cuda_seed};
  p->spec_text = ks_llm_target_text(&tin);
  ks_log(KS_LOG_INFO,
         "llm planner: %s, model %s%s%s%s%s; backend %s; prompts from %s; "
         "checks before compiling: %s%s%s",
         cfg.base_url, cfg.model, cfg.coder_model[0] ? ", coder " : "",
         cfg.coder_model, cfg.cache_dir[0] ? ", cache " : "", cfg.cache_dir,
         be->name, ks_prompts_dir(),
         spec_checker ? "the spec validator"
                      : "llm/precheck.c (no spec for this target yet)",
         be->launch != KS_LLM_LAUNCH_NONE ? " + header and launch lines" : "",
         p->cuda_seed ? "; seeded by a CUDA kernel" : "");
  *self = p;
  return KS_OK;
}

/* ---------------------------------------------------------------- init */

static bool check_frontier(const ks_wm *after, const void *arg, char *why,
                           size_t n) {
  (void)arg;
  if (ks_wm_frontier(after, NULL, 0) > 0)
    return true;
  snprintf(why, n,
           "after your ops no open node can be tried (the frontier is "
           "empty); insert open nodes under the root or a solved node");
  return false;
}

static ks_code fallback_tree(llm_planner *p, ks_wm *wm, ks_err *err) {
  ks_log(KS_LOG_INFO, "llm init: no usable world model from the model; "
                      "starting from a minimal tree");
  int n = p->tpls && p->tpls->n ? p->tpls->n : 1;
  for (int i = 0; i < n; i++) {
    ks_wm_node_spec s;
    ks_wm_spec_init(&s);
    s.parent = KS_WM_ROOT_ID;
    s.decision = "algorithm";
    char desc[300];
    if (p->tpls && p->tpls->n) {
      s.choice = p->tpls->t[i].family;
      snprintf(desc, sizeof desc, "start from template %s and make it faster",
               p->tpls->t[i].name);
    } else {
      s.choice = "direct vectorized implementation";
      snprintf(desc, sizeof desc,
               "the reference's algorithm, vectorized and parallelized");
    }
    s.description = desc;
    s.rationale = "fallback: the model's initial plan was unusable";
    s.difficulty = 2;
    s.priority = 0.5;
    ks_code rc = ks_wm_insert(wm, &s, NULL, err);
    if (rc)
      return rc;
  }
  return KS_OK;
}

static ks_code init_tree(void *self, ks_wm *wm, ks_err *err) {
  llm_planner *p = self;
  if (ks_wm_count(wm) > 1)
    return KS_OK; /* resumed: the tree is already there */
  ks_wm_set_root_notes(wm, p->an->text);
  char *tpl = ks_llm_templates_text(p->tpls);
  char *prompt = NULL;
  ks_prompt_var v[] = {{"task", p->task_text},
                       {"spec", p->spec_text},
                       {"analysis", p->an->text},
                       {"templates", tpl},
                       {"edit_ops", p->prompt[P_EDIT_OPS]},
                       {"max_nodes", "12"}};
  ks_code rc =
      ks_prompt_render(p->prompt[P_INIT], "init.txt", v, 6, &prompt, err);
  free(tpl);
  if (rc)
    return rc;
  ks_llm_edit_answer a;
  rc = ks_llmp_ask_edits(p, wm, "init", prompt, true, false, check_frontier,
                         NULL, &a, err);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET) {
    ks_llmp_log_budget(p, err);
    return KS_OK; /* propose reports it; the loop ends the run cleanly */
  }
  if (rc == KS_ERR_INPUT)
    return fallback_tree(p, wm, err);
  if (rc)
    return rc;
  if (a.analysis[0]) {
    ks_buf notes;
    ks_buf_init(&notes);
    ks_buf_printf(&notes, "%s\nLLM deep analysis:\n%s", p->an->text,
                  a.analysis);
    ks_wm_set_root_notes(wm, notes.data);
    ks_buf_free(&notes);
  }
  ks_llm_edit_answer_free(&a);
  return KS_OK;
}

static void remember(void *self, int64_t cand_id, const char *params) {
  (void)self;
  (void)cand_id;
  (void)params; /* LLM candidates carry their choices in their code */
}

/* ---------------------------------------------------------------- propose */

static ks_code grow_frontier(llm_planner *p, ks_wm *wm, ks_err *err) {
  char *tree = ks_llmp_tree_text(wm);
  const ks_wm_node *best = ks_wm_best_solved(wm);
  char best_text[256];
  if (best)
    snprintf(best_text, sizeof best_text, "node %s, score %#.3fx", best->id,
             best->solution.score);
  else
    snprintf(best_text, sizeof best_text, "nothing correct yet");
  ks_prompt_var v[] = {{"task_short", p->task_short},
                       {"world_model", tree},
                       {"best", best_text},
                       {"edit_ops", p->prompt[P_EDIT_OPS]}};
  char *prompt = NULL;
  ks_code rc =
      ks_prompt_render(p->prompt[P_PROPOSE], "propose.txt", v, 4, &prompt, err);
  free(tree);
  if (rc)
    return rc;
  ks_llm_edit_answer a;
  rc = ks_llmp_ask_edits(p, wm, "propose", prompt, false, false, check_frontier,
                         NULL, &a, err);
  free(prompt);
  if (!rc)
    ks_llm_edit_answer_free(&a);
  return rc;
}

/* No usable code for node `id` this time: counted against the node, which
 * fails after --attempts of them. */
static void count_wasted(llm_planner *p, ks_wm *wm, const char *id,
                         const char *why) {
  json_t *m = ks_llmp_memo_of(p, id);
  int wasted = (int)json_integer_value(json_object_get(m, "wasted")) + 1;
  json_object_set_new(m, "wasted", json_integer(wasted));
  if (wasted < p->max_attempts)
    return;
  ks_err e2;
  char notes[600];
  const ks_wm_node *x = ks_wm_find(wm, id);
  snprintf(notes, sizeof notes,
           "%s%sksearch: no usable code after %d tries: %.300s", x->notes,
           *x->notes ? "\n" : "", wasted, why);
  json_t *upd = json_pack("{s:s, s:s}", "status", "failed", "notes", notes);
  if (ks_wm_update(wm, id, upd, &e2))
    ks_log(KS_LOG_INFO, "llm: could not mark %s failed: %s", id, e2.msg);
  json_decref(upd);
}

static ks_code propose(void *self, ks_wm *wm, int iteration, ks_proposal *out,
                       ks_err *err) {
  llm_planner *p = self;
  memset(out, 0, sizeof *out);
  p->proposed = true;
  if (p->budget_spent || ks_llm_budget_spent(p->llm))
    return ks_err_set(err, KS_LLM_ERR_TOKEN_BUDGET,
                      "the LLM token budget is spent (%lld tokens used)",
                      (long long)ks_llm_tokens_used(p->llm));
  /* a model that only repeats code evaluated before makes no progress:
   * after this many proposals without an evaluation the search ends */
  if (++p->since_eval > 2 * p->max_attempts + 4) {
    ks_log(KS_LOG_INFO,
           "llm propose: %d proposals in a row repeated code "
           "evaluated before",
           p->since_eval - 1);
    return KS_OK;
  }
  int cap = 3 * p->max_attempts + 3;
  for (int round = 0; round < cap; round++) {
    const ks_wm_node *n = ks_wm_select(
        wm, 0.25, mix(p->seed, (uint64_t)iteration * 64 + (uint64_t)round));
    if (!n) {
      if (p->dry_proposals >= 2 || p->grown_since_eval >= 2) {
        ks_log(KS_LOG_INFO, "llm propose: the model added no open plan "
                            "that led to an evaluation, twice in a row");
        return KS_OK;
      }
      p->grown_since_eval++;
      ks_code rc = grow_frontier(p, wm, err);
      if (rc == KS_ERR_INPUT) {
        p->dry_proposals++;
        continue;
      }
      if (rc == KS_LLM_ERR_TOKEN_BUDGET)
        ks_llmp_log_budget(p, err);
      if (rc)
        return rc;
      p->dry_proposals = 0;
      continue;
    }
    char id[KS_WM_ID_MAX];
    ks_strlcpy(id, n->id, sizeof id);
    ks_code rc = ks_llmp_write_code(p, wm, n, out, err);
    if (rc == KS_LLM_ERR_TOKEN_BUDGET)
      ks_llmp_log_budget(p, err);
    if (rc != KS_ERR_CANDIDATE)
      return rc;
    count_wasted(p, wm, id, err->msg);
  }
  ks_log(KS_LOG_INFO, "llm propose: no usable code in %d tries", cap);
  return KS_OK;
}

/* ---------------------------------------------------------- propose_batch */

typedef struct coder_job {
  llm_planner *p;
  const ks_wm *wm;
  const ks_wm_node *n;
  ks_proposal out;
  ks_err err;
  ks_code rc;
} coder_job;

static void *coder_thread(void *arg) {
  coder_job *j = arg;
  j->rc = ks_llmp_write_code(j->p, j->wm, j->n, &j->out, &j->err);
  return NULL;
}

/* Up to k candidates from k distinct open plans, their code written by
 * concurrent coder calls (search through a broker, --parallel: DESIGN.md
 * Workers); --llm-max-inflight bounds the calls in flight. The tree is not
 * changed while they run; what they learn is applied afterwards, in plan
 * order. Too few open plans, or no usable code from any: propose()'s path
 * (it grows the frontier and tries other plans). */
static ks_code propose_batch(void *self, ks_wm *wm, int iteration, int k,
                             ks_proposal *out, int *n_out, ks_err *err) {
  llm_planner *p = self;
  *n_out = 0;
  enum { MAX_BATCH = 64 };
  if (k > MAX_BATCH)
    k = MAX_BATCH;
  char ids[MAX_BATCH][KS_WM_ID_MAX];
  int m = 0;
  ks_err e;
  /* distinct plans: each one chosen is held while the next is chosen */
  for (int i = 0; k > 1 && i < k; i++) {
    const ks_wm_node *n = ks_wm_select(
        wm, 0.25, mix(p->seed, (uint64_t)iteration * 64 + (uint64_t)i));
    if (!n)
      break;
    ks_strlcpy(ids[m], n->id, KS_WM_ID_MAX);
    if (ks_wm_set_status(wm, ids[m++], KS_WM_RUNNING, &e))
      break;
  }
  for (int i = 0; i < m; i++)
    ks_wm_set_status(wm, ids[i], KS_WM_OPEN, &e);
  if (m < 2 || p->budget_spent || ks_llm_budget_spent(p->llm)) {
    ks_code rc = propose(self, wm, iteration, &out[0], err);
    *n_out = !rc && out[0].node_id[0] ? 1 : 0;
    return rc;
  }
  p->proposed = true;
  p->since_eval++;
  coder_job *jobs = ks_xcalloc((size_t)m, sizeof *jobs);
  pthread_t th[MAX_BATCH];
  bool started[MAX_BATCH] = {false};
  for (int i = 0; i < m; i++) {
    jobs[i].p = p;
    jobs[i].wm = wm;
    jobs[i].n = ks_wm_find(wm, ids[i]);
    started[i] = pthread_create(&th[i], NULL, coder_thread, &jobs[i]) == 0;
    if (!started[i]) /* no thread: this one in the caller's */
      coder_thread(&jobs[i]);
  }
  for (int i = 0; i < m; i++)
    if (started[i])
      pthread_join(th[i], NULL);
  ks_code rc = KS_OK;
  for (int i = 0; i < m; i++) {
    if (jobs[i].rc == KS_OK && !rc) {
      out[(*n_out)++] = jobs[i].out;
      continue;
    }
    if (jobs[i].rc == KS_OK)
      ks_proposal_free(&jobs[i].out);
    else if (jobs[i].rc == KS_ERR_CANDIDATE)
      count_wasted(p, wm, ids[i], jobs[i].err.msg);
    else if (!rc) {
      rc = jobs[i].rc;
      *err = jobs[i].err;
      if (rc == KS_LLM_ERR_TOKEN_BUDGET)
        ks_llmp_log_budget(p, err);
    }
  }
  free(jobs);
  if (rc) {
    for (int i = 0; i < *n_out; i++)
      ks_proposal_free(&out[i]);
    *n_out = 0;
    return rc;
  }
  if (*n_out == 0) {
    rc = propose(self, wm, iteration, &out[0], err);
    *n_out = !rc && out[0].node_id[0] ? 1 : 0;
  }
  return rc;
}

/* ---------------------------------------------------------------- observe */

static char *evidence_text(llm_planner *p, const ks_wm_node *n, int last) {
  ks_buf b;
  ks_buf_init(&b);
  int from = n->n_evidence > last ? n->n_evidence - last : 0;
  for (int i = from; i < n->n_evidence; i++) {
    const json_t *r = ks_llmp_cand_result(p, n->evidence[i]);
    ks_buf_printf(&b, "attempt %d, candidate %lld:\n%s", i + 1,
                  (long long)n->evidence[i],
                  ks_llmp_result_field(r, "text", "(no result recorded)\n"));
  }
  if (!b.data)
    ks_buf_puts(&b, "(no attempts)\n");
  return b.data;
}

typedef struct too_hard_arg {
  char id[KS_WM_ID_MAX];
  double priority;
} too_hard_arg;

static bool check_too_hard(const ks_wm *after, const void *arg, char *why,
                           size_t n) {
  const too_hard_arg *a = arg;
  const ks_wm_node *x = ks_wm_find(after, a->id);
  if (x && (x->split || x->status == KS_WM_PRUNED ||
            (x->status == KS_WM_OPEN && x->action.priority < a->priority)))
    return true;
  snprintf(why, n,
           "the ops neither split %s nor lower its priority below %.2f; do "
           "one of the two",
           a->id, a->priority);
  return false;
}

static ks_code append_note(ks_wm *wm, const char *id, const char *text,
                           ks_err *err) {
  const ks_wm_node *x = ks_wm_find(wm, id);
  if (!x)
    return KS_OK;
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "%s%s%s", x->notes, *x->notes ? "\n" : "", text);
  char *clipped = ks_llm_clip(b.data, 4000);
  ks_buf_free(&b);
  json_t *upd = json_pack("{s:s}", "notes", clipped);
  free(clipped);
  ks_code rc = ks_wm_update(wm, id, upd, err);
  json_decref(upd);
  return rc;
}

/* The node used up its attempts: split, lower its priority (one more round
 * of attempts), or fail. */
static ks_code too_hard(llm_planner *p, ks_wm *wm, const char *id,
                        ks_err *err) {
  const ks_wm_node *n = ks_wm_find(wm, id);
  if (ks_llmp_reviews_of(n) >= 1 || p->budget_spent)
    return ks_wm_set_status(wm, id, KS_WM_FAILED, err);
  char *ev = evidence_text(p, n, 4);
  char *tree = ks_llmp_tree_text(wm);
  char prio[32];
  snprintf(prio, sizeof prio, "%.2f", n->action.priority);
  ks_prompt_var v[] = {{"task_short", p->task_short},
                       {"node", id},
                       {"evidence", ev},
                       {"world_model", tree},
                       {"edit_ops", p->prompt[P_EDIT_OPS]},
                       {"priority", prio}};
  char *prompt = NULL;
  ks_code rc = ks_prompt_render(p->prompt[P_TOO_HARD], "too_hard.txt", v, 6,
                                &prompt, err);
  free(ev);
  free(tree);
  if (rc)
    return rc;
  too_hard_arg arg;
  ks_strlcpy(arg.id, id, sizeof arg.id);
  arg.priority = n->action.priority;
  ks_llm_edit_answer a;
  ks_err e;
  rc = ks_llmp_ask_edits(p, wm, "too_hard", prompt, false, true, check_too_hard,
                         &arg, &a, &e);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET)
    ks_llmp_log_budget(p, &e);
  if (rc == KS_ERR_ENV) {
    *err = e;
    return rc;
  }
  if (rc)
    return ks_wm_set_status(wm, id, KS_WM_FAILED, err);
  char note[1200];
  snprintf(note, sizeof note, "ksearch: %s 1 after %d attempts: %.1000s",
           REVIEW_MARK, ks_wm_find(wm, id)->attempts, a.reflection);
  ks_llm_edit_answer_free(&a);
  return append_note(wm, id, note, err);
}

static ks_code refine(llm_planner *p, ks_wm *wm, const char *id,
                      const char *outcome, ks_err *err) {
  const ks_wm_node *n = ks_wm_find(wm, id);
  if (!n)
    return KS_OK;
  char *ev = evidence_text(p, n, 1);
  char *tree = ks_llmp_tree_text(wm);
  ks_prompt_var v[] = {
      {"task_short", p->task_short}, {"node", id},
      {"outcome", outcome},          {"evidence", ev},
      {"world_model", tree},         {"edit_ops", p->prompt[P_EDIT_OPS]}};
  char *prompt = NULL;
  ks_code rc =
      ks_prompt_render(p->prompt[P_REFINE], "refine.txt", v, 6, &prompt, err);
  free(ev);
  free(tree);
  if (rc)
    return rc;
  ks_llm_edit_answer a;
  ks_err e;
  rc = ks_llmp_ask_edits(p, wm, "refine", prompt, false, true, NULL, NULL, &a,
                         &e);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET) {
    ks_llmp_log_budget(p, &e);
    return KS_OK; /* the next propose ends the run */
  }
  if (rc == KS_ERR_ENV) {
    *err = e;
    return rc;
  }
  if (rc)
    return KS_OK; /* unusable after re-asks: the tree stays as it is */
  char note[1200];
  snprintf(note, sizeof note, "reflection after candidate %lld: %.1000s",
           n->n_evidence ? (long long)n->evidence[n->n_evidence - 1] : 0LL,
           a.reflection);
  ks_llm_edit_answer_free(&a);
  /* the node may have been deleted or pruned by the edits */
  if (ks_wm_find(wm, id))
    return append_note(wm, id, note, err);
  return KS_OK;
}

static ks_code observe(void *self, ks_wm *wm, const char *node_id,
                       int64_t cand_id, double score,
                       const struct ks_eval_result *res, ks_err *err) {
  llm_planner *p = self;
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  if (!n)
    return KS_OK; /* the node was deleted meanwhile: nothing to learn */
  char id[KS_WM_ID_MAX];
  ks_strlcpy(id, node_id, sizeof id);
  /* code repeated from an earlier candidate (nothing was evaluated) does
   * not show that this plan works: recorded as an attempt without a
   * solution */
  bool repeat = !res && p->proposed;
  ks_code rc = ks_wm_record_attempt(wm, id, cand_id, repeat ? 0 : score, err);
  if (rc)
    return rc;
  const char *code = ks_llmp_memo_str(p, id, "code");
  if (code && res) {
    char key[32];
    ks_llmp_id_key(cand_id, key);
    json_object_set_new(p->sources, key, json_string(code));
  }
  if (res) {
    p->since_eval = 0;
    p->grown_since_eval = 0;
    json_t *rj = ks_eval_result_to_json(p->task, res);
    ks_llmp_remember_result(p, cand_id, rj);
    json_decref(rj);
    ks_llmp_memo_set(p, id, "note", NULL);
    if (res->status != KS_EVAL_OK) {
      char key[32];
      ks_llmp_id_key(cand_id, key);
      /* a compile error is told once, under "Compiler output" */
      ks_llmp_memo_set(
          p, id, "feedback",
          res->status == KS_EVAL_COMPILE_ERROR
              ? "status: compile_error (the compiler output is below)"
              : ks_llmp_result_field(json_object_get(p->results, key), "text",
                                     "?"));
      ks_llmp_memo_set(p, id, "status", ks_eval_status_name(res->status));
      char *comp =
          res->status == KS_EVAL_COMPILE_ERROR
              ? ks_llm_compiler_text(res->build_log.data ? res->build_log.data
                                                         : res->error,
                                     6000)
              : NULL;
      ks_llmp_memo_set(p, id, "compiler", comp ? comp : "(it built)");
      free(comp);
    } else {
      ks_llmp_memo_set(p, id, "feedback", NULL);
      ks_llmp_memo_set(p, id, "compiler", NULL);
    }
  } else if (p->proposed) {
    /* the model repeated a stored candidate: nothing was evaluated */
    char note[200];
    snprintf(note, sizeof note,
             "note: the last answer repeated candidate %lld exactly (score "
             "%#.3fx); write something different",
             (long long)cand_id, score);
    ks_llmp_memo_set(p, id, "note", note);
    if (score <= 0 && !ks_llmp_memo_str(p, id, "feedback")) {
      const json_t *r = ks_llmp_cand_result(p, cand_id);
      ks_llmp_memo_set(p, id, "feedback",
                       ks_llmp_result_field(r, "text", note));
      ks_llmp_memo_set(p, id, "status",
                       ks_llmp_result_field(r, "status", "failed"));
    }
  }
  n = ks_wm_find(wm, id);
  bool family = ks_llmp_first_level(n);
  double parent_score = family ? 0 : n->up->solution.score;
  char outcome[400] = "";
  bool reviewed = false;
  if (n->status == KS_WM_OPEN && score > 0 && !repeat &&
      (family || score > parent_score)) {
    rc = ks_wm_set_status(wm, id, KS_WM_SOLVED, err);
    if (family)
      snprintf(outcome, sizeof outcome,
               "solved: correct, score %#.3fx (a first-level plan is solved "
               "by any correct kernel)",
               score);
    else
      snprintf(outcome, sizeof outcome,
               "solved: score %#.3fx beats the parent's %#.3fx", score,
               parent_score);
  } else if (n->status == KS_WM_OPEN &&
             n->attempts >= p->max_attempts * (1 + ks_llmp_reviews_of(n))) {
    if (res)
      rc = too_hard(p, wm, id, err);
    else
      rc = ks_wm_set_status(wm, id, KS_WM_FAILED, err);
    reviewed = true;
  } else if (score > 0) {
    snprintf(outcome, sizeof outcome,
             "still open: correct, score %#.3fx, but the parent's %#.3fx is "
             "not beaten (attempt %d of %d)",
             score, parent_score, n->attempts,
             p->max_attempts * (1 + ks_llmp_reviews_of(n)));
  } else {
    snprintf(outcome, sizeof outcome, "still open: attempt %d of %d failed",
             n->attempts, p->max_attempts * (1 + ks_llmp_reviews_of(n)));
  }
  if (rc || reviewed || !res || p->budget_spent)
    return rc;
  return refine(p, wm, id, outcome, err);
}

const ks_planner_i ks_planner_llm = {
    .name = "llm",
    .needs_templates = false,
    .create = create,
    .init_tree = init_tree,
    .remember = remember,
    .propose = propose,
    .propose_batch = propose_batch,
    .observe = observe,
    .destroy = planner_free,
};
