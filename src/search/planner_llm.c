/* planner_llm.c — the "llm" planner and coder (DESIGN.md: planner / coder;
 * issue 4). An LLM behind any OpenAI-compatible endpoint (llm/llm.h) plays
 * K-Search's two roles:
 *
 * 1. It keeps the world model up to date through edit operations. init: a
 *    deep analysis and the initial tree as an edit script of inserts. After
 *    each evaluation, refine: a required reflection and edits (children of a
 *    node just solved, priorities moved by the evidence, pruning). When a
 *    node used up its attempts, too-hard: split it into smaller steps or
 *    lower its priority (one review per node; after that it fails). When
 *    the frontier runs dry, propose: new open actions. Every script is
 *    validated (llm/edits.h, ks_wm_apply_json) and applied all or nothing; an
 *    unusable answer is re-asked at most KS_LLM_REASKS times, quoting the
 *    errors, and then given up on (the run goes on).
 * 2. It writes the candidate for the node chosen by ks_wm_select on the
 *    frontier (as the built-in planner does): code prompt for a first
 *    attempt (parent's best code, or the task's best-matching template, as a
 *    starting point), debug prompt after a compile error, a wrong result, a
 *    crash, a sandbox rejection or a primitive-check rejection, improve
 *    prompt (timings and roofline fractions) when the node's code is correct
 *    but does not beat its parent. Code comes from fenced blocks; the
 *    `// ksearch:` header is added when missing; the primitive check runs
 *    before any compiler: the spec validator (spec/validator.h) when the
 *    target's spec data exists, else llm/precheck.h's first version for C.
 *
 * Judging is ksearch's, from measurements, as in the built-in planner: a
 * node is solved when a candidate is correct and it is a first-level node or
 * beats its parent's score; it goes to too-hard review after --attempts
 * attempts without that. The token budget ends the run through
 * KS_LLM_ERR_TOKEN_BUDGET (search.c: stopped_because "token budget"). */
#include "eval/eval.h"
#include "llm/answer.h"
#include "llm/context.h"
#include "llm/edits.h"
#include "llm/llm.h"
#include "llm/precheck.h"
#include "llm/prompts.h"
#include "search/planner.h"
#include "spec/spec.h"
#include "spec/validator.h"
#include "store/store.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define KS_LLM_REASKS 2 /* re-asks after an unusable answer */
#define ECHO_MAX 6000   /* bytes of a bad answer quoted back */
#define CODE_MAX 48000  /* bytes of code quoted in a prompt */
#define TREE_MAX 10000  /* bytes of the whole tree in a prompt */
#define REVIEW_MARK "too-hard review"

enum {
  P_SYSTEM,
  P_EDIT_OPS,
  P_INIT,
  P_PROPOSE,
  P_CODE,
  P_DEBUG,
  P_IMPROVE,
  P_REFINE,
  P_TOO_HARD,
  P_COUNT
};
static const char *const k_prompt_names[P_COUNT] = {
    "system", "edit_ops", "init",   "propose", "code",
    "debug",  "improve",  "refine", "too_hard"};

typedef struct llm_planner {
  const ks_task *task;
  const char *backend;
  const ks_template_set *tpls;
  const ks_class_spec *spec;
  const ks_analysis *an;
  const ks_roofline *roof;
  ks_store *store;
  uint64_t seed;
  int max_attempts;
  ks_llm *llm;
  char *prompt[P_COUNT];
  char *system;                 /* rendered system prompt */
  char *task_text, *task_short; /* the task, with and without details */
  char *spec_text;
  json_t *memo;    /* node id -> {feedback, status, compiler, code, note} */
  json_t *results; /* candidate id -> {text, timings, status} */
  json_t *sources; /* candidate id -> source */
  bool budget_spent;
  int dry_proposals;    /* propose prompts in a row that added nothing */
  bool spec_checker;    /* specs/targets knows the backend: use the validator */
  bool proposed;        /* this session proposed: a result without res is a
                           repeat, not a replay on resume */
  int since_eval;       /* proposals since the last evaluated one */
  int grown_since_eval; /* propose prompts since the last evaluation */
} llm_planner;

/* ---------------------------------------------------------------- helpers */

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static void id_key(int64_t id, char key[32]) {
  snprintf(key, 32, "%lld", (long long)id);
}

static json_t *memo_of(llm_planner *p, const char *node) {
  json_t *m = json_object_get(p->memo, node);
  if (!m) {
    m = json_object();
    json_object_set_new(p->memo, node, m);
  }
  return m;
}

static const char *memo_str(llm_planner *p, const char *node, const char *key) {
  return json_string_value(
      json_object_get(json_object_get(p->memo, node), key));
}

static void memo_set(llm_planner *p, const char *node, const char *key,
                     const char *v) {
  json_t *m = memo_of(p, node);
  if (v)
    json_object_set_new(m, key, json_string(v));
  else
    json_object_del(m, key);
}

static void event(llm_planner *p, const char *kind, json_t *j) {
  if (!p->store) {
    json_decref(j);
    return;
  }
  char *s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  ks_err e;
  if (s && ks_store_add_event(p->store, kind, s, &e))
    ks_log(KS_LOG_INFO, "llm planner: could not record an event: %s", e.msg);
  free(s);
}

/* The source of a candidate: this session's memory, else the store. */
static char *cand_source(llm_planner *p, int64_t id) {
  char key[32];
  id_key(id, key);
  const char *s = json_string_value(json_object_get(p->sources, key));
  if (s)
    return ks_strdup(s);
  ks_store_candidate c;
  memset(&c, 0, sizeof c);
  ks_err e;
  if (!p->store || id <= 0 || ks_store_get_candidate(p->store, id, &c, &e))
    return NULL;
  char *out = ks_strdup(c.source);
  ks_store_candidate_free(&c);
  json_object_set_new(p->sources, key, json_string(out));
  return out;
}

static void remember_result(llm_planner *p, int64_t id, const json_t *rj) {
  char key[32];
  id_key(id, key);
  char *text = ks_llm_result_text(p->task, rj);
  char *tim = ks_llm_timings_text(p->task, rj);
  const char *st = json_string_value(json_object_get(rj, "status"));
  json_object_set_new(p->results, key,
                      json_pack("{s:s, s:s, s:s}", "text", text, "timings", tim,
                                "status", st ? st : "?"));
  free(text);
  free(tim);
}

/* {text, timings, status} of a candidate's latest evaluation; NULL if none. */
static const json_t *cand_result(llm_planner *p, int64_t id) {
  char key[32];
  id_key(id, key);
  json_t *r = json_object_get(p->results, key);
  if (r || !p->store || id <= 0)
    return r;
  ks_store_eval *rows = NULL;
  size_t n = 0;
  ks_err e;
  if (ks_store_list_evaluations(p->store, &rows, &n, &e))
    return NULL;
  int64_t eval_id = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].candidate_id == id)
      eval_id = rows[i].id;
  free(rows);
  char *text = NULL;
  if (!eval_id || ks_store_get_result_json(p->store, eval_id, &text, &e) ||
      !text)
    return NULL;
  json_t *rj = json_loads(text, 0, NULL);
  free(text);
  if (!rj)
    return NULL;
  remember_result(p, id, rj);
  json_decref(rj);
  return json_object_get(p->results, key);
}

static const char *result_field(const json_t *r, const char *k,
                                const char *dflt) {
  const char *s = json_string_value(json_object_get(r, k));
  return s ? s : dflt;
}

static int reviews_of(const ks_wm_node *n) {
  int k = 0;
  for (const char *s = strstr(n->notes, REVIEW_MARK); s;
       s = strstr(s + 1, REVIEW_MARK))
    k++;
  return k;
}

static bool first_level(const ks_wm_node *n) { return !n->up || !n->up->up; }

static char *fenced(const char *code) {
  char *c = ks_llm_clip(code, CODE_MAX);
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "```c\n%s%s```\n", c,
                c[0] && c[strlen(c) - 1] == '\n' ? "" : "\n");
  free(c);
  return b.data;
}

static char *tree_text(const ks_wm *wm) {
  char *t = ks_wm_render_tree(wm);
  char *c = ks_llm_clip(t, TREE_MAX);
  free(t);
  return c;
}

static void log_budget(llm_planner *p, const ks_err *e) {
  if (!p->budget_spent)
    ks_log(KS_LOG_INFO, "llm: %s; the run ends", e->msg);
  p->budget_spent = true;
}

/* ---------------------------------------------------------------- asking */

typedef struct convo {
  ks_llm_msg m[2 + 2 * KS_LLM_REASKS + 2];
  char *owned[2 * KS_LLM_REASKS + 2];
  int n, n_owned;
} convo;

static void convo_start(convo *c, const char *system, const char *user) {
  memset(c, 0, sizeof *c);
  c->m[0] = (ks_llm_msg){"system", system};
  c->m[1] = (ks_llm_msg){"user", user};
  c->n = 2;
}

static void convo_add(convo *c, const char *role, char *owned_text) {
  c->owned[c->n_owned++] = owned_text;
  c->m[c->n++] = (ks_llm_msg){role, owned_text};
}

static void convo_free(convo *c) {
  for (int i = 0; i < c->n_owned; i++)
    free(c->owned[i]);
  c->n_owned = 0;
}

/* Quotes an unusable answer and why, and asks again in the right format. */
static void convo_reask(convo *c, const char *answer, const char *why,
                        const char *format) {
  convo_add(c, "assistant", ks_llm_clip(answer ? answer : "", ECHO_MAX));
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b,
                "Your answer could not be used: %s\nAnswer again with %s, and "
                "nothing else.",
                why, format);
  convo_add(c, "user", b.data);
}

/* Why a reply's outcome makes it unusable before any parsing; NULL if it may
 * be usable (a truncated answer may still hold a complete block). */
static const char *outcome_problem(const ks_llm_reply *r, size_t max_bytes,
                                   char *buf, size_t n) {
  switch (r->outcome) {
  case KS_LLM_ANSWER:
  case KS_LLM_TRUNCATED: return NULL;
  case KS_LLM_EMPTY: return "the answer was empty";
  case KS_LLM_REFUSED:
    snprintf(buf, n,
             "the answer was a refusal (\"%.200s\"); this is a benign "
             "performance-engineering task on a numerical kernel",
             r->text);
    return buf;
  case KS_LLM_OVERSIZED:
    snprintf(buf, n,
             "the answer was longer than the %zu-byte limit; keep it short",
             max_bytes);
    return buf;
  }
  return NULL;
}

typedef bool (*edit_check)(const ks_wm *after, const void *arg, char *why,
                           size_t n);

/* Asks for an edit script until one applies (or the re-asks run out: then
 * KS_ERR_INPUT with the last reason). Budget and endpoint errors pass up. */
static ks_code ask_edits(llm_planner *p, ks_wm *wm, const char *purpose,
                         const char *prompt, bool inserts_only,
                         bool require_reflection, edit_check check,
                         const void *check_arg, ks_llm_edit_answer *out,
                         ks_err *err) {
  memset(out, 0, sizeof *out);
  convo c;
  convo_start(&c, p->system, prompt);
  const char *format =
      require_reflection
          ? "one JSON object {\"reflection\": \"...\", \"ops\": [...]}"
          : "one JSON object {\"analysis\": {...}, \"ops\": [...]}";
  char why[2048] = "";
  ks_code rc = KS_ERR_INPUT;
  for (int ask = 0; ask <= KS_LLM_REASKS; ask++) {
    ks_llm_reply r;
    ks_code cr = ks_llm_chat(p->llm, purpose, false, c.m, c.n, &r, err);
    if (cr) {
      rc = cr;
      break;
    }
    char buf[512];
    const char *prob = outcome_problem(
        &r, ks_llm_config_of(p->llm)->max_answer_bytes, buf, sizeof buf);
    json_t *j = NULL;
    if (prob) {
      ks_strlcpy(why, prob, sizeof why);
    } else if (ks_llm_extract_json(r.text, &j, why, sizeof why) == KS_OK) {
      ks_err e;
      ks_llm_edit_answer a;
      if (ks_llm_edit_answer_read(j, require_reflection, &a, &e)) {
        ks_strlcpy(why, e.msg, sizeof why);
      } else {
        ks_wm *trial = ks_wm_clone(wm);
        bool ok = ks_llm_apply_edits(trial, a.ops, inserts_only, &e) == KS_OK;
        if (!ok)
          ks_strlcpy(why, e.msg, sizeof why);
        else if (check && !check(trial, check_arg, why, sizeof why))
          ok = false;
        ks_wm_free(trial);
        if (ok && ks_llm_apply_edits(wm, a.ops, inserts_only, &e) == KS_OK) {
          *out = a;
          out->ops = NULL; /* borrowed from j, freed below */
          json_decref(j);
          ks_llm_reply_free(&r);
          rc = KS_OK;
          break;
        }
        ks_llm_edit_answer_free(&a);
      }
      json_decref(j);
    }
    if (r.outcome == KS_LLM_TRUNCATED) {
      size_t l = strlen(why);
      snprintf(why + l, sizeof why - l,
               " (the answer was cut off at the token limit: be shorter)");
    }
    ks_log(KS_LOG_INFO, "llm %s: unusable answer (%s)%s", purpose, why,
           ask < KS_LLM_REASKS ? "; asking again" : "; giving up");
    event(p, "llm_unusable",
          json_pack("{s:s, s:s, s:s, s:i}", "purpose", purpose, "outcome",
                    ks_llm_outcome_name(r.outcome), "why", why, "ask", ask));
    if (ask < KS_LLM_REASKS)
      convo_reask(&c, r.text, why, format);
    ks_llm_reply_free(&r);
  }
  convo_free(&c);
  if (rc == KS_ERR_INPUT)
    ks_err_set(err, KS_ERR_INPUT, "%s", why);
  return rc;
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
  json_decref(p->memo);
  json_decref(p->results);
  json_decref(p->sources);
  free(p);
}

static ks_code create(const ks_planner_ctx *ctx, void **self, ks_err *err) {
  *self = NULL;
  ks_llm_config cfg;
  ks_code rc = ks_llm_config_from_json(ctx->options, &cfg, err);
  if (rc)
    return rc;
  llm_planner *p = ks_xcalloc(1, sizeof *p);
  p->task = ctx->task;
  p->backend = ctx->backend;
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
  for (int i = 0; i < P_COUNT && !rc; i++)
    rc = ks_prompt_load(k_prompt_names[i], &p->prompt[i], err);
  if (!rc) {
    ks_prompt_var v[] = {{"backend", p->backend}};
    rc = ks_prompt_render(p->prompt[P_SYSTEM], "system.txt", v, 1, &p->system,
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
  p->spec_checker = ks_spec_target_get(p->backend, &st, &se) == KS_OK;
  p->task_text = ks_llm_task_text(p->task, true);
  p->task_short = ks_llm_task_short(p->task);
  p->spec_text = ks_llm_spec_text(p->backend, p->roof, p->spec);
  ks_log(KS_LOG_INFO,
         "llm planner: %s, model %s%s%s%s%s; prompts from %s; primitive "
         "check: %s",
         cfg.base_url, cfg.model, cfg.coder_model[0] ? ", coder " : "",
         cfg.coder_model, cfg.cache_dir[0] ? ", cache " : "", cfg.cache_dir,
         ks_prompts_dir(),
         p->spec_checker ? "the spec validator"
                         : "llm/precheck.c (no spec for this target yet)");
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
  rc = ask_edits(p, wm, "init", prompt, true, false, check_frontier, NULL, &a,
                 err);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET) {
    log_budget(p, err);
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
  char *tree = tree_text(wm);
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
  rc = ask_edits(p, wm, "propose", prompt, false, false, check_frontier, NULL,
                 &a, err);
  free(prompt);
  if (!rc)
    ks_llm_edit_answer_free(&a);
  return rc;
}

/* The template sharing most concepts with the node (first on ties). */
static const ks_template *best_template(const llm_planner *p,
                                        const ks_wm_node *n) {
  const ks_template *best = NULL;
  int best_score = -1;
  for (int i = 0; p->tpls && i < p->tpls->n; i++) {
    const ks_template *t = &p->tpls->t[i];
    int s = 0;
    for (int a = 0; a < n->n_concepts; a++)
      for (int b = 0; b < t->n_concepts; b++)
        s += !strcmp(n->concepts[a], t->concepts[b]);
    if (strstr(n->choice, t->family) || strstr(n->action.description, t->name))
      s += 3;
    if (s > best_score) {
      best_score = s;
      best = t;
    }
  }
  return best;
}

static char *action_text(const ks_wm *wm, const ks_wm_node *n, int limit) {
  ks_buf b;
  ks_buf_init(&b);
  char steps[32][KS_WM_PLAN_STEP];
  int ns = ks_wm_plan(wm, n->id, steps, 32);
  ks_buf_printf(&b, "node %s; plan:", n->id);
  for (int i = 0; i < ns && i < 32; i++)
    ks_buf_printf(&b, "\n  %d. %s", i + 1, steps[i]);
  ks_buf_printf(&b, "\nthis step: %s: %s\n", n->decision, n->choice);
  if (*n->action.title && strcmp(n->action.title, n->choice))
    ks_buf_printf(&b, "title: %s\n", n->action.title);
  if (*n->action.description)
    ks_buf_printf(&b, "what to do: %s\n", n->action.description);
  if (*n->action.rationale)
    ks_buf_printf(&b, "why: %s\n", n->action.rationale);
  ks_buf_printf(&b, "difficulty %d of 5; attempt %d of %d\n",
                n->action.difficulty, n->attempts + 1, limit);
  if (*n->notes)
    ks_buf_printf(&b, "notes: %s\n", n->notes);
  return b.data;
}

static char *parent_code_text(llm_planner *p, const ks_wm_node *n) {
  ks_buf b;
  ks_buf_init(&b);
  const ks_wm_node *up = n->up;
  if (up && up->up && up->solution.candidate_id > 0) {
    char *src = cand_source(p, up->solution.candidate_id);
    const json_t *r = cand_result(p, up->solution.candidate_id);
    if (src) {
      char *f = fenced(src);
      ks_buf_printf(&b,
                    "the best code of the parent step %s (candidate %lld):\n%s"
                    "its timings:\n%s",
                    up->id, (long long)up->solution.candidate_id, f,
                    result_field(r, "timings", "(not known)\n"));
      free(f);
      free(src);
      return b.data;
    }
  }
  const ks_template *t = best_template(p, n);
  if (t) {
    char *f = fenced(t->cand.source);
    ks_buf_printf(&b,
                  "a known-correct template of this task (%s, family %s); its "
                  "`// ksearch: param` lines declare tunable macros whose "
                  "first listed value is used unless you fix them:\n%s",
                  t->name, t->family, f);
    free(f);
  } else {
    ks_buf_puts(&b, "none: write it from scratch; the reference above is "
                    "the ground truth.\n");
  }
  return b.data;
}

/* Renders the coder prompt for node n: debug, improve or code. */
static ks_code coder_prompt(llm_planner *p, const ks_wm *wm,
                            const ks_wm_node *n, const char **kind, char **out,
                            ks_err *err) {
  char header[160];
  snprintf(header, sizeof header, "// ksearch: backend=%s entry=%s", p->backend,
           p->task->name);
  char *action = action_text(wm, n, p->max_attempts * (1 + reviews_of(n)));
  const char *feedback = memo_str(p, n->id, "feedback");
  const char *note = memo_str(p, n->id, "note");
  if (note) { /* e.g. the last answer repeated an earlier candidate */
    ks_buf b;
    ks_buf_init(&b);
    ks_buf_printf(&b, "%s%s\n", action, note);
    free(action);
    action = b.data;
  }
  ks_code rc;
  if (feedback) {
    *kind = "debug";
    const char *code = memo_str(p, n->id, "code");
    char *src =
        code ? ks_strdup(code)
             : (n->n_evidence ? cand_source(p, n->evidence[n->n_evidence - 1])
                              : NULL);
    char *f = fenced(src ? src : "(not available)");
    const char *comp = memo_str(p, n->id, "compiler");
    ks_buf fb;
    ks_buf_init(&fb);
    ks_buf_puts(&fb, feedback);
    ks_prompt_var v[] = {{"task", p->task_text},
                         {"spec", p->spec_text},
                         {"action", action},
                         {"status", memo_str(p, n->id, "status")
                                        ? memo_str(p, n->id, "status")
                                        : "failed"},
                         {"failure", fb.data},
                         {"compiler_errors", comp ? comp : "(it built)"},
                         {"code", f},
                         {"header", header},
                         {"backend", p->backend}};
    rc = ks_prompt_render(p->prompt[P_DEBUG], "debug.txt", v, 9, out, err);
    ks_buf_free(&fb);
    free(f);
    free(src);
  } else if (n->solution.candidate_id > 0) {
    *kind = "improve";
    char *src = cand_source(p, n->solution.candidate_id);
    char *f = fenced(src ? src : "(not available)");
    const json_t *mine = cand_result(p, n->solution.candidate_id);
    const json_t *par = n->up && n->up->solution.candidate_id > 0
                            ? cand_result(p, n->up->solution.candidate_id)
                            : NULL;
    char *wmt = ks_wm_render_compact(wm, n->id, 3);
    ks_buf tim;
    ks_buf_init(&tim);
    ks_buf_puts(&tim, result_field(mine, "timings", "(not known)\n"));
    ks_prompt_var v[] = {
        {"task", p->task_text},
        {"spec", p->spec_text},
        {"world_model", wmt},
        {"action", action},
        {"timings", tim.data},
        {"parent_timings", result_field(par, "timings", "(not known)\n")},
        {"code", f},
        {"header", header},
        {"backend", p->backend}};
    rc = ks_prompt_render(p->prompt[P_IMPROVE], "improve.txt", v, 9, out, err);
    ks_buf_free(&tim);
    free(wmt);
    free(f);
    free(src);
  } else {
    *kind = "code";
    char *wmt = ks_wm_render_compact(wm, n->id, 3);
    char *concepts = ks_llm_concepts_text(n->concepts, n->n_concepts);
    char *parent = parent_code_text(p, n);
    ks_prompt_var v[] = {{"task", p->task_text}, {"spec", p->spec_text},
                         {"world_model", wmt},   {"action", action},
                         {"concepts", concepts}, {"parent_code", parent},
                         {"header", header},     {"backend", p->backend}};
    rc = ks_prompt_render(p->prompt[P_CODE], "code.txt", v, 8, out, err);
    free(wmt);
    free(concepts);
    free(parent);
  }
  free(action);
  return rc;
}

/* The primitive check of a source: how many violations (up to max in v). */
static int check_primitives(const llm_planner *p, const char *src,
                            ks_llm_violation *v, int max) {
  int n = 0;
  ks_err e;
  if (!p->spec_checker) {
    ks_llm_precheck(p->backend, src, v, max, &n, &e);
    return n;
  }
  ks_spec_violation sv[16];
  if (ks_spec_validate(p->backend, src, sv, 16, &n, &e)) {
    /* the source cannot be read as code (an unterminated comment...) */
    v[0].line = 0;
    ks_strlcpy(v[0].ident, "(source)", sizeof v[0].ident);
    ks_strlcpy(v[0].suggestion, e.msg, sizeof v[0].suggestion);
    return 1;
  }
  for (int i = 0; i < n && i < max && i < 16; i++) {
    v[i].line = sv[i].line;
    ks_strlcpy(v[i].ident, sv[i].ident, sizeof v[i].ident);
    ks_strlcpy(v[i].suggestion, sv[i].suggestion, sizeof v[i].suggestion);
  }
  return n;
}

static char *violations_text(const ks_llm_violation *v, int n, int total) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b,
                "the code was rejected before compiling: it uses %d "
                "forbidden primitive%s:\n",
                total, total == 1 ? "" : "s");
  for (int i = 0; i < n; i++)
    ks_buf_printf(&b, "  line %d: %s: %s\n", v[i].line, v[i].ident,
                  v[i].suggestion);
  if (total > n)
    ks_buf_printf(&b, "  ... and %d more\n", total - n);
  return b.data;
}

/* Asks the coder for node n until a candidate passes the checks: KS_OK with
 * out filled; KS_ERR_CANDIDATE when the asks ran out (why in err); budget
 * and endpoint errors pass up. */
static ks_code write_code(llm_planner *p, const ks_wm *wm, const ks_wm_node *n,
                          ks_proposal *out, ks_err *err) {
  const char *kind = "code";
  char *prompt = NULL;
  ks_code rc = coder_prompt(p, wm, n, &kind, &prompt, err);
  if (rc)
    return rc;
  convo c;
  convo_start(&c, p->system, prompt);
  char why[2048] = "";
  char format[64];
  snprintf(format, sizeof format, "the whole file in one ```%s block",
           p->backend);
  rc = KS_ERR_CANDIDATE;
  for (int ask = 0; ask <= KS_LLM_REASKS; ask++) {
    ks_llm_reply r;
    ks_code cr = ks_llm_chat(p->llm, kind, true, c.m, c.n, &r, err);
    if (cr) {
      rc = cr;
      break;
    }
    char buf[512];
    const char *prob = outcome_problem(
        &r, ks_llm_config_of(p->llm)->max_answer_bytes, buf, sizeof buf);
    char *code = NULL;
    if (prob)
      ks_strlcpy(why, prob, sizeof why);
    else
      code = ks_llm_extract_code(r.text, p->backend, why, sizeof why);
    bool rejected = false;
    if (code) {
      char *src = ks_llm_ensure_header(code, p->backend, p->task->name);
      free(code);
      ks_llm_violation v[16];
      ks_err e;
      int nv = check_primitives(p, src, v, 16);
      ks_candidate cand;
      char path[128];
      snprintf(path, sizeof path, "<llm:%s>", n->id);
      if (nv > 0) {
        char *vt = violations_text(v, nv < 16 ? nv : 16, nv);
        ks_strlcpy(why, vt, sizeof why);
        memo_set(p, n->id, "feedback", vt);
        memo_set(p, n->id, "status", "rejected by the primitive check");
        memo_set(p, n->id, "compiler", "(not compiled: rejected before)");
        memo_set(p, n->id, "code", src);
        json_t *ids = json_array();
        for (int i = 0; i < nv && i < 16; i++)
          json_array_append_new(ids, json_string(v[i].ident));
        event(p, "precheck_rejected",
              json_pack("{s:s, s:o}", "node", n->id, "identifiers", ids));
        ks_log(KS_LOG_INFO,
               "llm %s: code for %s rejected before compiling "
               "(%d forbidden primitive%s, first %s)",
               kind, n->id, nv, nv == 1 ? "" : "s", v[0].ident);
        free(vt);
        rejected = true;
      } else if (ks_candidate_parse(src, path, p->task->name, &cand, &e)) {
        ks_strlcpy(why, e.msg, sizeof why);
      } else {
        ks_candidate_fill_defaults(&cand);
        ks_strlcpy(out->node_id, n->id, sizeof out->node_id);
        out->tpl = NULL;
        out->cand = cand;
        memo_set(p, n->id, "code", src);
        free(src);
        ks_llm_reply_free(&r);
        rc = KS_OK;
        break;
      }
      free(src);
    }
    if (r.outcome == KS_LLM_TRUNCATED && !rejected) {
      size_t l = strlen(why);
      snprintf(why + l, sizeof why - l,
               " (the answer was cut off at the token limit: be shorter)");
    }
    if (!rejected) {
      ks_log(KS_LOG_INFO, "llm %s: unusable answer for %s (%s)%s", kind, n->id,
             why, ask < KS_LLM_REASKS ? "; asking again" : "");
      event(p, "llm_unusable",
            json_pack("{s:s, s:s, s:s, s:s, s:i}", "purpose", kind, "node",
                      n->id, "outcome", ks_llm_outcome_name(r.outcome), "why",
                      why, "ask", ask));
    }
    if (ask < KS_LLM_REASKS) {
      if (rejected) {
        /* a rejection goes into a fresh debug prompt */
        convo_free(&c);
        free(prompt);
        prompt = NULL;
        ks_code pr = coder_prompt(p, wm, n, &kind, &prompt, err);
        if (pr) {
          ks_llm_reply_free(&r);
          rc = pr;
          break;
        }
        convo_start(&c, p->system, prompt);
      } else {
        convo_reask(&c, r.text, why, format);
      }
    }
    ks_llm_reply_free(&r);
  }
  convo_free(&c);
  free(prompt);
  if (rc == KS_ERR_CANDIDATE)
    ks_err_set(err, KS_ERR_CANDIDATE, "%s", why);
  return rc;
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
        log_budget(p, err);
      if (rc)
        return rc;
      p->dry_proposals = 0;
      continue;
    }
    char id[KS_WM_ID_MAX];
    ks_strlcpy(id, n->id, sizeof id);
    ks_code rc = write_code(p, wm, n, out, err);
    if (rc == KS_LLM_ERR_TOKEN_BUDGET)
      log_budget(p, err);
    if (rc != KS_ERR_CANDIDATE)
      return rc;
    /* no usable code for this node this time: count it against the node */
    json_t *m = memo_of(p, id);
    int wasted = (int)json_integer_value(json_object_get(m, "wasted")) + 1;
    json_object_set_new(m, "wasted", json_integer(wasted));
    if (wasted >= p->max_attempts) {
      ks_err e2;
      char notes[600];
      const ks_wm_node *x = ks_wm_find(wm, id);
      snprintf(notes, sizeof notes,
               "%s%sksearch: no usable code after %d "
               "tries: %.300s",
               x->notes, *x->notes ? "\n" : "", wasted, err->msg);
      json_t *upd = json_pack("{s:s, s:s}", "status", "failed", "notes", notes);
      if (ks_wm_update(wm, id, upd, &e2))
        ks_log(KS_LOG_INFO, "llm: could not mark %s failed: %s", id, e2.msg);
      json_decref(upd);
    }
  }
  ks_log(KS_LOG_INFO, "llm propose: no usable code in %d tries", cap);
  return KS_OK;
}

/* ---------------------------------------------------------------- observe */

static char *evidence_text(llm_planner *p, const ks_wm_node *n, int last) {
  ks_buf b;
  ks_buf_init(&b);
  int from = n->n_evidence > last ? n->n_evidence - last : 0;
  for (int i = from; i < n->n_evidence; i++) {
    const json_t *r = cand_result(p, n->evidence[i]);
    ks_buf_printf(&b, "attempt %d, candidate %lld:\n%s", i + 1,
                  (long long)n->evidence[i],
                  result_field(r, "text", "(no result recorded)\n"));
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
  if (reviews_of(n) >= 1 || p->budget_spent)
    return ks_wm_set_status(wm, id, KS_WM_FAILED, err);
  char *ev = evidence_text(p, n, 4);
  char *tree = tree_text(wm);
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
  rc = ask_edits(p, wm, "too_hard", prompt, false, true, check_too_hard, &arg,
                 &a, &e);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET)
    log_budget(p, &e);
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
  char *tree = tree_text(wm);
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
  rc = ask_edits(p, wm, "refine", prompt, false, true, NULL, NULL, &a, &e);
  free(prompt);
  if (rc == KS_LLM_ERR_TOKEN_BUDGET) {
    log_budget(p, &e);
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
  const char *code = memo_str(p, id, "code");
  if (code && res) {
    char key[32];
    id_key(cand_id, key);
    json_object_set_new(p->sources, key, json_string(code));
  }
  if (res) {
    p->since_eval = 0;
    p->grown_since_eval = 0;
    json_t *rj = ks_eval_result_to_json(p->task, res);
    remember_result(p, cand_id, rj);
    json_decref(rj);
    memo_set(p, id, "note", NULL);
    if (res->status != KS_EVAL_OK) {
      char key[32];
      id_key(cand_id, key);
      /* a compile error is told once, under "Compiler output" */
      memo_set(
          p, id, "feedback",
          res->status == KS_EVAL_COMPILE_ERROR
              ? "status: compile_error (the compiler output is below)"
              : result_field(json_object_get(p->results, key), "text", "?"));
      memo_set(p, id, "status", ks_eval_status_name(res->status));
      char *comp =
          res->status == KS_EVAL_COMPILE_ERROR
              ? ks_llm_compiler_text(res->build_log.data ? res->build_log.data
                                                         : res->error,
                                     6000)
              : NULL;
      memo_set(p, id, "compiler", comp ? comp : "(it built)");
      free(comp);
    } else {
      memo_set(p, id, "feedback", NULL);
      memo_set(p, id, "compiler", NULL);
    }
  } else if (p->proposed) {
    /* the model repeated a stored candidate: nothing was evaluated */
    char note[200];
    snprintf(note, sizeof note,
             "note: the last answer repeated candidate %lld exactly (score "
             "%#.3fx); write something different",
             (long long)cand_id, score);
    memo_set(p, id, "note", note);
    if (score <= 0 && !memo_str(p, id, "feedback")) {
      const json_t *r = cand_result(p, cand_id);
      memo_set(p, id, "feedback", result_field(r, "text", note));
      memo_set(p, id, "status", result_field(r, "status", "failed"));
    }
  }
  n = ks_wm_find(wm, id);
  bool family = first_level(n);
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
             n->attempts >= p->max_attempts * (1 + reviews_of(n))) {
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
             p->max_attempts * (1 + reviews_of(n)));
  } else {
    snprintf(outcome, sizeof outcome, "still open: attempt %d of %d failed",
             n->attempts, p->max_attempts * (1 + reviews_of(n)));
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
    .observe = observe,
    .destroy = planner_free,
};
