/* planner_builtin.c — the built-in and random planners; see planner.h. */
#include "eval/eval.h"
#include "search/planner.h"
#include "spec/seed.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEVELS (KS_MAX_DECISIONS + KS_MAX_PARAMS)

/* One decision level of one template's plans. */
typedef struct level {
  char name[64];
  int n_params;
  int param[KS_MAX_DECISION_PARAMS]; /* index into the template's decls */
  const char *concepts[4];
  int n_concepts;
  double priority; /* initial, for the analysis's regime */
} level;

typedef struct tpl_plan {
  int n_levels;
  level lv[MAX_LEVELS];
  int first[KS_MAX_PARAMS]; /* value index a family's first attempt uses */
} tpl_plan;

typedef struct ks_planner {
  bool random;
  const ks_template_set *tpls;
  const ks_class_spec *spec;
  const ks_analysis *an;
  uint64_t seed;
  int max_attempts;
  tpl_plan plans[KS_MAX_TEMPLATES];
  json_t *params_of;  /* candidate id (string) -> params object */
  ks_spec_seed *cuda; /* --seed-cuda: concepts that raise plans, or NULL */
  /* the noise measured so far: each evaluation's median relative IQR of
   * its repeat timings (DESIGN.md: Built-in planner, noise) */
  double spread[32];
  int n_spread;
  /* near ties that decide the next step, newest last (pending_tie) */
  struct tie {
    char node[KS_WM_ID_MAX];
    int64_t cand, other;
  } ties[8];
  int n_ties;
} ks_planner;

/* A settled tie moves the plan only past this paired margin: a kernel
 * beside itself, both ways round, reads within about 1% here. */
#define SETTLE_MARGIN 0.015

/* The median of v[0..n) (n >= 1; reorders v). */
static double median_of(double *v, int n) {
  for (int i = 1; i < n; i++) /* insertion sort: n <= KS_MAX_WORKLOADS */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return v[n / 2];
}

/* How far apart two scores must be before the planner acts on the
 * difference: the median spread of this run's repeat timings, 2% to 20%
 * (3% before anything is measured). */
static double noise_tol(const ks_planner *p) {
  if (p->n_spread == 0)
    return 0.03;
  int n = p->n_spread < 32 ? p->n_spread : 32;
  double v[32];
  memcpy(v, p->spread, sizeof(double) * (size_t)n);
  double m = median_of(v, n);
  return m < 0.02 ? 0.02 : m > 0.2 ? 0.2 : m;
}

static void note_spread(ks_planner *p, const ks_eval_result *res) {
  if (!res)
    return;
  double v[KS_MAX_WORKLOADS];
  int n = 0;
  for (int i = 0; i < res->n_workloads && n < KS_MAX_WORKLOADS; i++)
    if (res->wl[i].reps >= 3 && res->wl[i].time_ns_median > 0)
      v[n++] = res->wl[i].time_ns_iqr / res->wl[i].time_ns_median;
  if (n == 0)
    return;
  p->spread[p->n_spread++ % 32] = median_of(v, n);
}

static void build_plan(ks_planner *p, int ti) {
  const ks_template *t = &p->tpls->t[ti];
  tpl_plan *pl = &p->plans[ti];
  bool used[KS_MAX_PARAMS] = {0};
  for (int d = 1; d < p->spec->n_decisions; d++) {
    const ks_decision *dec = &p->spec->d[d];
    level lv;
    memset(&lv, 0, sizeof lv);
    for (int k = 0; k < dec->n_params; k++)
      for (int j = 0; j < t->cand.n_decls; j++)
        if (!used[j] && !strcmp(t->cand.decls[j].name, dec->params[k])) {
          lv.param[lv.n_params++] = j;
          used[j] = true;
          /* the class's prior: the spec's start value, where the template
           * offers it */
          int v = ks_param_value_index(&t->cand.decls[j], dec->start[k]);
          if (v >= 0)
            pl->first[j] = v;
        }
    if (!lv.n_params)
      continue;
    ks_strlcpy(lv.name, dec->name, sizeof lv.name);
    for (int c = 0; c < dec->n_concepts; c++)
      lv.concepts[lv.n_concepts++] = dec->concepts[c];
    lv.priority = dec->priority[p->an->main_regime];
    pl->lv[pl->n_levels++] = lv;
    /* the analysis's first guess: a vector decision starts at the
     * register width of the machine when the template offers it */
    bool simd = false;
    for (int c = 0; c < dec->n_concepts; c++)
      simd |= !strcmp(dec->concepts[c], "simd_vectorization");
    char nv[16];
    snprintf(nv, sizeof nv, "%d", p->an->native_vec);
    for (int k = 0; simd && p->an->native_vec && k < lv.n_params; k++) {
      int v = ks_param_value_index(&t->cand.decls[lv.param[k]], nv);
      if (v >= 0)
        pl->first[lv.param[k]] = v;
    }
  }
  /* parameters no class decision names: one level each, low priority */
  for (int j = 0; j < t->cand.n_decls && pl->n_levels < MAX_LEVELS; j++) {
    if (used[j])
      continue;
    level *lv = &pl->lv[pl->n_levels++];
    memset(lv, 0, sizeof *lv);
    snprintf(lv->name, sizeof lv->name, "parameter %.50s",
             t->cand.decls[j].name);
    lv->param[lv->n_params++] = j;
    lv->priority = 0.4;
  }
}

static ks_planner *planner_new(const ks_planner_ctx *ctx, bool random) {
  ks_planner *p = ks_xcalloc(1, sizeof *p);
  p->random = random;
  p->tpls = ctx->tpls;
  p->spec = ctx->spec;
  p->an = ctx->an;
  p->seed = ctx->seed;
  p->max_attempts = ctx->max_attempts > 0 ? ctx->max_attempts : 3;
  p->params_of = json_object();
  for (int i = 0; i < p->tpls->n; i++)
    build_plan(p, i);
  return p;
}

static void planner_free(void *self);

static ks_code create_builtin(const ks_planner_ctx *ctx, void **self,
                              ks_err *err) {
  ks_planner *p = planner_new(ctx, false);
  const char *cuda =
      json_string_value(json_object_get(ctx->options, "seed_cuda"));
  ks_code rc = cuda ? ks_spec_seed_load(cuda, ctx->backend ? ctx->backend : "c",
                                        &p->cuda, err)
                    : KS_OK;
  if (rc) {
    planner_free(p);
    p = NULL;
  }
  *self = p;
  return rc;
}

static ks_code create_random(const ks_planner_ctx *ctx, void **self,
                             ks_err *err) {
  (void)err;
  *self = planner_new(ctx, true);
  return KS_OK;
}

static void planner_free(void *self) {
  ks_planner *p = self;
  if (!p)
    return;
  json_decref(p->params_of);
  ks_spec_seed_free(p->cuda);
  free(p);
}

static void remember(void *self, int64_t cand_id, const char *params) {
  ks_planner *p = self;
  char key[32];
  snprintf(key, sizeof key, "%lld", (long long)cand_id);
  json_t *j = json_loads(params, 0, NULL);
  if (j)
    json_object_set_new(p->params_of, key, j);
}

static const json_t *params_of(const ks_planner *p, int64_t cand_id) {
  char key[32];
  snprintf(key, sizeof key, "%lld", (long long)cand_id);
  return json_object_get(p->params_of, key);
}

static int tpl_index(const ks_planner *p, const ks_wm_node *n) {
  const char *name = json_string_value(json_object_get(n->params, "template"));
  for (int i = 0; name && i < p->tpls->n; i++)
    if (!strcmp(p->tpls->t[i].name, name))
      return i;
  return -1;
}

/* --seed-cuda (spec/seed.h): a plan whose concepts the CUDA kernel uses
 * starts higher; the root's notes record the mapping. */
static double seeded(const ks_planner *p, double priority,
                     const char *const *concepts, int n) {
  double v = priority + ks_spec_seed_bonus(p->cuda, concepts, n);
  return v > 1 ? 1 : v;
}

static void seed_notes(const ks_planner *p, ks_wm *wm) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_printf(&b, "%s\n\n%s", p->an->text, p->cuda->notes);
  ks_buf_puts(&b, "raised by the seed:");
  int raised = 0;
  for (int i = 0; i < p->tpls->n; i++) {
    const ks_template *t = &p->tpls->t[i];
    const char *c[KS_MAX_CONCEPTS];
    for (int k = 0; k < t->n_concepts; k++)
      c[k] = t->concepts[k];
    double bonus = ks_spec_seed_bonus(p->cuda, c, t->n_concepts);
    if (bonus > 0)
      ks_buf_printf(&b, "%s family %s (+%.2f)", raised++ ? "," : "", t->family,
                    bonus);
  }
  ks_buf_puts(&b, raised ? "; later decisions with these concepts likewise\n"
                         : " no template uses these concepts\n");
  ks_wm_set_root_notes(wm, b.data);
  ks_buf_free(&b);
}

static ks_code init_tree(void *self, ks_wm *wm, ks_err *err) {
  ks_planner *p = self;
  if (ks_wm_count(wm) > 1)
    return KS_OK; /* resumed: the tree is already there */
  ks_wm_set_root_notes(wm, p->an->text);
  ks_code rc = KS_OK;
  for (int i = 0; i < p->tpls->n && !rc; i++) {
    const ks_template *t = &p->tpls->t[i];
    ks_wm_node_spec s;
    ks_wm_spec_init(&s);
    s.parent = KS_WM_ROOT_ID;
    s.decision = "algorithm";
    s.choice = t->family;
    char desc[512];
    int dl = snprintf(desc, sizeof desc,
                      "template %s (%d parameters, %.0f combinations); "
                      "first attempt",
                      t->name, t->cand.n_decls, ks_template_space(t));
    for (int j = 0; j < t->cand.n_decls && dl > 0 && dl < (int)sizeof desc; j++)
      dl += snprintf(desc + dl, sizeof desc - (size_t)dl, " %s=%s",
                     t->cand.decls[j].name,
                     t->cand.decls[j].values[p->plans[i].first[j]]);
    s.description = desc;
    s.rationale = "one algorithmic family per template; the root's notes "
                  "hold the analysis";
    s.difficulty = 2;
    /* every algorithmic family is tried once before any refinement: one
     * evaluation each is cheap and tells which branch deserves the budget */
    s.priority = 0.85 + 0.15 * p->spec->d[0].priority[p->an->main_regime];
    s.expected_speedup = 1.5;
    const char *concepts[KS_MAX_CONCEPTS];
    for (int c = 0; c < t->n_concepts; c++)
      concepts[c] = t->concepts[c];
    s.concepts = concepts;
    s.n_concepts = t->n_concepts;
    s.priority = seeded(p, s.priority, concepts, t->n_concepts);
    json_t *params = json_pack("{s:s}", "template", t->name);
    s.params = params;
    rc = ks_wm_insert(wm, &s, NULL, err);
    json_decref(params);
  }
  if (!rc && p->cuda)
    seed_notes(p, wm);
  return rc;
}

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static ks_code make_candidate(const ks_template *t, ks_candidate *c,
                              ks_err *err) {
  return ks_candidate_parse(t->cand.source, t->cand.path, t->cand.entry, c,
                            err);
}

static ks_code propose_random(ks_planner *p, ks_wm *wm, int iteration,
                              ks_proposal *out, ks_err *err) {
  uint64_t h = mix(p->seed, (uint64_t)iteration + 1);
  int ti = (int)(h % (uint64_t)p->tpls->n);
  const ks_template *t = &p->tpls->t[ti];
  out->tpl = t;
  ks_code rc = make_candidate(t, &out->cand, err);
  for (int j = 0; !rc && j < t->cand.n_decls; j++) {
    const ks_param_decl *d = &t->cand.decls[j];
    uint64_t r = mix(h, (uint64_t)j + 77);
    rc = ks_candidate_set_param(&out->cand, d->name,
                                d->values[r % (uint64_t)d->n_values], err);
  }
  /* attribute the attempt to the family node of its template */
  for (int i = 0; i < ks_wm_count(wm); i++) {
    const ks_wm_node *n = ks_wm_node_at(wm, i);
    if (n->up && !n->up->up && tpl_index(p, n) == ti)
      ks_strlcpy(out->node_id, n->id, sizeof out->node_id);
  }
  return rc;
}

static ks_code propose(void *self, ks_wm *wm, int iteration, ks_proposal *out,
                       ks_err *err) {
  ks_planner *p = self;
  memset(out, 0, sizeof *out);
  if (p->random)
    return propose_random(p, wm, iteration, out, err);
  const ks_wm_node *n =
      ks_wm_select(wm, 0.25, mix(p->seed, (uint64_t)iteration));
  if (!n)
    return KS_OK;
  int ti = tpl_index(p, n);
  if (ti < 0)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "world model node %s names no known template", n->id);
  const ks_template *t = &p->tpls->t[ti];
  ks_strlcpy(out->node_id, n->id, sizeof out->node_id);
  out->tpl = t;
  ks_code rc = make_candidate(t, &out->cand, err);
  /* start from the parent's best parameters (none for a family node) */
  const json_t *base = n->up && n->up->solution.candidate_id
                           ? params_of(p, n->up->solution.candidate_id)
                           : NULL;
  for (int j = 0; !rc && j < t->cand.n_decls; j++) {
    const ks_param_decl *d = &t->cand.decls[j];
    const char *fixed = json_string_value(json_object_get(n->params, d->name));
    const char *from_parent = json_string_value(json_object_get(base, d->name));
    const char *v;
    if (fixed)
      v = fixed; /* decided on this plan's path */
    else if (n->attempts == 0)
      v = from_parent ? from_parent : d->values[p->plans[ti].first[j]];
    else /* later attempts vary what the plan leaves open */
      v = d->values[mix(mix(p->seed, ks_hash_str(n->id, 3)),
                        (uint64_t)(n->attempts * 131 + j)) %
                    (uint64_t)d->n_values];
    rc = ks_candidate_set_param(&out->cand, d->name, v, err);
  }
  return rc;
}

/* Mean log-gain of nodes elsewhere that made the same decision with the same
 * choice: the "twin" evidence. */
static double twin_gain(const ks_wm *wm, const char *decision,
                        const char *choice, const char *exclude) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < ks_wm_count(wm); i++) {
    const ks_wm_node *x = ks_wm_node_at(wm, i);
    if (!x->up || !x->up->up || x->attempts == 0 || !strcmp(x->id, exclude) ||
        strcmp(x->decision, decision) || strcmp(x->choice, choice) ||
        x->up->solution.score <= 0)
      continue;
    double g =
        x->solution.score > 0 ? x->solution.score / x->up->solution.score : 0.5;
    sum += log(g);
    n++;
  }
  return n ? sum / n : 0;
}

static double clamp01(double v) { return v < 0.02 ? 0.02 : v > 1 ? 1 : v; }

/* Is the decision of level `lv` already made on n's path (n included)? */
static bool on_path(const ks_wm_node *n, const level *lv) {
  for (; n && n->up && n->up->up; n = n->up)
    if (!strcmp(n->decision, lv->name))
      return true;
  return false;
}

/* One child of n that changes level lv's parameter k to value v (the other
 * parameters of the level keep n's best values). */
static ks_code add_child(ks_planner *p, ks_wm *wm, const char *parent_id,
                         const json_t *parent_params, double rel,
                         const ks_template *t, const tpl_plan *pl,
                         const level *lv, const json_t *best, int k, int v,
                         ks_err *err) {
  json_t *params = json_deep_copy(parent_params);
  char choice[256] = "";
  for (int q = 0; q < lv->n_params; q++) {
    const ks_param_decl *d = &t->cand.decls[lv->param[q]];
    const char *bv = json_string_value(json_object_get(best, d->name));
    /* no best value (a candidate not remembered): the family's first guess,
     * as propose() would use */
    const char *val = q == k ? d->values[v]
                      : bv   ? bv
                             : d->values[pl->first[lv->param[q]]];
    json_object_set_new(params, d->name, json_string(val));
    size_t l = strlen(choice);
    snprintf(choice + l, sizeof choice - l, "%s%s=%s", q ? ", " : "", d->name,
             val);
  }
  double tg = twin_gain(wm, lv->name, choice, "");
  ks_wm_node_spec s;
  ks_wm_spec_init(&s);
  s.parent = parent_id;
  s.decision = lv->name;
  s.choice = choice;
  s.difficulty = 2;
  /* refinements rank below untried families, and by how good their branch
   * is: a branch at 0.9 of the best score gets 0.81 of the weight, at half
   * of it 0.25. With tens of evaluations the budget belongs to the branch
   * that leads; weaker branches still get the exploration bonus. */
  s.priority =
      clamp01(0.8 * rel * rel *
              (lv->priority + 0.5 * tg +
               ks_spec_seed_bonus(p->cuda, lv->concepts, lv->n_concepts)));
  s.expected_speedup = 1.1;
  s.concepts = lv->concepts;
  s.n_concepts = lv->n_concepts;
  s.params = params;
  char rationale[200];
  snprintf(rationale, sizeof rationale,
           "one step from the best candidate so far on this path; twin "
           "evidence %+.2f (log gain)",
           tg);
  s.rationale = rationale;
  ks_code rc = ks_wm_insert(wm, &s, NULL, err);
  json_decref(params);
  return rc;
}

/* A solved node gets children for every decision its path has not made yet,
 * each changing one parameter of that decision from the node's best
 * candidate: one step of a coordinate search whose order the priorities
 * (analysis, branch quality, twin evidence) choose. A decision that does not
 * help on this branch therefore never blocks the ones after it. */
static ks_code expand(ks_planner *p, ks_wm *wm, const ks_wm_node *n, int ti,
                      ks_err *err) {
  const tpl_plan *pl = &p->plans[ti];
  const ks_template *t = &p->tpls->t[ti];
  const json_t *best = params_of(p, n->solution.candidate_id);
  const ks_wm_node *bn = ks_wm_best_solved(wm);
  double top = bn && bn->solution.score > 0 ? bn->solution.score : 1;
  double rel = n->solution.score / top;
  rel = rel > 1 ? 1 : rel > 0 ? rel : 0;
  ks_code rc = KS_OK;
  for (int i = 0; i < pl->n_levels && !rc; i++) {
    if (on_path(n, &pl->lv[i]))
      continue;
    const level *lv = &pl->lv[i];
    for (int k = 0; k < lv->n_params && !rc; k++) {
      const ks_param_decl *d = &t->cand.decls[lv->param[k]];
      const char *bv = json_string_value(json_object_get(best, d->name));
      for (int v = 0; v < d->n_values && !rc; v++)
        if (!(bv ? !strcmp(bv, d->values[v]) : v == pl->first[lv->param[k]]))
          rc = add_child(p, wm, n->id, n->params, rel, t, pl, lv, best, k, v,
                         err);
    }
  }
  return rc;
}

/* A child that beat its parent supersedes the parent's pending steps on
 * other decisions: its own children make the same steps from a better
 * point. Alternatives for the decision it made stay open. */
static ks_code prune_superseded(ks_wm *wm, const char *node_id, ks_err *err) {
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  char decision[256];
  ks_strlcpy(decision, n->decision, sizeof decision);
  const ks_wm_node *parent = n->up;
  ks_code rc = KS_OK;
  for (int i = 0; i < ks_wm_count(wm) && !rc; i++) {
    const ks_wm_node *x = ks_wm_node_at(wm, i);
    if (x->up != parent || x->status != KS_WM_OPEN ||
        !strcmp(x->decision, decision))
      continue;
    char xid[KS_WM_ID_MAX];
    ks_strlcpy(xid, x->id, sizeof xid);
    rc = ks_wm_set_status(wm, xid, KS_WM_PRUNED, err);
  }
  return rc;
}

static ks_code move_twins(ks_wm *wm, const char *node_id, double g,
                          ks_err *err);

/* A tie decides the next step when the better of the two is within the
 * noise of the run's best: the coordinate search steps on from one of them.
 * Ties further down would only reorder plans the budget will not reach. */
static void queue_tie(ks_planner *p, const ks_wm *wm, const char *node_id,
                      int64_t cand, double score, double parent_score,
                      double tol) {
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  const ks_wm_node *bn = ks_wm_best_solved(wm);
  double top = bn && bn->solution.score > 0 ? bn->solution.score : score;
  if (!n || !n->up || !n->up->solution.candidate_id ||
      (score > parent_score ? score : parent_score) < top * (1 - tol))
    return;
  if (p->n_ties == (int)(sizeof p->ties / sizeof p->ties[0])) {
    memmove(p->ties, p->ties + 1, sizeof p->ties[0] * (size_t)(p->n_ties - 1));
    p->n_ties--;
  }
  struct tie *t = &p->ties[p->n_ties++];
  ks_strlcpy(t->node, node_id, sizeof t->node);
  t->cand = cand;
  t->other = n->up->solution.candidate_id;
}

/* The newest tie that still decides something: its node still solved and
 * still near the best (a later step may have left both behind). */
static bool pending_tie(void *self, const ks_wm *wm, char node_id[KS_WM_ID_MAX],
                        int64_t *cand, int64_t *other) {
  ks_planner *p = self;
  const ks_wm_node *bn = ks_wm_best_solved(wm);
  double tol = noise_tol(p);
  while (p->n_ties > 0) {
    struct tie t = p->ties[--p->n_ties];
    const ks_wm_node *n = ks_wm_find(wm, t.node);
    if (!n || n->status != KS_WM_SOLVED || !n->up || !bn)
      continue;
    double a = n->solution.score, b = n->up->solution.score;
    if ((a > b ? a : b) < bn->solution.score * (1 - tol))
      continue;
    ks_strlcpy(node_id, t.node, KS_WM_ID_MAX);
    *cand = t.cand;
    *other = t.other;
    return true;
  }
  return false;
}

/* ratio: the tied child's speed over its parent's, paired. Faster: the
 * child supersedes its parent (as a child that beat it outright would);
 * slower: the child's own pending steps go, its parent's cover the same
 * decisions from a better point; within the margin the tie stands. */
static ks_code settle(void *self, ks_wm *wm, const char *node_id, double ratio,
                      ks_err *err) {
  (void)self;
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  if (!n || ratio <= 0)
    return KS_OK;
  ks_code rc = KS_OK;
  if (ratio > 1 + SETTLE_MARGIN) {
    rc = prune_superseded(wm, node_id, err);
  } else if (ratio < 1 / (1 + SETTLE_MARGIN)) {
    for (int i = 0; i < ks_wm_count(wm) && !rc; i++) {
      const ks_wm_node *x = ks_wm_node_at(wm, i);
      if (x->up != n || x->status != KS_WM_OPEN)
        continue;
      char xid[KS_WM_ID_MAX];
      ks_strlcpy(xid, x->id, sizeof xid);
      rc = ks_wm_set_status(wm, xid, KS_WM_PRUNED, err);
      n = ks_wm_find(wm, node_id);
    }
  } else {
    return KS_OK;
  }
  ks_log(KS_LOG_INFO, "tie at %s settled: %.3fx its parent, paired (%s)",
         node_id, ratio, ratio > 1 ? "the child leads" : "the parent leads");
  return rc ? rc : move_twins(wm, node_id, ratio, err);
}

static ks_code observe(void *self, ks_wm *wm, const char *node_id,
                       int64_t cand_id, double score,
                       const struct ks_eval_result *res, ks_err *err) {
  ks_planner *p = self;
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  if (!n)
    return KS_OK; /* the node was deleted meanwhile: nothing to learn */
  if (score > 0)
    note_spread(p, res);
  ks_code rc = ks_wm_record_attempt(wm, node_id, cand_id, score, err);
  if (rc || p->random)
    return rc;
  n = ks_wm_find(wm, node_id);
  int ti = tpl_index(p, n);
  double parent_score = n->up && n->up->up ? n->up->solution.score : 1.0;
  bool family = !n->up || !n->up->up;
  /* noise-aware: only a difference beyond the measured noise prunes or
   * demotes; a near tie keeps both paths open and moves no twin */
  double tol = noise_tol(p);
  bool better = score > parent_score * (1 + tol);
  bool tie = score > 0 && !better && score >= parent_score * (1 - tol);
  if (n->status == KS_WM_OPEN && score > 0 && (family || better || tie)) {
    rc = ks_wm_set_status(wm, node_id, KS_WM_SOLVED, err);
    if (!rc && ti >= 0)
      rc = expand(p, wm, ks_wm_find(wm, node_id), ti, err);
    if (!rc && !family && better)
      rc = prune_superseded(wm, node_id, err);
  } else if (n->status == KS_WM_OPEN && n->attempts >= p->max_attempts) {
    rc = ks_wm_set_status(wm, node_id, KS_WM_FAILED, err);
  } else if (n->status == KS_WM_OPEN) {
    /* the plan survives a bad parameter draw, but its untried siblings go
     * first: a second attempt costs as much as a new plan */
    json_t *upd = json_pack("{s:{s:f}}", "action", "priority",
                            clamp01(n->action.priority * 0.5));
    char nid[KS_WM_ID_MAX];
    ks_strlcpy(nid, node_id, sizeof nid);
    rc = ks_wm_update(wm, nid, upd, err);
    json_decref(upd);
  }
  if (!rc && tie && !family && res && !p->random)
    queue_tie(p, wm, node_id, cand_id, score, parent_score, tol);
  if (rc || family || tie)
    return rc;
  return move_twins(wm, node_id,
                    score > 0 && parent_score > 0 ? score / parent_score : 0.5,
                    err);
}

/* Twins: the same decision and choice on other branches move with the
 * evidence g (gain over the parent); the decision's other choices move half
 * as much. */
static ks_code move_twins(ks_wm *wm, const char *node_id, double g,
                          ks_err *err) {
  const ks_wm_node *n = ks_wm_find(wm, node_id);
  ks_code rc = KS_OK;
  double delta = 0.3 * log(g);
  char decision[256], choice[256];
  ks_strlcpy(decision, n->decision, sizeof decision);
  ks_strlcpy(choice, n->choice, sizeof choice);
  for (int i = 0; i < ks_wm_count(wm) && !rc; i++) {
    const ks_wm_node *x = ks_wm_node_at(wm, i);
    if (x->status != KS_WM_OPEN || !strcmp(x->id, node_id) ||
        strcmp(x->decision, decision))
      continue;
    /* the same choice moves fully; other choices for the same decision
     * move by half: a decision that does not pay on one branch (vector
     * width already native, say) is likely not to pay on the others */
    double step = strcmp(x->choice, choice) ? delta / 2 : delta;
    json_t *upd = json_pack("{s:{s:f}}", "action", "priority",
                            clamp01(x->action.priority + step));
    char xid[KS_WM_ID_MAX];
    ks_strlcpy(xid, x->id, sizeof xid);
    rc = ks_wm_update(wm, xid, upd, err);
    json_decref(upd);
  }
  return rc;
}

const ks_planner_i ks_planner_builtin = {
    .name = "builtin",
    .needs_templates = true,
    .create = create_builtin,
    .init_tree = init_tree,
    .remember = remember,
    .propose = propose,
    .observe = observe,
    .pending_tie = pending_tie,
    .settle = settle,
    .destroy = planner_free,
};

const ks_planner_i ks_planner_random = {
    .name = "random",
    .needs_templates = true,
    .create = create_random,
    .init_tree = init_tree,
    .remember = remember,
    .propose = propose,
    .observe = observe,
    .destroy = planner_free,
};
