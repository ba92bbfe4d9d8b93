/* planner_llm_coder.c — the coder role of the LLM planner (DESIGN.md: LLM
 * planner and coder): the code, debug and improve prompts for the node
 * ks_wm_select picked, the answer turned into a candidate of the run's
 * backend (llm/target.h: fence language, header, launch lines, the target's
 * primitive rules, all checked before any compiler), and the re-asks: a
 * rejection goes into a fresh debug prompt, an unreadable answer is quoted
 * back. */
#include "eval/eval.h"
#include "llm/prompts.h"
#include "search/planner_llm_internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

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
    char *src = ks_llmp_cand_source(p, up->solution.candidate_id);
    const json_t *r = ks_llmp_cand_result(p, up->solution.candidate_id);
    if (src) {
      char *f = ks_llmp_fenced(src, p->be->fence);
      ks_buf_printf(&b,
                    "the best code of the parent step %s (candidate %lld):\n%s"
                    "its timings:\n%s",
                    up->id, (long long)up->solution.candidate_id, f,
                    ks_llmp_result_field(r, "timings", "(not known)\n"));
      free(f);
      free(src);
      return b.data;
    }
  }
  const ks_template *t = best_template(p, n);
  if (t) {
    char *f = ks_llmp_fenced(t->cand.source, p->be->fence);
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
  char header[400];
  int hl = snprintf(header, sizeof header, "// ksearch: backend=%s entry=%s",
                    p->backend, p->task->name);
  /* GPU files are not usable without their launch lines: say so here too */
  if (p->be->launch == KS_LLM_LAUNCH_GRID)
    snprintf(header + hl, sizeof header - hl,
             "\n// ksearch: launch [kernel=NAME] grid=(...) block=(...) "
             "(one line per launch, in order)");
  else if (p->be->launch == KS_LLM_LAUNCH_MLX)
    snprintf(header + hl, sizeof header - hl,
             "\n// ksearch: launch grid=(THREADS) threadgroup=(TG)\n"
             "(helpers)\n// ksearch: body\n(the kernel's statements)");
  else if (p->be->launch == KS_LLM_LAUNCH_LOCAL)
    snprintf(header + hl, sizeof header - hl,
             "\n// ksearch: launch [kernel=NAME] global=(...) local=(...) "
             "(one line per launch, in order)");
  char *action =
      action_text(wm, n, p->max_attempts * (1 + ks_llmp_reviews_of(n)));
  const char *feedback = ks_llmp_memo_str(p, n->id, "feedback");
  const char *note = ks_llmp_memo_str(p, n->id, "note");
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
    const char *code = ks_llmp_memo_str(p, n->id, "code");
    char *src =
        code ? ks_strdup(code)
             : (n->n_evidence
                    ? ks_llmp_cand_source(p, n->evidence[n->n_evidence - 1])
                    : NULL);
    char *f = ks_llmp_fenced(src ? src : "(not available)", p->be->fence);
    const char *comp = ks_llmp_memo_str(p, n->id, "compiler");
    ks_buf fb;
    ks_buf_init(&fb);
    ks_buf_puts(&fb, feedback);
    ks_prompt_var v[] = {{"task", p->task_text},
                         {"spec", p->spec_text},
                         {"action", action},
                         {"status", ks_llmp_memo_str(p, n->id, "status")
                                        ? ks_llmp_memo_str(p, n->id, "status")
                                        : "failed"},
                         {"failure", fb.data},
                         {"compiler_errors", comp ? comp : "(it built)"},
                         {"code", f},
                         {"header", header},
                         {"backend", p->backend},
                         {"fence", p->be->fence}};
    rc = ks_prompt_render(p->prompt[P_DEBUG], "debug.txt", v, 10, out, err);
    ks_buf_free(&fb);
    free(f);
    free(src);
  } else if (n->solution.candidate_id > 0) {
    *kind = "improve";
    char *src = ks_llmp_cand_source(p, n->solution.candidate_id);
    char *f = ks_llmp_fenced(src ? src : "(not available)", p->be->fence);
    const json_t *mine = ks_llmp_cand_result(p, n->solution.candidate_id);
    const json_t *par =
        n->up && n->up->solution.candidate_id > 0
            ? ks_llmp_cand_result(p, n->up->solution.candidate_id)
            : NULL;
    char *wmt = ks_wm_render_compact(wm, n->id, 3);
    ks_buf tim;
    ks_buf_init(&tim);
    ks_buf_puts(&tim, ks_llmp_result_field(mine, "timings", "(not known)\n"));
    ks_prompt_var v[] = {
        {"task", p->task_text},
        {"spec", p->spec_text},
        {"world_model", wmt},
        {"action", action},
        {"timings", tim.data},
        {"parent_timings",
         ks_llmp_result_field(par, "timings", "(not known)\n")},
        {"code", f},
        {"header", header},
        {"backend", p->backend},
        {"fence", p->be->fence}};
    rc = ks_prompt_render(p->prompt[P_IMPROVE], "improve.txt", v, 10, out, err);
    ks_buf_free(&tim);
    free(wmt);
    free(f);
    free(src);
  } else {
    *kind = "code";
    char *wmt = ks_wm_render_compact(wm, n->id, 3);
    char *concepts =
        ks_llm_concept_forms_text(n->concepts, n->n_concepts, p->backend);
    char *parent = parent_code_text(p, n);
    ks_prompt_var v[] = {{"task", p->task_text}, {"spec", p->spec_text},
                         {"world_model", wmt},   {"action", action},
                         {"concepts", concepts}, {"parent_code", parent},
                         {"header", header},     {"backend", p->backend},
                         {"fence", p->be->fence}};
    rc = ks_prompt_render(p->prompt[P_CODE], "code.txt", v, 9, out, err);
    free(wmt);
    free(concepts);
    free(parent);
  }
  free(action);
  return rc;
}

static char *violations_text(const ks_llm_violation *v, int n, int total) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b,
                "the code was rejected before compiling: %d problem%s "
                "(forbidden primitive, or a header or launch line this "
                "backend cannot use):\n",
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
                          ks_proposal *out, ks_err *err);

ks_code ks_llmp_write_code(llm_planner *p, const ks_wm *wm, const ks_wm_node *n,
                           ks_proposal *out, ks_err *err) {
  pthread_mutex_lock(&p->mu);
  ks_code rc = write_code(p, wm, n, out, err);
  pthread_mutex_unlock(&p->mu);
  return rc;
}

/* The coder, with p->mu held; it lets go only while the model answers. */
static ks_code write_code(llm_planner *p, const ks_wm *wm, const ks_wm_node *n,
                          ks_proposal *out, ks_err *err) {
  const char *kind = "code";
  char *prompt = NULL;
  ks_code rc = coder_prompt(p, wm, n, &kind, &prompt, err);
  if (rc)
    return rc;
  ks_llmp_convo c;
  ks_llmp_convo_start(&c, p->system, prompt);
  char why[2048] = "";
  char format[64];
  snprintf(format, sizeof format, "the whole file in one ```%s block",
           p->be->fence);
  rc = KS_ERR_CANDIDATE;
  for (int ask = 0; ask <= KS_LLM_REASKS; ask++) {
    ks_llm_reply r;
    pthread_mutex_unlock(&p->mu);
    ks_code cr = ks_llm_chat(p->llm, kind, true, c.m, c.n, &r, err);
    pthread_mutex_lock(&p->mu);
    if (cr) {
      rc = cr;
      break;
    }
    char buf[512];
    const char *prob = ks_llmp_outcome_problem(
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
      ks_candidate cand;
      char path[128];
      snprintf(path, sizeof path, "<llm:%s>", n->id);
      int nv = ks_llm_check_answer(p->be, p->task, src, path, &cand, v, 16);
      if (nv > 0) {
        char *vt = violations_text(v, nv < 16 ? nv : 16, nv);
        ks_strlcpy(why, vt, sizeof why);
        ks_llmp_memo_set(p, n->id, "feedback", vt);
        ks_llmp_memo_set(p, n->id, "status", "rejected before compiling");
        ks_llmp_memo_set(p, n->id, "compiler",
                         "(not compiled: rejected before)");
        ks_llmp_memo_set(p, n->id, "code", src);
        json_t *ids = json_array();
        for (int i = 0; i < nv && i < 16; i++)
          json_array_append_new(ids, json_string(v[i].ident));
        ks_llmp_event(
            p, "precheck_rejected",
            json_pack("{s:s, s:o}", "node", n->id, "identifiers", ids));
        ks_log(KS_LOG_INFO,
               "llm %s: code for %s rejected before compiling (%d "
               "problem%s, first %s: %s)",
               kind, n->id, nv, nv == 1 ? "" : "s", v[0].ident,
               v[0].suggestion);
        free(vt);
        rejected = true;
      } else {
        ks_candidate_fill_defaults(&cand);
        ks_strlcpy(out->node_id, n->id, sizeof out->node_id);
        out->tpl = NULL;
        out->cand = cand;
        ks_llmp_memo_set(p, n->id, "code", src);
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
      ks_llmp_event(p, "llm_unusable",
                    json_pack("{s:s, s:s, s:s, s:s, s:i}", "purpose", kind,
                              "node", n->id, "outcome",
                              ks_llm_outcome_name(r.outcome), "why", why, "ask",
                              ask));
    }
    if (ask < KS_LLM_REASKS) {
      if (rejected) {
        /* a rejection goes into a fresh debug prompt */
        ks_llmp_convo_free(&c);
        free(prompt);
        prompt = NULL;
        ks_code pr = coder_prompt(p, wm, n, &kind, &prompt, err);
        if (pr) {
          ks_llm_reply_free(&r);
          rc = pr;
          break;
        }
        ks_llmp_convo_start(&c, p->system, prompt);
      } else {
        ks_llmp_convo_reask(&c, r.text, why, format);
      }
    }
    ks_llm_reply_free(&r);
  }
  ks_llmp_convo_free(&c);
  free(prompt);
  if (rc == KS_ERR_CANDIDATE)
    ks_err_set(err, KS_ERR_CANDIDATE, "%s", why);
  return rc;
}
