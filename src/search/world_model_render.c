/* world_model_render.c — text views of the world model: a compact, bounded
 * view of the active plan for LLM prompts and logs, and the full indented
 * tree for `ksearch show` (DESIGN.md "Command line", "World model"). Texts
 * from planners are cut on UTF-8 boundaries and flattened to one line so
 * every node is exactly one line. */
#include "search/world_model_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- buffer */

typedef struct sb {
  char *d;
  size_t len, cap;
} sb;

static void sb_printf(sb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->d = ks_wmi_xrealloc(b->d, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->d + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static char *sb_take(sb *b) {
  if (!b->d)
    return ks_wmi_xstrdup("");
  return b->d;
}

/* At most max bytes of s, one line, cut on a UTF-8 boundary ("..." added). */
static const char *cut(const char *s, size_t max, char *buf, size_t bufsz) {
  size_t n = strlen(s);
  if (max + 4 > bufsz)
    max = bufsz - 4;
  bool cutoff = n > max;
  if (cutoff) {
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
      n--;
  }
  for (size_t i = 0; i < n; i++)
    buf[i] = (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') ? ' ' : s[i];
  strcpy(buf + n, cutoff ? "..." : "");
  return buf;
}

/* ---------------------------------------------------------------- lines */

/* "n3 [solved 1.850 #12] algorithm: two-pass | title  p=0.80 d=2 tries=2" */
static void node_line(sb *b, const ks_wm_node *n, bool with_title) {
  char dec[64], cho[96], tit[96], st[96];
  if (n->split)
    snprintf(st, sizeof st, "split%s",
             n->status == KS_WM_PRUNED ? ", pruned" : "");
  else
    snprintf(st, sizeof st, "%s", ks_wm_status_name(n->status));
  if (n->solution.candidate_id > 0) {
    size_t l = strlen(st);
    snprintf(st + l, sizeof st - l, " %.3f #%lld", n->solution.score,
             (long long)n->solution.candidate_id);
  }
  sb_printf(b, "%s [%s] %s: %s", n->id, st,
            cut(n->decision, 40, dec, sizeof dec),
            cut(n->choice, 60, cho, sizeof cho));
  if (with_title && *n->action.title && strcmp(n->action.title, n->choice))
    sb_printf(b, " | %s", cut(n->action.title, 60, tit, sizeof tit));
  if (n->up) {
    sb_printf(b, "  p=%.2f d=%d", n->action.priority, n->action.difficulty);
    if (n->attempts)
      sb_printf(b, " tries=%d", n->attempts);
  }
  sb_printf(b, "\n");
}

static void summary(sb *b, const ks_wm *wm) {
  int count[KS_WM_NSTATUS] = {0}, split = 0;
  for (int i = 0; i < wm->n; i++)
    if (wm->nodes[i]->up) {
      count[wm->nodes[i]->status]++;
      split += wm->nodes[i]->split;
    }
  sb_printf(b, "world model: %d nodes", wm->n);
  const char *sep = " (";
  for (int s = 0; s < KS_WM_NSTATUS; s++)
    if (count[s]) {
      sb_printf(b, "%s%d %s", sep, count[s],
                ks_wm_status_name((ks_wm_status)s));
      sep = ", ";
    }
  if (split)
    sb_printf(b, "%s%d split", sep, split);
  sb_printf(b, "%s; frontier %d", *sep == ',' ? ")" : "",
            ks_wm_frontier(wm, NULL, 0));
  const ks_wm_node *best = ks_wm_best_solved(wm);
  if (best)
    sb_printf(b, "; best %s score %.3f (candidate %lld)", best->id,
              best->solution.score, (long long)best->solution.candidate_id);
  sb_printf(b, "\n");
}

/* ---------------------------------------------------------------- compact */

static int cmp_sibling(const void *pa, const void *pb) {
  const ks_wm_node *a = *(const ks_wm_node *const *)pa;
  const ks_wm_node *b = *(const ks_wm_node *const *)pb;
  double sa = a->solution.candidate_id > 0 ? a->solution.score : -1;
  double sb_ = b->solution.candidate_id > 0 ? b->solution.score : -1;
  if (sa != sb_)
    return sa > sb_ ? -1 : 1;
  if (a->action.priority != b->action.priority)
    return a->action.priority > b->action.priority ? -1 : 1;
  return a->pos - b->pos;
}

static void siblings(sb *b, const ks_wm *wm, const ks_wm_node *n, int max,
                     int indent) {
  int k = 0;
  const ks_wm_node **sib = ks_wmi_xmalloc(sizeof *sib * (size_t)wm->n);
  for (int i = 0; i < wm->n; i++)
    if (wm->nodes[i]->up == n->up && wm->nodes[i] != n)
      sib[k++] = wm->nodes[i];
  qsort(sib, (size_t)k, sizeof *sib, cmp_sibling);
  int shown = k < max ? k : max;
  for (int i = 0; i < shown; i++) {
    sb_printf(b, "%*s  also: ", indent, "");
    node_line(b, sib[i], false);
  }
  if (k > shown) {
    int count[KS_WM_NSTATUS] = {0};
    for (int i = shown; i < k; i++)
      count[sib[i]->status]++;
    sb_printf(b, "%*s  also: %d %s sibling%s (", indent, "", k - shown,
              shown ? "more" : "other", k - shown == 1 ? "" : "s");
    const char *sep = "";
    for (int s = 0; s < KS_WM_NSTATUS; s++)
      if (count[s]) {
        sb_printf(b, "%s%d %s", sep, count[s],
                  ks_wm_status_name((ks_wm_status)s));
        sep = ", ";
      }
    sb_printf(b, ")\n");
  }
  free(sib);
}

enum { LEVELS_MAX = 12, INDENT_MAX = 24 };

static char *compact(const ks_wm *wm, const ks_wm_node *active,
                     const char *missing, int max_sib, int levels) {
  sb b = {0};
  summary(&b, wm);
  if (missing)
    sb_printf(&b, "(no node '%.63s'; showing %s)\n", missing, active->id);
  const ks_wm_node *path[LEVELS_MAX + 1];
  int depth = active->depth, shown = 0, skipped = 0;
  /* Keep the root and the `levels - 1` nodes nearest the active one. */
  const ks_wm_node *p = active;
  for (int d = depth; d >= 0 && p; d--, p = p->up) {
    if (d == 0 || depth - d < levels - 1)
      path[shown++] = p;
    else
      skipped++;
  }
  sb_printf(&b, "plan to %s (%d step%s):\n", active->id, depth,
            depth == 1 ? "" : "s");
  for (int i = shown - 1; i >= 0; i--) {
    const ks_wm_node *n = path[i];
    int level = shown - 1 - i;
    int indent = 2 * level < INDENT_MAX ? 2 * level : INDENT_MAX;
    sb_printf(&b, "%*s%s", indent, "", n == active ? "> " : "");
    node_line(&b, n, n == active);
    if (n->up)
      siblings(&b, wm, n, max_sib, indent);
    if (level == 0 && skipped)
      sb_printf(&b, "  ... %d level%s not shown\n", skipped,
                skipped == 1 ? "" : "s");
  }
  return sb_take(&b);
}

char *ks_wm_render_compact(const ks_wm *wm, const char *active_id,
                           int max_siblings) {
  const ks_wm_node *active = active_id ? ks_wmi_get(wm, active_id) : NULL;
  const char *missing = active_id && !active ? active_id : NULL;
  if (!active)
    active = ks_wm_best_solved(wm);
  if (!active)
    active = ks_wm_root(wm);
  if (!active)
    return ks_wmi_xstrdup("world model: empty\n");
  if (max_siblings < 0)
    max_siblings = 0;
  if (max_siblings > 10)
    max_siblings = 10;
  /* Fewer siblings first, then fewer levels, until it fits. */
  for (int levels = LEVELS_MAX; levels >= 1; levels--)
    for (int sib = max_siblings; sib >= 0; sib--) {
      char *s = compact(wm, active, missing, sib, levels);
      size_t len = strlen(s);
      if (len < KS_WM_COMPACT_MAX)
        return s;
      if (levels == 1 && sib == 0) { /* cannot happen: lines are bounded */
        size_t n = KS_WM_COMPACT_MAX - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
          n--;
        s[n] = '\0';
        return s;
      }
      free(s);
    }
  return NULL; /* unreachable */
}

/* ---------------------------------------------------------------- tree */

char *ks_wm_render_tree(const ks_wm *wm) {
  sb b = {0};
  summary(&b, wm);
  int n = wm->n;
  int *first = ks_wmi_xmalloc(sizeof(int) * (size_t)n);
  int *next = ks_wmi_xmalloc(sizeof(int) * (size_t)n);
  int *stack = ks_wmi_xmalloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++)
    first[i] = next[i] = -1;
  for (int i = n - 1; i >= 0; i--) { /* prepend: keeps storage order */
    const ks_wm_node *p = wm->nodes[i]->up;
    if (p) {
      next[i] = first[p->pos];
      first[p->pos] = i;
    }
  }
  const ks_wm_node *root = ks_wm_root(wm);
  int top = 0;
  if (root)
    stack[top++] = root->pos;
  while (top > 0) {
    int i = stack[--top];
    const ks_wm_node *nd = wm->nodes[i];
    int indent = 2 * nd->depth;
    sb_printf(&b, "%*s", indent, "");
    node_line(&b, nd, true);
    /* Push children in reverse so the first child prints first. */
    int kids = 0;
    for (int c = first[i]; c >= 0; c = next[c])
      kids++;
    int at = top + kids;
    for (int c = first[i]; c >= 0; c = next[c])
      stack[--at] = c;
    top += kids;
  }
  free(first);
  free(next);
  free(stack);
  return sb_take(&b);
}
