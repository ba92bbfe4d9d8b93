/* planner_llm_internal.h — what the files of the LLM planner share
 * (DESIGN.md: LLM planner and coder): the planner's state, its per-node memo
 * and result memory (planner_llm_state.c), conversations and edit-script
 * asks (planner_llm_ask.c), and the coder (planner_llm_coder.c). The roles
 * (init, propose, observe, refine, too-hard) live in planner_llm.c. Not a
 * public interface: only those four files include it. */
#ifndef KS_PLANNER_LLM_INTERNAL_H
#define KS_PLANNER_LLM_INTERNAL_H

#include "llm/answer.h"
#include "llm/context.h"
#include "llm/edits.h"
#include "llm/llm.h"
#include "llm/target.h"
#include "search/planner.h"
#include "spec/seed.h"
#include "store/store.h"

#include <pthread.h>

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

typedef struct llm_planner {
  const ks_task *task;
  const char *backend;
  const ks_llm_backend *be; /* llm/target.h: fence, format, checks */
  ks_spec_seed *cuda_seed;  /* --seed-cuda / --seed-from, or NULL */
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
  bool proposed;        /* this session proposed: a result without res is a
                           repeat, not a replay on resume */
  int since_eval;       /* proposals since the last evaluated one */
  int grown_since_eval; /* propose prompts since the last evaluation */
  /* held by the coder (ks_llmp_write_code) except while it waits on the
   * model, so that several coders (propose_batch) share the planner's
   * memory, the store and the tree one at a time while their calls run at
   * once */
  pthread_mutex_t mu;
} llm_planner;

extern const char *const ks_llmp_prompt_names[P_COUNT];

typedef struct ks_llmp_convo {
  ks_llm_msg m[2 + 2 * KS_LLM_REASKS + 2];
  char *owned[2 * KS_LLM_REASKS + 2];
  int n, n_owned;
} ks_llmp_convo;

typedef bool (*ks_llmp_edit_check)(const ks_wm *after, const void *arg,
                                   char *why, size_t n);

/* planner_llm_state.c */
void ks_llmp_id_key(int64_t id, char key[32]);
json_t *ks_llmp_memo_of(llm_planner *p, const char *node);
const char *ks_llmp_memo_str(llm_planner *p, const char *node, const char *key);
void ks_llmp_memo_set(llm_planner *p, const char *node, const char *key,
                      const char *v);
void ks_llmp_event(llm_planner *p, const char *kind, json_t *j);
char *ks_llmp_cand_source(llm_planner *p, int64_t id);
void ks_llmp_remember_result(llm_planner *p, int64_t id, const json_t *rj);
const json_t *ks_llmp_cand_result(llm_planner *p, int64_t id);
const char *ks_llmp_result_field(const json_t *r, const char *k,
                                 const char *dflt);
int ks_llmp_reviews_of(const ks_wm_node *n);
bool ks_llmp_first_level(const ks_wm_node *n);
char *ks_llmp_fenced(const char *code, const char *lang);
char *ks_llmp_tree_text(const ks_wm *wm);
void ks_llmp_log_budget(llm_planner *p, const ks_err *e);

/* planner_llm_ask.c */
void ks_llmp_convo_start(ks_llmp_convo *c, const char *system,
                         const char *user);
void ks_llmp_convo_add(ks_llmp_convo *c, const char *role, char *owned_text);
void ks_llmp_convo_free(ks_llmp_convo *c);
void ks_llmp_convo_reask(ks_llmp_convo *c, const char *answer, const char *why,
                         const char *format);
const char *ks_llmp_outcome_problem(const ks_llm_reply *r, size_t max_bytes,
                                    char *buf, size_t n);
ks_code ks_llmp_ask_edits(llm_planner *p, ks_wm *wm, const char *purpose,
                          const char *prompt, bool inserts_only,
                          bool require_reflection, ks_llmp_edit_check check,
                          const void *check_arg, ks_llm_edit_answer *out,
                          ks_err *err);

/* planner_llm_coder.c */
ks_code ks_llmp_write_code(llm_planner *p, const ks_wm *wm, const ks_wm_node *n,
                           ks_proposal *out, ks_err *err);

#endif
