/* test_planner.c — the built-in planner's rules (search/planner.h): family
 * nodes per template, expansion of a solved node into the next decision's
 * choices, failure after the allowed attempts, twin evidence moving
 * priorities, determinism under a seed, and the analysis regimes. */
#include "eval/eval.h"
#include "search/analysis.h"
#include "search/planner.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];
static ks_task g_task;
static ks_template_set g_tpls;
static ks_class_spec g_spec;
static ks_analysis g_an;

static void put(const char *rel, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  FILE *f = fopen(p, "w");
  cr_assert(f, "cannot write %s", p);
  fputs(text, f);
  fclose(f);
}

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ks-planner-test-%d", (int)getpid());
  char p[512];
  snprintf(p, sizeof p, "%s/templates/c", g_dir);
  ks_err err;
  cr_assert_eq(ks_mkdir_p(p, &err), KS_OK);
  put("reference.c", "void t(const float *x, float *y, long n) {}\n");
  put("task.json",
      "{\"name\":\"t\",\"class\":\"row_reduction\",\"axes\":{\"n\":{"
      "\"type\":\"var\"}},\"inputs\":{\"x\":{\"shape\":[\"n\"],\"dtype\":"
      "\"float32\"}},\"outputs\":{\"y\":{\"shape\":[\"n\"],\"dtype\":"
      "\"float32\"}},\"reference\":\"reference.c\",\"cost\":{\"bytes\":"
      "\"8*n\",\"flops\":\"n\"},\"workloads\":[{\"n\":100},{\"n\":"
      "10000000}]}");
  put("templates/c/alpha.c", "// ksearch: backend=c entry=t\n"
                             "// ksearch: family=alpha concepts=simd\n"
                             "// ksearch: param VEC in 8,16,4\n"
                             "// ksearch: param UNROLL in 1,2\n");
  put("templates/c/beta.c", "// ksearch: backend=c entry=t\n"
                            "// ksearch: param VEC in 8,16\n"
                            "// ksearch: param UNROLL in 1,2\n");
  cr_assert_eq(ks_task_load(g_dir, &g_task, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ks_templates_load(&g_task, "c", &g_tpls, &err), KS_OK, "%s",
               err.msg);
  /* a class spec in memory: template, then vector width, then unrolling */
  memset(&g_spec, 0, sizeof g_spec);
  g_spec.n_decisions = 3;
  strcpy(g_spec.d[0].name, "algorithm");
  g_spec.d[0].is_template = true;
  strcpy(g_spec.d[1].name, "vector width");
  strcpy(g_spec.d[1].params[0], "VEC");
  g_spec.d[1].n_params = 1;
  strcpy(g_spec.d[2].name, "unrolling");
  strcpy(g_spec.d[2].params[0], "UNROLL");
  g_spec.d[2].n_params = 1;
  for (int r = 0; r < KS_REGIME_COUNT; r++) {
    g_spec.d[0].priority[r] = 0.6;
    g_spec.d[1].priority[r] = 0.9;
    g_spec.d[2].priority[r] = 0.5;
  }
  ks_roofline roof;
  memset(&roof, 0, sizeof roof);
  roof.bandwidth_gbps = 10;
  roof.peak_gflops = 100;
  ks_analyze(&g_task, &roof, NULL, &g_an);
}

static void teardown(void) {
  ks_templates_free(&g_tpls);
  ks_task_free(&g_task);
  ks_rm_rf(g_dir);
}

static void *new_planner(const ks_planner_i *pi, uint64_t seed) {
  ks_planner_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.task = &g_task;
  ctx.tpls = &g_tpls;
  ctx.spec = &g_spec;
  ctx.an = &g_an;
  ctx.seed = seed;
  ctx.max_attempts = 2;
  void *p = NULL;
  ks_err err;
  cr_assert_eq(pi->create(&ctx, &p, &err), KS_OK);
  return p;
}

TestSuite(planner, .init = setup, .fini = teardown);

Test(planner, analysis_regimes) {
  cr_assert_eq(g_an.regime[0], KS_REGIME_LATENCY, "100 floats is tiny");
  cr_assert_eq(g_an.regime[1], KS_REGIME_MEMORY, "0.125 flop/byte < 10");
  cr_assert_eq(g_an.main_regime, KS_REGIME_MEMORY);
  cr_assert(strstr(g_an.text, "memory-bound"));
}

Test(planner, families_then_expansion) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  cr_assert_eq(ks_planner_builtin.init_tree(p, wm, &err), KS_OK);
  cr_assert_eq(ks_wm_count(wm), 3, "root + one family per template");
  cr_assert(strstr(ks_wm_root(wm)->notes, "bottleneck"),
            "the analysis lives in the root notes");
  ks_proposal pr;
  cr_assert_eq(ks_planner_builtin.propose(p, wm, 0, &pr, &err), KS_OK);
  const ks_wm_node *n = ks_wm_find(wm, pr.node_id);
  cr_assert_str_eq(n->decision, "algorithm");
  /* first attempt of a family uses the declared defaults */
  cr_assert_str_eq(ks_candidate_param(&pr.cand, "VEC"), "8");
  cr_assert_str_eq(ks_candidate_param(&pr.cand, "UNROLL"), "1");
  char *params = ks_candidate_params_json(&pr.cand);
  ks_planner_builtin.remember(p, 11, params);
  free(params);
  char id[KS_WM_ID_MAX];
  ks_strlcpy(id, pr.node_id, sizeof id);
  ks_proposal_free(&pr);
  cr_assert_eq(ks_planner_builtin.observe(p, wm, id, 11, 2.0, NULL, &err),
               KS_OK);
  n = ks_wm_find(wm, id);
  cr_assert_eq(n->status, KS_WM_SOLVED);
  const ks_wm_node *kids[8];
  int nk = ks_wm_children(wm, id, kids, 8);
  /* one child per one-parameter step from the best candidate, for every
   * decision the path has not made: VEC=16, VEC=4 (alpha only) and
   * UNROLL=2 */
  bool alpha = !strcmp(
      json_string_value(json_object_get(n->params, "template")), "alpha");
  cr_assert_eq(nk, alpha ? 3 : 2);
  int vec = 0, unroll = 0;
  for (int i = 0; i < nk; i++) {
    cr_assert_null(strstr(kids[i]->choice, "VEC=8"));
    cr_assert_null(strstr(kids[i]->choice, "UNROLL=1"));
    /* refinements of the best branch: 0.8 x the class prior, below the
     * untried family (which stays above 0.85) */
    if (!strcmp(kids[i]->decision, "vector width")) {
      vec++;
      cr_assert_float_eq(kids[i]->action.priority, 0.8 * 0.9, 1e-9);
    } else {
      cr_assert_str_eq(kids[i]->decision, "unrolling");
      cr_assert_str_eq(kids[i]->choice, "UNROLL=2");
      unroll++;
      cr_assert_float_eq(kids[i]->action.priority, 0.8 * 0.5, 1e-9);
    }
  }
  cr_assert_eq(vec, alpha ? 2 : 1);
  cr_assert_eq(unroll, 1);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

/* The first attempt of each family (0 alpha, 1 beta) under the current
 * g_spec and g_an: VEC and UNROLL values and the family node's description.
 * Each attempt fails, so the other family goes next. */
typedef struct first_attempt {
  char vec[8], unroll[8], desc[512];
} first_attempt;

static void first_attempts(first_attempt out[2]) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  cr_assert_eq(ks_planner_builtin.init_tree(p, wm, &err), KS_OK);
  for (int i = 0; i < 2; i++) {
    ks_proposal pr;
    cr_assert_eq(ks_planner_builtin.propose(p, wm, i, &pr, &err), KS_OK);
    const ks_wm_node *n = ks_wm_find(wm, pr.node_id);
    int t = !strcmp(json_string_value(json_object_get(n->params, "template")),
                    "beta");
    ks_strlcpy(out[t].vec, ks_candidate_param(&pr.cand, "VEC"), 8);
    ks_strlcpy(out[t].unroll, ks_candidate_param(&pr.cand, "UNROLL"), 8);
    ks_strlcpy(out[t].desc, n->action.description, sizeof out[t].desc);
    char id[KS_WM_ID_MAX];
    ks_strlcpy(id, pr.node_id, sizeof id);
    ks_proposal_free(&pr);
    cr_assert_eq(ks_planner_builtin.observe(p, wm, id, i + 1, 0, NULL, &err),
                 KS_OK);
  }
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

/* The first VEC of each family for an analysis made on `isa`, whose
 * registers hold `floats` floats. */
static void first_vec(const char *isa, int floats, char out[2][8]) {
  ks_roofline roof;
  memset(&roof, 0, sizeof roof);
  roof.bandwidth_gbps = 10;
  roof.peak_gflops = 100;
  strcpy(roof.isa, isa);
  roof.vector_floats = floats;
  ks_analysis saved = g_an;
  ks_analyze(&g_task, &roof, NULL, &g_an);
  strcpy(g_spec.d[1].concepts[0], "simd_vectorization");
  g_spec.d[1].n_concepts = 1;
  first_attempt fa[2];
  first_attempts(fa);
  for (int t = 0; t < 2; t++) {
    strcpy(out[t], fa[t].vec);
    cr_assert_str_eq(fa[t].unroll, "1");
  }
  g_an = saved;
}

Test(planner, first_vector_width_is_the_machines) {
  char v[2][8];
  first_vec("avx512", 16, v);
  cr_assert_str_eq(v[0], "16", "alpha offers 16: the AVX-512 width");
  cr_assert_str_eq(v[1], "16");
  first_vec("sse", 4, v);
  cr_assert_str_eq(v[0], "4");
  cr_assert_str_eq(v[1], "8", "beta has no 4: its declared default");
  first_vec("", 0, v);
  cr_assert_str_eq(v[0], "8", "unknown ISA: declared defaults");
  ks_roofline roof;
  memset(&roof, 0, sizeof roof);
  strcpy(roof.isa, "avx2");
  roof.vector_floats = 8;
  ks_analysis an;
  ks_analyze(&g_task, &roof, NULL, &an);
  cr_assert_eq(an.native_vec, 8);
  cr_assert(strstr(an.text, "native vector: 8 floats (avx2)"), "%s", an.text);
}

/* The class spec's start value is the family's first guess where the
 * template offers it; the family node's description says what it starts at */
Test(planner, class_spec_start_is_the_first_guess) {
  strcpy(g_spec.d[2].start[0], "2");
  first_attempt fa[2];
  first_attempts(fa);
  for (int t = 0; t < 2; t++) {
    cr_assert_str_eq(fa[t].unroll, "2");
    cr_assert_str_eq(fa[t].vec, "8");
    cr_assert(strstr(fa[t].desc, "first attempt VEC=8 UNROLL=2"), "%s",
              fa[t].desc);
  }
  /* a value the template does not offer leaves its declared default */
  strcpy(g_spec.d[2].start[0], "3");
  first_attempts(fa);
  cr_assert_str_eq(fa[0].unroll, "1");
  cr_assert_str_eq(fa[1].unroll, "1");
}

Test(planner, weaker_branches_rank_lower) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  ks_planner_builtin.init_tree(p, wm, &err);
  char f1[KS_WM_ID_MAX], f2[KS_WM_ID_MAX];
  ks_strlcpy(f1, ks_wm_node_at(wm, 1)->id, sizeof f1);
  ks_strlcpy(f2, ks_wm_node_at(wm, 2)->id, sizeof f2);
  cr_assert_gt(ks_wm_node_at(wm, 2)->action.priority, 0.85);
  ks_planner_builtin.remember(p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, f1, 1, 4.0, NULL, &err);
  ks_planner_builtin.observe(p, wm, f2, 1, 1.0, NULL, &err);
  const ks_wm_node *k1[8], *k2[8];
  ks_wm_children(wm, f1, k1, 8);
  ks_wm_children(wm, f2, k2, 8);
  /* a branch at a quarter of the best score gets a sixteenth of the weight */
  cr_assert_float_eq(k2[0]->action.priority, k1[0]->action.priority / 16, 1e-9);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, refinement_needs_improvement_and_fails_after_attempts) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  ks_planner_builtin.init_tree(p, wm, &err);
  const ks_wm_node *fam = ks_wm_node_at(wm, 1);
  char fid[KS_WM_ID_MAX];
  ks_strlcpy(fid, fam->id, sizeof fid);
  ks_planner_builtin.remember(p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, fid, 1, 2.0, NULL, &err);
  const ks_wm_node *kids[8];
  ks_wm_children(wm, fid, kids, 8);
  char kid[KS_WM_ID_MAX];
  ks_strlcpy(kid, kids[0]->id, sizeof kid);
  /* slower than the parent: not solved, and its untried siblings go first
   * (half the priority); after 2 attempts it fails */
  double before = ks_wm_find(wm, kid)->action.priority;
  ks_planner_builtin.observe(p, wm, kid, 2, 1.5, NULL, &err);
  cr_assert_eq(ks_wm_find(wm, kid)->status, KS_WM_OPEN);
  cr_assert_float_eq(ks_wm_find(wm, kid)->action.priority, before / 2, 1e-9);
  ks_planner_builtin.observe(p, wm, kid, 3, 0, NULL, &err);
  cr_assert_eq(ks_wm_find(wm, kid)->status, KS_WM_FAILED);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, a_better_step_supersedes_the_parents_other_steps) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  ks_planner_builtin.init_tree(p, wm, &err);
  char fid[KS_WM_ID_MAX];
  ks_strlcpy(fid, ks_wm_node_at(wm, 1)->id, sizeof fid);
  ks_planner_builtin.remember(p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, fid, 1, 2.0, NULL, &err);
  const ks_wm_node *kids[8];
  int nk = ks_wm_children(wm, fid, kids, 8);
  char v16[KS_WM_ID_MAX] = "", v4[KS_WM_ID_MAX] = "", u2[KS_WM_ID_MAX] = "";
  for (int i = 0; i < nk; i++)
    ks_strlcpy(!strcmp(kids[i]->choice, "VEC=16")  ? v16
               : !strcmp(kids[i]->choice, "VEC=4") ? v4
                                                   : u2,
               kids[i]->id, KS_WM_ID_MAX);
  cr_assert(v16[0] && v4[0] && u2[0]);
  /* VEC=16 beats the family: it is solved and expanded */
  ks_planner_builtin.remember(p, 2, "{\"VEC\":\"16\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v16, 2, 3.0, NULL, &err);
  cr_assert_eq(ks_wm_find(wm, v16)->status, KS_WM_SOLVED);
  /* the family's UNROLL=2 step is pruned (VEC=16's child makes it from a
   * better point); VEC=4, an alternative for the same decision, stays */
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_PRUNED);
  cr_assert_eq(ks_wm_find(wm, v4)->status, KS_WM_OPEN);
  const ks_wm_node *gk[8];
  int ng = ks_wm_children(wm, v16, gk, 8);
  cr_assert_eq(ng, 1, "only the decision its path has not made");
  cr_assert_str_eq(gk[0]->decision, "unrolling");
  cr_assert_str_eq(json_string_value(json_object_get(gk[0]->params, "VEC")),
                   "16");
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, twins_move_with_evidence) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  ks_planner_builtin.init_tree(p, wm, &err);
  char f1[KS_WM_ID_MAX], f2[KS_WM_ID_MAX];
  ks_strlcpy(f1, ks_wm_node_at(wm, 1)->id, sizeof f1);
  ks_strlcpy(f2, ks_wm_node_at(wm, 2)->id, sizeof f2);
  ks_planner_builtin.remember(p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, f1, 1, 2.0, NULL, &err);
  ks_planner_builtin.observe(p, wm, f2, 1, 2.0, NULL, &err);
  /* VEC=16 under family 1 doubles the score: VEC=16 under family 2 rises */
  const ks_wm_node *k1[8], *k2[8];
  int n1 = ks_wm_children(wm, f1, k1, 8), n2 = ks_wm_children(wm, f2, k2, 8);
  const char *a = NULL, *b = NULL;
  for (int i = 0; i < n1 && i < 8; i++)
    if (!strcmp(k1[i]->choice, "VEC=16"))
      a = k1[i]->id;
  for (int i = 0; i < n2 && i < 8; i++)
    if (!strcmp(k2[i]->choice, "VEC=16"))
      b = k2[i]->id;
  cr_assert(a && b);
  char aid[KS_WM_ID_MAX], bid[KS_WM_ID_MAX];
  ks_strlcpy(aid, a, sizeof aid);
  ks_strlcpy(bid, b, sizeof bid);
  const char *c = NULL; /* VEC=4 under family 1: same decision, other choice */
  for (int i = 0; i < n1 && i < 8; i++)
    if (!strcmp(k1[i]->choice, "VEC=4"))
      c = k1[i]->id;
  cr_assert(c);
  char cid[KS_WM_ID_MAX];
  ks_strlcpy(cid, c, sizeof cid);
  double before = ks_wm_find(wm, bid)->action.priority;
  double before_c = ks_wm_find(wm, cid)->action.priority;
  ks_planner_builtin.observe(p, wm, aid, 5, 4.0, NULL, &err);
  double up = ks_wm_find(wm, bid)->action.priority - before;
  cr_assert_float_eq(up, 0.3 * log(2.0), 1e-9);
  /* the decision's other choices move half as much */
  cr_assert_float_eq(ks_wm_find(wm, cid)->action.priority - before_c, up / 2,
                     1e-9);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, same_seed_same_proposals) {
  char seen[2][8][128];
  for (int run = 0; run < 2; run++) {
    void *p = new_planner(&ks_planner_random, 42);
    ks_wm *wm = ks_wm_new("t");
    ks_err err;
    ks_planner_random.init_tree(p, wm, &err);
    for (int i = 0; i < 8; i++) {
      ks_proposal pr;
      cr_assert_eq(ks_planner_random.propose(p, wm, i, &pr, &err), KS_OK);
      char *pj = ks_candidate_params_json(&pr.cand);
      snprintf(seen[run][i], 128, "%s %s", pr.tpl->name, pj);
      free(pj);
      ks_proposal_free(&pr);
    }
    ks_wm_free(wm);
    ks_planner_random.destroy(p);
  }
  for (int i = 0; i < 8; i++)
    cr_assert_str_eq(seen[0][i], seen[1][i]);
}

Test(planner, no_templates_is_a_clear_error) {
  char p[512];
  snprintf(p, sizeof p, "%s/templates/c", g_dir);
  ks_rm_rf(p);
  ks_template_set s;
  ks_err err;
  cr_assert_eq(ks_templates_load(&g_task, "c", &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "nothing to search"), "%s", err.msg);
}

/* class specs come from $KSEARCH_HOME/specs/classes; each test runs in its
 * own process, so the data folder can be pointed at a temp dir here */
static void spec_home(const char *json) {
  char p[512];
  snprintf(p, sizeof p, "%s/specs/classes", g_dir);
  ks_err err;
  cr_assert_eq(ks_mkdir_p(p, &err), KS_OK);
  if (json) {
    snprintf(p, sizeof p, "%s/specs/classes/myclass.json", g_dir);
    FILE *f = fopen(p, "w");
    fputs(json, f);
    fclose(f);
  }
  setenv("KSEARCH_HOME", g_dir, 1);
}

Test(planner, class_spec_missing_gives_defaults) {
  spec_home(NULL);
  ks_class_spec s;
  ks_err err;
  cr_assert_eq(ks_class_spec_load("myclass", &s, &err), KS_OK);
  cr_assert_eq(s.n_decisions, 1);
  cr_assert(s.d[0].is_template);
}

Test(planner, class_spec_read_and_validated) {
  spec_home("{\"decisions\": [{\"decision\": \"algorithm\", \"kind\": "
            "\"template\"}, {\"decision\": \"vector width\", \"params\": "
            "[\"VEC\"], \"start\": {\"VEC\": 16}}], \"priorities\": "
            "{\"memory\": {\"vector width\": 0.9}}, \"math_constraints\": "
            "[\"subtract the max\"]}");
  ks_class_spec s;
  ks_err err;
  cr_assert_eq(ks_class_spec_load("myclass", &s, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(s.n_decisions, 2);
  cr_assert_float_eq(s.d[1].priority[KS_REGIME_MEMORY], 0.9, 1e-12);
  cr_assert_float_eq(s.d[1].priority[KS_REGIME_LATENCY], 0.5, 1e-12);
  cr_assert_eq(ks_class_spec_decision_of(&s, "VEC"), 1);
  cr_assert_eq(s.n_constraints, 1);
  cr_assert_str_eq(s.d[1].start[0], "16");
}

Test(planner, class_spec_start_must_name_a_param_of_its_decision) {
  spec_home("{\"decisions\": [{\"decision\": \"algorithm\", \"kind\": "
            "\"template\"}, {\"decision\": \"vector width\", \"params\": "
            "[\"VEC\"], \"start\": {\"SCHED\": \"2\"}}]}");
  ks_class_spec s;
  ks_err err;
  cr_assert_eq(ks_class_spec_load("myclass", &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "decisions[1].start.SCHED"), "%s", err.msg);
  cr_assert(strstr(err.msg, "myclass.json"), "%s", err.msg);
  spec_home("{\"decisions\": [{\"decision\": \"algorithm\", \"kind\": "
            "\"template\"}, {\"decision\": \"vector width\", \"params\": "
            "[\"VEC\"], \"start\": {\"VEC\": [16]}}]}");
  cr_assert_eq(ks_class_spec_load("myclass", &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "decisions[1].start.VEC: must be a value"), "%s",
            err.msg);
  cr_assert_eq(s.n_decisions, 1, "a bad spec leaves the defaults");
}

Test(planner, class_spec_errors_name_the_field) {
  spec_home("{\"decisions\": [{\"decision\": \"vector width\", \"params\": "
            "[]}]}");
  ks_class_spec s;
  ks_err err;
  cr_assert_eq(ks_class_spec_load("myclass", &s, &err), KS_ERR_INPUT);
  cr_assert(strstr(err.msg, "decisions[0]"), "%s", err.msg);
  cr_assert(strstr(err.msg, "myclass.json"), "%s", err.msg);
}

/* An evaluation result whose repeat timings spread by `spread` (IQR over
 * median) on every workload. */
static ks_eval_result *noisy_result(double spread) {
  static ks_eval_result r;
  memset(&r, 0, sizeof r);
  r.n_workloads = 3;
  for (int i = 0; i < 3; i++) {
    r.wl[i].reps = 10;
    r.wl[i].time_ns_median = 1000;
    r.wl[i].time_ns_iqr = 1000 * spread;
  }
  return &r;
}

Test(planner, a_step_within_the_measured_noise_prunes_and_demotes_nothing) {
  void *p = new_planner(&ks_planner_builtin, 1);
  ks_wm *wm = ks_wm_new("t");
  ks_err err;
  ks_planner_builtin.init_tree(p, wm, &err);
  char fid[KS_WM_ID_MAX];
  ks_strlcpy(fid, ks_wm_node_at(wm, 1)->id, sizeof fid);
  ks_planner_builtin.remember(p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  /* this run's timings spread by 10% */
  ks_planner_builtin.observe(p, wm, fid, 1, 2.0, noisy_result(0.10), &err);
  const ks_wm_node *kids[8];
  int nk = ks_wm_children(wm, fid, kids, 8);
  char v16[KS_WM_ID_MAX] = "", v4[KS_WM_ID_MAX] = "", u2[KS_WM_ID_MAX] = "";
  for (int i = 0; i < nk; i++)
    ks_strlcpy(!strcmp(kids[i]->choice, "VEC=16")  ? v16
               : !strcmp(kids[i]->choice, "VEC=4") ? v4
                                                   : u2,
               kids[i]->id, KS_WM_ID_MAX);
  double pu2 = ks_wm_find(wm, u2)->action.priority;
  double pv4 = ks_wm_find(wm, v4)->action.priority;
  /* 5% above the parent, inside the 10% noise: a tie. It is a valid point
   * (solved, expanded) but prunes no sibling and moves no twin */
  ks_planner_builtin.remember(p, 2, "{\"VEC\":\"16\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v16, 2, 2.1, noisy_result(0.10), &err);
  cr_assert_eq(ks_wm_find(wm, v16)->status, KS_WM_SOLVED);
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_OPEN);
  cr_assert_float_eq(ks_wm_find(wm, u2)->action.priority, pu2, 1e-12);
  cr_assert_float_eq(ks_wm_find(wm, v4)->action.priority, pv4, 1e-12);
  /* 5% below: also a tie, so no demotion */
  ks_planner_builtin.remember(p, 3, "{\"VEC\":\"4\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v4, 3, 1.9, noisy_result(0.10), &err);
  cr_assert_eq(ks_wm_find(wm, v4)->status, KS_WM_SOLVED);
  /* 30% above, beyond the noise: the parent's other steps are superseded */
  ks_planner_builtin.remember(p, 4, "{\"VEC\":\"8\",\"UNROLL\":\"2\"}");
  ks_planner_builtin.observe(p, wm, u2, 4, 2.6, noisy_result(0.10), &err);
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_SOLVED);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

/* The family node and its three children (VEC=16, VEC=4, UNROLL=2) of a run
 * whose timings spread by 10%. */
static void tie_setup(void **p, ks_wm **wm, char fid[KS_WM_ID_MAX],
                      char v16[KS_WM_ID_MAX], char v4[KS_WM_ID_MAX],
                      char u2[KS_WM_ID_MAX]) {
  ks_err err;
  *p = new_planner(&ks_planner_builtin, 1);
  *wm = ks_wm_new("t");
  ks_planner_builtin.init_tree(*p, *wm, &err);
  ks_strlcpy(fid, ks_wm_node_at(*wm, 1)->id, KS_WM_ID_MAX);
  ks_planner_builtin.remember(*p, 1, "{\"VEC\":\"8\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(*p, *wm, fid, 1, 2.0, noisy_result(0.10), &err);
  const ks_wm_node *kids[8];
  int nk = ks_wm_children(*wm, fid, kids, 8);
  v16[0] = v4[0] = u2[0] = 0;
  for (int i = 0; i < nk; i++)
    ks_strlcpy(!strcmp(kids[i]->choice, "VEC=16")  ? v16
               : !strcmp(kids[i]->choice, "VEC=4") ? v4
                                                   : u2,
               kids[i]->id, KS_WM_ID_MAX);
  cr_assert(v16[0] && v4[0] && u2[0]);
}

Test(planner, a_tie_near_the_best_is_settled_for_the_child) {
  void *p;
  ks_wm *wm;
  ks_err err;
  char fid[KS_WM_ID_MAX], v16[KS_WM_ID_MAX], v4[KS_WM_ID_MAX], u2[KS_WM_ID_MAX],
      node[KS_WM_ID_MAX];
  int64_t cand = 0, other = 0;
  tie_setup(&p, &wm, fid, v16, v4, u2);
  /* nothing is pending before a tie */
  cr_assert_not(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  /* 5% above the parent inside 10% noise: a tie that decides the next step
   * (it is the run's best), so the planner asks for it to be settled */
  ks_planner_builtin.remember(p, 2, "{\"VEC\":\"16\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v16, 2, 2.1, noisy_result(0.10), &err);
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_OPEN);
  cr_assert(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  cr_assert_str_eq(node, v16);
  cr_assert_eq(cand, 2);
  cr_assert_eq(other, 1);
  cr_assert_not(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other),
                "asked once");
  /* paired, the child is 4% faster: it supersedes the parent's steps on
   * other decisions (UNROLL=2) as an outright win would; VEC=4 stays */
  cr_assert_eq(ks_planner_builtin.settle(p, wm, v16, 1.04, &err), KS_OK);
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_PRUNED);
  cr_assert_eq(ks_wm_find(wm, v4)->status, KS_WM_OPEN);
  const ks_wm_node *gk[8];
  cr_assert_eq(ks_wm_children(wm, v16, gk, 8), 1);
  cr_assert_eq(gk[0]->status, KS_WM_OPEN, "the child's own steps go on");
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, a_tie_settled_for_the_parent_drops_the_childs_steps) {
  void *p;
  ks_wm *wm;
  ks_err err;
  char fid[KS_WM_ID_MAX], v16[KS_WM_ID_MAX], v4[KS_WM_ID_MAX], u2[KS_WM_ID_MAX],
      node[KS_WM_ID_MAX];
  int64_t cand = 0, other = 0;
  tie_setup(&p, &wm, fid, v16, v4, u2);
  ks_planner_builtin.remember(p, 2, "{\"VEC\":\"16\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v16, 2, 2.1, noisy_result(0.10), &err);
  cr_assert(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  /* paired, the child is 3% slower: its pending step (UNROLL=2 from VEC=16)
   * is dropped; the parent's UNROLL=2 step covers that decision */
  double pv4 = ks_wm_find(wm, v4)->action.priority;
  cr_assert_eq(ks_planner_builtin.settle(p, wm, v16, 0.97, &err), KS_OK);
  const ks_wm_node *gk[8];
  cr_assert_eq(ks_wm_children(wm, v16, gk, 8), 1);
  cr_assert_eq(gk[0]->status, KS_WM_PRUNED);
  cr_assert_eq(ks_wm_find(wm, u2)->status, KS_WM_OPEN);
  /* evidence against VEC=16 moves the other VEC choice by half of it */
  cr_assert(ks_wm_find(wm, v4)->action.priority < pv4);
  /* within the margin, or not timed: the tie stands, nothing moves */
  char v4c[KS_WM_ID_MAX];
  ks_strlcpy(v4c, v4, sizeof v4c);
  ks_planner_builtin.remember(p, 3, "{\"VEC\":\"4\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v4c, 3, 1.95, noisy_result(0.10), &err);
  cr_assert(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  cr_assert_str_eq(node, v4c);
  cr_assert_eq(ks_planner_builtin.settle(p, wm, v4c, 1.005, &err), KS_OK);
  cr_assert_eq(ks_planner_builtin.settle(p, wm, v4c, 0, &err), KS_OK);
  cr_assert_eq(ks_wm_children(wm, v4c, gk, 8), 1);
  cr_assert_eq(gk[0]->status, KS_WM_OPEN);
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}

Test(planner, ties_far_below_the_best_or_replayed_are_not_settled) {
  void *p;
  ks_wm *wm;
  ks_err err;
  char fid[KS_WM_ID_MAX], v16[KS_WM_ID_MAX], v4[KS_WM_ID_MAX], u2[KS_WM_ID_MAX],
      node[KS_WM_ID_MAX];
  int64_t cand = 0, other = 0;
  tie_setup(&p, &wm, fid, v16, v4, u2);
  /* UNROLL=2 beats the family outright: the run's best is now 3.0 */
  ks_planner_builtin.remember(p, 2, "{\"VEC\":\"8\",\"UNROLL\":\"2\"}");
  ks_planner_builtin.observe(p, wm, u2, 2, 3.0, noisy_result(0.10), &err);
  /* VEC=16 ties its parent (2.0) far below the best: nothing to settle */
  ks_planner_builtin.remember(p, 3, "{\"VEC\":\"16\",\"UNROLL\":\"1\"}");
  ks_planner_builtin.observe(p, wm, v16, 3, 2.05, noisy_result(0.10), &err);
  cr_assert_not(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  /* a replayed evaluation (resume: no result) queues nothing either */
  const ks_wm_node *gk[8];
  cr_assert_eq(ks_wm_children(wm, u2, gk, 8), 2);
  char g0[KS_WM_ID_MAX];
  ks_strlcpy(g0, gk[0]->id, sizeof g0);
  ks_planner_builtin.remember(p, 4, "{\"VEC\":\"16\",\"UNROLL\":\"2\"}");
  ks_planner_builtin.observe(p, wm, g0, 4, 3.05, NULL, &err);
  cr_assert_not(ks_planner_builtin.pending_tie(p, wm, node, &cand, &other));
  cr_assert_null(ks_planner_random.pending_tie, "random never settles");
  ks_wm_free(wm);
  ks_planner_builtin.destroy(p);
}
