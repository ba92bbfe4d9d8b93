/* world_model_select.c — which plan to try next (DESIGN.md "World model",
 * Selection). The frontier is the open nodes whose parent is solved or the
 * root (split group headers are transparent). Nodes are ranked by
 *   key = priority + w * sqrt(ln(1 + A(parent)) / (1 + A(node)))
 * where A(x) sums attempts over x's subtree: UCT's exploration term, so that
 * with w > 0 a branch that has eaten many attempts yields to untried siblings.
 * Ties go to lower difficulty, then to a hash of (seed, id): reproducible for
 * a seed, independent of pointer values and storage order. */
#include "search/world_model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A parent lets its open children be tried when it is the root, solved, or
 * a live split header whose own parent lets them. */
static bool parent_eligible(const ks_wm_node *p) {
  while (p) {
    if (!p->up)
      return true;
    if (!p->split)
      return p->status == KS_WM_SOLVED;
    if (p->status != KS_WM_OPEN)
      return false;
    p = p->up;
  }
  return false;
}

bool ks_wm_on_frontier(const ks_wm_node *n) {
  return n && n->up && n->status == KS_WM_OPEN && !n->split &&
         parent_eligible(n->up);
}

int ks_wm_frontier(const ks_wm *wm, const ks_wm_node **out, int max) {
  int k = 0;
  for (int i = 0; wm && i < wm->n; i++)
    if (ks_wm_on_frontier(wm->nodes[i])) {
      if (k < max)
        out[k] = wm->nodes[i];
      k++;
    }
  return k;
}

static uint64_t mix64(uint64_t x) { /* splitmix64 finalizer */
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

static uint64_t tie_hash(uint64_t seed, const char *id) {
  uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a */
  for (const unsigned char *c = (const unsigned char *)id; *c; c++)
    h = (h ^ *c) * 0x100000001B3ULL;
  return mix64(h ^ mix64(seed));
}

typedef struct ranked {
  const ks_wm_node *n;
  double key;
  uint64_t tie;
} ranked;

static int cmp_ranked(const void *pa, const void *pb) {
  const ranked *a = pa, *b = pb;
  /* Keys within a rounding error count as equal, so that the documented
   * tie-breaks apply to priorities like 0.7 written two different ways. */
  if (fabs(a->key - b->key) > 1e-9)
    return a->key > b->key ? -1 : 1;
  if (a->n->action.difficulty != b->n->action.difficulty)
    return a->n->action.difficulty < b->n->action.difficulty ? -1 : 1;
  if (a->tie != b->tie)
    return a->tie < b->tie ? -1 : 1;
  return strcmp(a->n->id, b->n->id);
}

int ks_wm_rank(const ks_wm *wm, double explore_weight, uint64_t seed,
               const ks_wm_node **out, int max) {
  int total = ks_wm_frontier(wm, NULL, 0);
  if (total == 0 || max <= 0)
    return total;
  double w =
      explore_weight > 0 && isfinite(explore_weight) ? explore_weight : 0.0;
  double *sub = NULL;
  if (w > 0) { /* attempts per subtree, by storage position */
    sub = calloc((size_t)wm->n, sizeof *sub);
    if (!sub)
      abort();
    for (int i = 0; i < wm->n; i++)
      for (const ks_wm_node *p = wm->nodes[i]; p; p = p->up)
        sub[p->pos] += wm->nodes[i]->attempts;
  }
  ranked *r = malloc(sizeof *r * (size_t)total);
  if (!r)
    abort();
  int k = 0;
  for (int i = 0; i < wm->n; i++) {
    const ks_wm_node *n = wm->nodes[i];
    if (!ks_wm_on_frontier(n))
      continue;
    double key = n->action.priority;
    if (sub)
      key += w * sqrt(log1p(sub[n->up->pos]) / (1.0 + sub[n->pos]));
    r[k++] = (ranked){n, key, tie_hash(seed, n->id)};
  }
  qsort(r, (size_t)total, sizeof *r, cmp_ranked);
  for (int i = 0; i < total && i < max; i++)
    out[i] = r[i].n;
  free(r);
  free(sub);
  return total;
}

const ks_wm_node *ks_wm_select(const ks_wm *wm, double explore_weight,
                               uint64_t seed) {
  const ks_wm_node *best = NULL;
  return ks_wm_rank(wm, explore_weight, seed, &best, 1) > 0 ? best : NULL;
}
