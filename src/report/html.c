/* html.c — the report page (DESIGN.md: Report), drawn from the facts of
 * facts.c alone: header and notes, progress chart, world-model tree, roofline
 * chart, top candidates, best kernel and its diff, evaluations, LLM calls,
 * machine, roofline and command line. No script and nothing loaded: the
 * Content-Security-Policy forbids every fetch, styles are inline, folding
 * is <details>. Every string from the run is escaped (candidate code and
 * LLM text are hostile). The tree and the kernel sections are in
 * html_tree.c. */
#include "report/html_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char k_style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "margin:0;background:#f6f7f9;color:#1d2330}"
    "main{max-width:1180px;margin:0 auto;padding:18px 22px 60px}"
    "h1{font-size:22px;margin:6px 0 4px}h2{font-size:17px;margin:26px 0 8px;"
    "border-bottom:1px solid #d5d9e0;padding-bottom:4px}"
    ".sub{color:#535b6b}.badge{display:inline-block;padding:1px 8px;"
    "border-radius:10px;color:#fff;font-size:12px;font-weight:600;"
    "vertical-align:middle}"
    ".notes{background:#fff8e1;border:1px solid #f0d68a;border-radius:6px;"
    "padding:8px 14px;margin:12px 0}.notes li{margin:3px 0}"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}"
    ".card{background:#fff;border:1px solid #dde1e7;border-radius:8px;"
    "padding:8px 14px;min-width:120px}.card b{display:block;font-size:20px}"
    ".card span{color:#535b6b;font-size:12px}"
    "svg.chart{background:#fff;border:1px solid #dde1e7;border-radius:8px;"
    "width:100%;max-width:1000px;height:auto;display:block}"
    ".frame{fill:none;stroke:#c3c8d1}.grid{stroke:#eceef2}"
    ".tick{font-size:11px;fill:#535b6b}.axis{font-size:12px;fill:#1d2330}"
    ".empty{font-size:14px;fill:#7a8190}.ref{stroke:#7a8190;"
    "stroke-dasharray:4 4}.best{fill:none;stroke:#1a73e8;stroke-width:2.5}"
    ".pt{stroke:#fff;stroke-width:1}.roof{fill:none;stroke:#b3261e;"
    "stroke-width:2.5}.wpt{fill:#00897b;stroke:#fff}"
    ".wlabel{font-size:11px;fill:#00695c}"
    ".legend span{margin-right:14px;font-size:12px}.legend i{display:"
    "inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}"
    "table{border-collapse:collapse;background:#fff;font-size:13px;"
    "margin:6px 0}th,td{border:1px solid #dde1e7;padding:3px 8px;"
    "text-align:left;vertical-align:top}th{background:#eef1f5}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "code,pre{font:12px/1.4 ui-monospace,'DejaVu Sans Mono',Menlo,monospace}"
    "pre{background:#fff;border:1px solid #dde1e7;border-radius:6px;"
    "padding:8px 10px;overflow:auto;max-height:560px;margin:6px 0}"
    "details.node{margin:2px 0 2px 18px;border-left:2px solid #dde1e7;"
    "padding-left:8px}details.node>summary{cursor:pointer;padding:2px 0}"
    "details.node.bestpath{border-left-color:#1565c0}"
    ".nbody{color:#3a4151;font-size:13px;margin:2px 0 6px 16px}"
    ".star{color:#e6a700;font-weight:700}"
    ".d-add{background:#e6f4ea;display:block}.d-del{background:#fdecea;"
    "display:block}.d-skip{color:#7a8190;display:block;font-style:italic}"
    ".d-same{display:block}";

double ks_hnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *ks_hstr(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

void ks_hbadge(ks_buf *b, const char *status) {
  ks_buf_printf(b, "<span class=\"badge\" style=\"background:%s\">",
                ks_report_status_colour(status));
  ks_html_esc(b, status);
  ks_buf_puts(b, "</span>");
}

/* A JSON value as compact text, escaped. */
void ks_hjson(ks_buf *b, const json_t *v) {
  char *s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
                                  JSON_REAL_PRECISION(6))
              : NULL;
  ks_html_esc(b, s ? s : "");
  free(s);
}

/* "K=V K=V" of a params object. */
void ks_hparams(ks_buf *b, const json_t *params) {
  const char *k;
  const json_t *v;
  bool first = true;
  json_object_foreach((json_t *)params, k, v) {
    if (!first)
      ks_buf_puts(b, " ");
    first = false;
    ks_html_esc(b, k);
    ks_buf_puts(b, "=");
    if (json_is_string(v))
      ks_html_esc(b, json_string_value(v));
    else
      ks_hjson(b, v);
  }
}

static void time_ns(ks_buf *b, double ns) {
  if (!isfinite(ns))
    ks_buf_puts(b, "–");
  else if (ns < 1e3)
    ks_buf_printf(b, "%.0f ns", ns);
  else if (ns < 1e6)
    ks_buf_printf(b, "%.1f µs", ns / 1e3);
  else
    ks_buf_printf(b, "%.2f ms", ns / 1e6);
}

static void fnum(ks_buf *b, double v, const char *fmt) {
  if (isfinite(v))
    ks_buf_printf(b, fmt, v);
  else
    ks_buf_puts(b, "–");
}

static void when(ks_buf *b, double t) {
  if (!isfinite(t) || t <= 0) {
    ks_buf_puts(b, "–");
    return;
  }
  time_t s = (time_t)t;
  struct tm tm;
  char out[32];
  gmtime_r(&s, &tm);
  strftime(out, sizeof out, "%Y-%m-%d %H:%M:%S UTC", &tm);
  ks_buf_puts(b, out);
}

static void axes_text(ks_buf *b, const json_t *axes) {
  const char *k;
  const json_t *v;
  bool first = true;
  json_object_foreach((json_t *)axes, k, v) {
    ks_buf_puts(b, first ? "" : " ");
    first = false;
    ks_html_esc(b, k);
    ks_buf_printf(b, "=%lld", (long long)json_integer_value(v));
  }
}

static void header(ks_buf *b, const json_t *f) {
  const json_t *run = json_object_get(f, "run");
  const json_t *cnt = json_object_get(f, "counts");
  const json_t *cfg = json_object_get(run, "config");
  const char *state = ks_hstr(f, "state");
  ks_buf_puts(b, "<h1>ksearch report: ");
  ks_html_esc(b, json_is_object(run) ? ks_hstr(run, "task") : "(no run)");
  ks_buf_puts(b, " on ");
  ks_html_esc(b, json_is_object(run) ? ks_hstr(run, "backend") : "?");
  ks_buf_puts(b, " ");
  ks_buf_printf(b,
                "<span class=\"badge\" id=\"state\" style=\"background:%s\">",
                !strcmp(state, "finished")      ? "#2e7d32"
                : !strcmp(state, "in progress") ? "#1565c0"
                                                : "#ef6c00");
  ks_html_esc(b, state);
  const char *stopped = ks_hstr(run, "stopped_because");
  if (*stopped && strcmp(state, "in progress") && strcmp(state, stopped)) {
    ks_buf_puts(b, ": ");
    ks_html_esc(b, stopped);
  }
  ks_buf_puts(b, "</span></h1>\n<div class=\"sub\">planner ");
  ks_html_esc(b, ks_hstr(cfg, "planner"));
  ks_buf_printf(b, " · budget %lld · seed %lld · threads %lld · started ",
                (long long)json_integer_value(json_object_get(cfg, "budget")),
                (long long)json_integer_value(json_object_get(run, "seed")),
                (long long)json_integer_value(json_object_get(cfg, "threads")));
  when(b, ks_hnum(run, "created"));
  ks_buf_puts(b, " · page written ");
  when(b, ks_hnum(f, "generated"));
  ks_buf_puts(b, "<br>run folder <code>");
  ks_html_esc(b, ks_hstr(f, "run_dir"));
  ks_buf_puts(b, "</code></div>\n");
  const json_t *notes = json_object_get(f, "notes");
  if (json_array_size(notes)) {
    ks_buf_puts(b, "<div class=\"notes\" id=\"notes\"><ul>");
    size_t i;
    const json_t *n;
    json_array_foreach(notes, i, n) {
      ks_buf_puts(b, "<li>");
      ks_html_esc(b, json_string_value(n));
      ks_buf_puts(b, "</li>");
    }
    ks_buf_puts(b, "</ul></div>\n");
  }
  const json_t *best = json_object_get(f, "best");
  ks_buf_puts(b, "<div class=\"cards\">");
  if (json_is_object(best))
    ks_buf_printf(
        b,
        "<div class=\"card\"><b>%.2fx</b><span>best score "
        "(candidate %lld)</span></div>",
        ks_hnum(best, "score"),
        (long long)json_integer_value(json_object_get(best, "candidate_id")));
  else
    ks_buf_puts(b, "<div class=\"card\"><b>–</b><span>no correct kernel "
                   "yet</span></div>");
  static const char *const keys[][2] = {{"evaluations", "evaluations"},
                                        {"correct", "correct"},
                                        {"failed", "failed"},
                                        {"candidates", "candidates"},
                                        {"llm_calls", "LLM calls"}};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    ks_buf_printf(
        b, "<div class=\"card\"><b>%lld</b><span>%s</span></div>",
        (long long)json_integer_value(json_object_get(cnt, keys[i][0])),
        keys[i][1]);
  const json_t *pts = json_object_get(f, "roofline_points");
  double rf = NAN;
  size_t i;
  const json_t *p;
  json_array_foreach(pts, i, p) {
    double v = ks_hnum(p, "roofline_fraction");
    if (isfinite(v) && (!isfinite(rf) || v > rf))
      rf = v;
  }
  if (isfinite(rf))
    ks_buf_printf(b,
                  "<div class=\"card\"><b>%.0f%%</b><span>best roofline "
                  "fraction</span></div>",
                  100 * rf);
  ks_buf_puts(b, "</div>\n");
}

static void progress(ks_buf *b, const json_t *f) {
  ks_buf_puts(b, "<h2 id=\"s-progress\">Progress</h2>\n");
  ks_svg_progress(b, f);
  ks_buf_puts(b, "<div class=\"legend\">");
  const char *k;
  const json_t *v;
  json_object_foreach(json_object_get(f, "statuses"), k, v) {
    ks_buf_printf(b, "<span><i style=\"background:%s\"></i>",
                  ks_report_status_colour(k));
    ks_html_esc(b, k);
    ks_buf_printf(b, " %lld</span>", (long long)json_integer_value(v));
  }
  ks_buf_puts(b, "<span><i style=\"background:#1a73e8;border-radius:0;"
                 "height:3px\"></i>best so far</span></div>\n");
}

static void roofline(ks_buf *b, const json_t *f) {
  ks_buf_puts(b, "<h2 id=\"s-roofline\">Roofline</h2>\n");
  ks_svg_roofline(b, f);
  const json_t *pts = json_object_get(f, "roofline_points");
  if (!json_array_size(pts))
    return;
  ks_buf_puts(b, "<table id=\"roofline-points\"><tr><th>workload</th>"
                 "<th>axes</th><th>fastest</th><th>candidate</th>"
                 "<th>speedup</th><th>GB/s</th><th>GFLOP/s</th>"
                 "<th>intensity</th><th>roofline fraction</th></tr>\n");
  size_t i;
  const json_t *p;
  json_array_foreach(pts, i, p) {
    ks_buf_printf(
        b, "<tr><td>w%lld</td><td>",
        (long long)json_integer_value(json_object_get(p, "workload")));
    axes_text(b, json_object_get(p, "axes"));
    ks_buf_puts(b, "</td><td class=\"n\">");
    time_ns(b, ks_hnum(p, "time_ns_min"));
    ks_buf_printf(
        b, "</td><td class=\"n\">%lld</td><td class=\"n\">",
        (long long)json_integer_value(json_object_get(p, "candidate_id")));
    fnum(b, ks_hnum(p, "speedup"), "%.2fx");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, ks_hnum(p, "gbps"), "%.2f");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, ks_hnum(p, "gflops"), "%.2f");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, ks_hnum(p, "intensity"), "%.3g");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, 100 * ks_hnum(p, "roofline_fraction"), "%.1f%%");
    ks_buf_puts(b, "</td></tr>\n");
  }
  ks_buf_puts(b, "</table>\n");
}

static void top(ks_buf *b, const json_t *f) {
  ks_buf_puts(b, "<h2 id=\"s-top\">Top candidates</h2>\n");
  const json_t *top = json_object_get(f, "top");
  if (!json_array_size(top)) {
    ks_buf_puts(b, "<p class=\"sub\">No correct candidate yet.</p>\n");
    return;
  }
  const json_t *first = json_array_get(top, 0);
  const json_t *wls = json_object_get(first, "workloads");
  ks_buf_puts(b, "<table id=\"top\"><tr><th>#</th><th>candidate</th>"
                 "<th>node</th><th>score</th><th>plan</th><th>parameters</th>");
  size_t i, j;
  const json_t *t, *w;
  json_array_foreach(wls, j, w) {
    ks_buf_printf(b, "<th title=\"");
    axes_text(b, json_object_get(w, "axes"));
    ks_buf_printf(b, "\">w%zu: fastest · roofline</th>", j);
  }
  ks_buf_puts(b, "</tr>\n");
  json_array_foreach(top, i, t) {
    ks_buf_printf(
        b,
        "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
        "<td>",
        (long long)json_integer_value(json_object_get(t, "rank")),
        (long long)json_integer_value(json_object_get(t, "candidate_id")));
    ks_html_esc(b, ks_hstr(t, "node_id"));
    ks_buf_printf(b, "</td><td class=\"n\"><b>%.3fx</b></td><td>",
                  ks_hnum(t, "score"));
    size_t k;
    const json_t *s;
    json_array_foreach(json_object_get(t, "plan"), k, s) {
      ks_buf_puts(b, k ? "<br>" : "");
      ks_html_esc(b, json_string_value(s));
    }
    ks_buf_puts(b, "</td><td><code>");
    ks_hparams(b, json_object_get(t, "params"));
    ks_buf_puts(b, "</code></td>");
    json_array_foreach(json_object_get(t, "workloads"), j, w) {
      ks_buf_puts(b, "<td class=\"n\">");
      time_ns(b, ks_hnum(w, "time_ns_min"));
      ks_buf_puts(b, " · ");
      fnum(b, 100 * ks_hnum(w, "roofline_fraction"), "%.0f%%");
      ks_buf_puts(b, "</td>");
    }
    ks_buf_puts(b, "</tr>\n");
  }
  ks_buf_puts(b, "</table>\n");
}

static void evaluations(ks_buf *b, const json_t *f) {
  const json_t *ev = json_object_get(f, "evaluations");
  size_t n = json_array_size(ev);
  const json_t *cnt = json_object_get(f, "counts");
  bool failures_only =
      n && json_integer_value(json_object_get(cnt, "correct")) == 0;
  ks_buf_printf(b, "<h2 id=\"s-evaluations\">Evaluations (%zu)</h2>\n", n);
  if (!n) {
    ks_buf_puts(b, "<p class=\"sub\">None finished.</p>\n");
    return;
  }
  ks_buf_printf(b,
                "<details%s><summary>every evaluation, in order, with "
                "the reason of each failure</summary>\n",
                failures_only || n <= 40 ? " open" : "");
  ks_buf_puts(b, "<table id=\"evaluations\"><tr><th>#</th><th>candidate</th>"
                 "<th>node</th><th>status</th><th>score</th>"
                 "<th>best so far</th><th>seconds</th><th>reason</th></tr>\n");
  size_t i;
  const json_t *e;
  json_array_foreach(ev, i, e) {
    ks_buf_printf(
        b,
        "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
        "<td>",
        (long long)json_integer_value(json_object_get(e, "index")),
        (long long)json_integer_value(json_object_get(e, "candidate_id")));
    ks_html_esc(b, ks_hstr(e, "node_id"));
    ks_buf_puts(b, "</td><td>");
    ks_hbadge(b, ks_hstr(e, "status"));
    ks_buf_printf(b,
                  "</td><td class=\"n\">%.3fx</td><td class=\"n\">%.3fx"
                  "</td><td class=\"n\">",
                  ks_hnum(e, "score"), ks_hnum(e, "best_so_far"));
    fnum(b, ks_hnum(e, "finished") - ks_hnum(e, "started"), "%.1f");
    ks_buf_puts(b, "</td><td>");
    const char *r = ks_hstr(e, "reason");
    size_t len = strlen(r);
    /* a compiler log can be long: its head says what went wrong */
    if (len > 600) {
      char *cut = ks_strdup(r);
      cut[600] = 0;
      ks_html_esc(b, cut);
      free(cut);
      ks_buf_printf(b, " … (%zu more bytes)", len - 600);
    } else {
      ks_html_esc(b, r);
    }
    ks_buf_puts(b, "</td></tr>\n");
  }
  ks_buf_puts(b, "</table></details>\n");
}

static void llm(ks_buf *b, const json_t *f) {
  const json_t *l = json_object_get(f, "llm");
  const json_t *calls = json_object_get(l, "calls");
  if (!json_array_size(calls))
    return;
  ks_buf_printf(b, "<h2 id=\"s-llm\">LLM calls (%zu)</h2>\n<p>",
                json_array_size(calls));
  ks_buf_printf(
      b, "%lld prompt + %lld completion tokens, %.1f s in all; ",
      (long long)json_integer_value(json_object_get(l, "prompt_tokens")),
      (long long)json_integer_value(json_object_get(l, "completion_tokens")),
      ks_hnum(l, "latency_s"));
  const char *k;
  const json_t *v;
  json_object_foreach(json_object_get(l, "by_status"), k, v) {
    ks_html_esc(b, k);
    ks_buf_printf(b, " %lld ", (long long)json_integer_value(v));
  }
  ks_buf_puts(b, "</p>\n<details><summary>every call</summary>"
                 "<table id=\"llm\"><tr><th>#</th><th>prompt</th><th>model"
                 "</th><th>outcome</th><th>prompt tokens</th><th>completion "
                 "tokens</th><th>latency</th></tr>\n");
  size_t i;
  const json_t *c;
  json_array_foreach(calls, i, c) {
    ks_buf_printf(b, "<tr><td class=\"n\">%lld</td><td>",
                  (long long)json_integer_value(json_object_get(c, "id")));
    ks_html_esc(b, ks_hstr(c, "role"));
    ks_buf_puts(b, "</td><td>");
    ks_html_esc(b, ks_hstr(c, "model"));
    ks_buf_puts(b, "</td><td>");
    const char *st = ks_hstr(c, "status");
    ks_buf_printf(b, "<span class=\"badge\" style=\"background:%s\">",
                  !strcmp(st, "ok") || !strcmp(st, "cache_hit") ? "#2e7d32"
                                                                : "#c62828");
    ks_html_esc(b, st);
    ks_buf_puts(b, "</span></td><td class=\"n\">");
    fnum(b, ks_hnum(c, "prompt_tokens"), "%.0f");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, ks_hnum(c, "completion_tokens"), "%.0f");
    ks_buf_puts(b, "</td><td class=\"n\">");
    fnum(b, ks_hnum(c, "latency_s"), "%.2f s");
    ks_buf_puts(b, "</td></tr>\n");
  }
  ks_buf_puts(b, "</table></details>\n");
}

static void run_info(ks_buf *b, const json_t *f) {
  ks_buf_puts(b, "<h2 id=\"s-run\">Machine, roofline and command line</h2>\n");
  const json_t *ctx = json_object_get(f, "context");
  const json_t *run = json_object_get(f, "run");
  ks_buf_puts(b, "<table id=\"run\">");
  if (json_is_object(ctx)) {
    const json_t *rl = json_object_get(ctx, "roofline");
    ks_buf_puts(b, "<tr><th>command line</th><td><code>");
    ks_html_esc(b, ks_hstr(ctx, "command_line"));
    ks_buf_puts(b, "</code></td></tr><tr><th>host</th><td>");
    ks_html_esc(b, ks_hstr(ctx, "host"));
    ks_buf_puts(b, "</td></tr><tr><th>device</th><td>");
    ks_html_esc(b, ks_hstr(rl, "device"));
    ks_buf_puts(b, " (");
    ks_html_esc(b, ks_hstr(rl, "backend"));
    ks_buf_printf(
        b, " backend, %lld threads, ISA ",
        (long long)json_integer_value(json_object_get(rl, "threads")));
    ks_html_esc(b, ks_hstr(rl, "isa"));
    ks_buf_puts(b, ")</td></tr><tr><th>roofline</th><td>");
    ks_buf_printf(b,
                  "bandwidth %.1f GB/s (read %.1f, write %.1f, copy %.1f, "
                  "triad %.1f), peak %.1f GFLOP/s, balance %.2f flop/byte; ",
                  ks_hnum(rl, "bandwidth_gbps"), ks_hnum(rl, "read_gbps"),
                  ks_hnum(rl, "write_gbps"), ks_hnum(rl, "copy_gbps"),
                  ks_hnum(rl, "triad_gbps"), ks_hnum(rl, "peak_gflops"),
                  ks_hnum(rl, "peak_gflops") / ks_hnum(rl, "bandwidth_gbps"));
    ks_html_esc(b, ks_hstr(rl, "source"));
    ks_buf_puts(b, ", ");
    when(b, ks_hnum(rl, "measured_at"));
    ks_buf_printf(
        b, "</td></tr><tr><th>sessions</th><td>%lld</td></tr>",
        (long long)json_integer_value(json_object_get(f, "sessions")));
  } else {
    ks_buf_puts(b, "<tr><th>machine</th><td>not recorded (see the notes)"
                   "</td></tr>");
  }
  ks_buf_puts(b, "<tr><th>config</th><td><code>");
  ks_hjson(b, json_object_get(run, "config"));
  ks_buf_puts(b, "</code></td></tr><tr><th>task hash</th><td><code>");
  ks_html_esc(b, ks_hstr(run, "task_hash"));
  ks_buf_puts(b, "</code></td></tr></table>\n");
  const char *an = ks_hstr(f, "analysis");
  if (*an) {
    ks_buf_puts(b, "<h2 id=\"s-analysis\">Analysis</h2>\n<pre>");
    ks_html_esc(b, an);
    ks_buf_puts(b, "</pre>\n");
  }
}

char *ks_report_html(const json_t *f) {
  ks_buf b;
  ks_buf_init(&b);
  ks_buf_puts(
      &b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" "
          "content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "img-src 'none'; font-src 'none'; script-src 'none'; "
          "connect-src 'none'; base-uri 'none'; form-action 'none'\">\n"
          "<meta name=\"referrer\" content=\"no-referrer\">\n<meta "
          "name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n<meta name=\"generator\" "
          "content=\"ksearch report\">\n<title>ksearch: ");
  const json_t *run = json_object_get(f, "run");
  ks_html_esc(&b, json_is_object(run) ? ks_hstr(run, "task") : "run");
  ks_buf_puts(&b, " (");
  ks_html_esc(&b, ks_hstr(f, "state"));
  ks_buf_puts(&b, ")</title>\n<style>");
  ks_buf_puts(&b, k_style);
  ks_buf_puts(&b, "</style>\n</head>\n<body>\n<main>\n");
  header(&b, f);
  progress(&b, f);
  ks_html_tree(&b, f);
  roofline(&b, f);
  top(&b, f);
  ks_html_best(&b, f);
  evaluations(&b, f);
  llm(&b, f);
  run_info(&b, f);
  ks_buf_puts(&b, "</main>\n</body>\n</html>\n");
  return b.data;
}
