/* planner_llm_ask.c — one conversation with the model (DESIGN.md: LLM
 * planner and coder, edit rules): a system and a user message, the
 * answer's outcome checked first (empty, refused, oversized), re-asks that
 * quote the unusable answer and why, and ks_llmp_ask_edits, which asks for a
 * world-model edit script until one applies all or nothing. */
#include "search/planner_llm_internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void ks_llmp_convo_start(ks_llmp_convo *c, const char *system,
                         const char *user) {
  memset(c, 0, sizeof *c);
  c->m[0] = (ks_llm_msg){"system", system};
  c->m[1] = (ks_llm_msg){"user", user};
  c->n = 2;
}

void ks_llmp_convo_add(ks_llmp_convo *c, const char *role, char *owned_text) {
  c->owned[c->n_owned++] = owned_text;
  c->m[c->n++] = (ks_llm_msg){role, owned_text};
}

void ks_llmp_convo_free(ks_llmp_convo *c) {
  for (int i = 0; i < c->n_owned; i++)
    free(c->owned[i]);
  c->n_owned = 0;
}

/* Quotes an unusable answer and why, and asks again in the right format. */
void ks_llmp_convo_reask(ks_llmp_convo *c, const char *answer, const char *why,
                         const char *format) {
  ks_llmp_convo_add(c, "assistant",
                    ks_llm_clip(answer ? answer : "", ECHO_MAX));
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b,
                "Your answer could not be used: %s\nAnswer again with %s, and "
                "nothing else.",
                why, format);
  ks_llmp_convo_add(c, "user", b.data);
}

/* Why a reply's outcome makes it unusable before any parsing; NULL if it may
 * be usable (a truncated answer may still hold a complete block). */
const char *ks_llmp_outcome_problem(const ks_llm_reply *r, size_t max_bytes,
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

/* Asks for an edit script until one applies (or the re-asks run out: then
 * KS_ERR_INPUT with the last reason). Budget and endpoint errors pass up. */
ks_code ks_llmp_ask_edits(llm_planner *p, ks_wm *wm, const char *purpose,
                          const char *prompt, bool inserts_only,
                          bool require_reflection, ks_llmp_edit_check check,
                          const void *check_arg, ks_llm_edit_answer *out,
                          ks_err *err) {
  memset(out, 0, sizeof *out);
  ks_llmp_convo c;
  ks_llmp_convo_start(&c, p->system, prompt);
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
    const char *prob = ks_llmp_outcome_problem(
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
    ks_llmp_event(p, "llm_unusable",
                  json_pack("{s:s, s:s, s:s, s:i}", "purpose", purpose,
                            "outcome", ks_llm_outcome_name(r.outcome), "why",
                            why, "ask", ask));
    if (ask < KS_LLM_REASKS)
      ks_llmp_convo_reask(&c, r.text, why, format);
    ks_llm_reply_free(&r);
  }
  ks_llmp_convo_free(&c);
  if (rc == KS_ERR_INPUT)
    ks_err_set(err, KS_ERR_INPUT, "%s", why);
  return rc;
}
