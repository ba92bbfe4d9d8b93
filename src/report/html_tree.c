/* html_tree.c — two sections of the report page (html.c): the world model
 * as nested <details> (each node's status, score, attempts and plan; the
 * best path open and marked) and the best kernel: its plan, parameters,
 * source and its diff against its parent (the parent node's best candidate,
 * else the reference). */
#include "report/html_internal.h"

#include <math.h>
#include <string.h>

#define TREE_MAX_DEPTH 64

static void node_line(ks_buf *b, const json_t *n, bool is_best) {
  const json_t *sol = json_object_get(n, "solution");
  const json_t *act = json_object_get(n, "action");
  ks_buf_puts(b, "<summary>");
  if (is_best)
    ks_buf_puts(b, "<span class=\"star\" title=\"best kernel\">★</span> ");
  ks_hbadge(b, ks_hstr(n, "status"));
  ks_buf_puts(b, " <b>");
  ks_html_esc(b, ks_hstr(n, "id"));
  ks_buf_puts(b, "</b> ");
  ks_html_esc(b, ks_hstr(n, "decision"));
  ks_buf_puts(b, ": ");
  ks_html_esc(b, ks_hstr(n, "choice"));
  if (json_is_true(json_object_get(n, "split")))
    ks_buf_puts(b, " <i>(split)</i>");
  double score = ks_hnum(sol, "score");
  if (json_integer_value(json_object_get(sol, "candidate_id")) > 0)
    ks_buf_printf(
        b, " — <b>%.3fx</b> (candidate %lld)", score,
        (long long)json_integer_value(json_object_get(sol, "candidate_id")));
  if (strcmp(ks_hstr(n, "id"), "root"))
    ks_buf_printf(b, " · %lld attempts · priority %.2f",
                  (long long)json_integer_value(json_object_get(n, "attempts")),
                  ks_hnum(act, "priority"));
  ks_buf_puts(b, "</summary>\n");
}

static void node_body(ks_buf *b, const json_t *n) {
  const json_t *act = json_object_get(n, "action");
  ks_buf_puts(b, "<div class=\"nbody\">");
  const char *d = ks_hstr(act, "description");
  if (*d) {
    ks_html_esc(b, d);
    ks_buf_puts(b, "<br>");
  }
  const json_t *params = json_object_get(n, "params");
  if (json_object_size(params)) {
    ks_buf_puts(b, "params <code>");
    ks_hparams(b, params);
    ks_buf_puts(b, "</code><br>");
  }
  const json_t *c = json_object_get(n, "concepts");
  if (json_array_size(c)) {
    ks_buf_puts(b, "concepts ");
    size_t i;
    const json_t *v;
    json_array_foreach(c, i, v) {
      ks_buf_puts(b, i ? ", " : "");
      ks_html_esc(b, json_string_value(v));
    }
    ks_buf_puts(b, "<br>");
  }
  const json_t *ev = json_object_get(n, "evidence");
  if (json_array_size(ev)) {
    ks_buf_puts(b, "evidence: candidates ");
    ks_hjson(b, ev);
    ks_buf_puts(b, "<br>");
  }
  const char *notes = ks_hstr(n, "notes");
  if (*notes && strcmp(ks_hstr(n, "id"), "root")) {
    ks_buf_puts(b, "notes: ");
    ks_html_esc(b, notes);
  }
  ks_buf_puts(b, "</div>\n");
}

static void subtree(ks_buf *b, const json_t *nodes, const json_t *n,
                    const char *best, int depth) {
  const char *id = ks_hstr(n, "id");
  bool on_path = json_is_true(json_object_get(n, "on_best_path"));
  ks_buf_printf(b, "<details class=\"node%s\"%s>", on_path ? " bestpath" : "",
                on_path || depth == 0 ? " open" : "");
  node_line(b, n, best && !strcmp(best, id));
  if (depth > 0)
    node_body(b, n);
  if (depth < TREE_MAX_DEPTH) {
    size_t i;
    const json_t *c;
    json_array_foreach(nodes, i, c) if (!strcmp(ks_hstr(c, "parent"), id))
        subtree(b, nodes, c, best, depth + 1);
  }
  ks_buf_puts(b, "</details>\n");
}

void ks_html_tree(ks_buf *b, const json_t *f) {
  const json_t *tree = json_object_get(f, "tree");
  const json_t *nodes = json_object_get(tree, "nodes");
  ks_buf_printf(b, "<h2 id=\"s-tree\">World model (%zu nodes)</h2>\n",
                json_array_size(nodes));
  const json_t *root = NULL;
  size_t i;
  const json_t *n;
  int counts[8] = {0};
  static const char *const st[] = {"open",   "running",  "solved",
                                   "failed", "too_hard", "pruned"};
  json_array_foreach(nodes, i, n) {
    if (!strcmp(ks_hstr(n, "id"), "root"))
      root = n;
    for (int k = 0; k < 6; k++)
      counts[k] += !strcmp(ks_hstr(n, "status"), st[k]);
  }
  if (!root) {
    ks_buf_puts(b, "<p class=\"sub\">No world model saved yet.</p>\n");
    return;
  }
  ks_buf_puts(b, "<p class=\"sub\">");
  for (int k = 0; k < 6; k++)
    if (counts[k])
      ks_buf_printf(b, "%s %d · ", st[k], counts[k]);
  ks_buf_puts(b, "the best path is open and marked; click a node to fold "
                 "it (from ");
  ks_html_esc(b, ks_hstr(tree, "source"));
  ks_buf_puts(b, ")</p>\n<div id=\"tree\">\n");
  const char *best = json_string_value(json_object_get(tree, "best_node"));
  subtree(b, nodes, root, best, 0);
  ks_buf_puts(b, "</div>\n");
}

static void diff(ks_buf *b, const json_t *parent) {
  const json_t *d = json_object_get(parent, "diff");
  if (!json_is_array(d)) {
    ks_buf_puts(b, "<p class=\"sub\">The sources are too large to diff "
                   "here.</p>\n");
    return;
  }
  if (!json_array_size(d)) {
    ks_buf_puts(b, "<p class=\"sub\">No difference.</p>\n");
    return;
  }
  int add = 0, del = 0;
  size_t i;
  const json_t *l;
  json_array_foreach(d, i, l) {
    const char *op = json_string_value(json_array_get(l, 0));
    add += op && *op == '+';
    del += op && *op == '-';
  }
  ks_buf_printf(b,
                "<p class=\"sub\">%d line%s added, %d removed</p>\n<pre "
                "id=\"diff\">",
                add, add == 1 ? "" : "s", del);
  json_array_foreach(d, i, l) {
    const char *op = json_string_value(json_array_get(l, 0));
    const char *text = json_string_value(json_array_get(l, 1));
    const char *cls = !op          ? "d-same"
                      : *op == '+' ? "d-add"
                      : *op == '-' ? "d-del"
                      : *op == '~' ? "d-skip"
                                   : "d-same";
    ks_buf_printf(b, "<span class=\"%s\">", cls);
    if (op && *op == '~') {
      ks_buf_puts(b, "   … ");
      ks_html_esc(b, text);
    } else {
      ks_buf_puts(b, op && (*op == '+' || *op == '-') ? op : " ");
      ks_buf_puts(b, " ");
      ks_html_esc(b, text);
    }
    ks_buf_puts(b, "</span>");
  }
  ks_buf_puts(b, "</pre>\n");
}

void ks_html_best(ks_buf *b, const json_t *f) {
  ks_buf_puts(b, "<h2 id=\"s-best\">Best kernel</h2>\n");
  const json_t *best = json_object_get(f, "best");
  if (!json_is_object(best)) {
    ks_buf_puts(b, "<p class=\"sub\">No correct kernel yet.</p>\n");
    return;
  }
  ks_buf_printf(
      b, "<p>candidate %lld, node ",
      (long long)json_integer_value(json_object_get(best, "candidate_id")));
  ks_html_esc(b, ks_hstr(best, "node_id"));
  ks_buf_printf(b, ", score <b>%.3fx</b><br>plan: ", ks_hnum(best, "score"));
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(best, "plan"), i, s) {
    ks_buf_puts(b, i ? " → " : "");
    ks_html_esc(b, json_string_value(s));
  }
  ks_buf_puts(b, "<br>parameters: <code>");
  ks_hparams(b, json_object_get(best, "params"));
  ks_buf_puts(b, "</code></p>\n<details><summary>source (parameters baked "
                 "in, as in best/)</summary><pre id=\"best-source\">");
  ks_html_esc(b, ks_hstr(best, "source"));
  ks_buf_puts(b, "</pre></details>\n");
  const json_t *parent = json_object_get(best, "parent");
  if (!json_is_object(parent))
    return;
  if (!strcmp(ks_hstr(parent, "kind"), "candidate")) {
    ks_buf_printf(b, "<h3>Difference from its parent: node ");
    ks_html_esc(b, ks_hstr(parent, "node_id"));
    ks_buf_printf(
        b, "'s best, candidate %lld (%.3fx)</h3>\n",
        (long long)json_integer_value(json_object_get(parent, "candidate_id")),
        ks_hnum(parent, "score"));
  } else {
    ks_buf_puts(b, "<h3>Difference from its parent: the reference (the "
                   "plan starts at the root)</h3>\n");
  }
  diff(b, parent);
}
