/* svg.c — the report's charts, drawn as inline SVG by ksearch itself
 * (DESIGN.md: Report): progress (every evaluation a point coloured by its
 * status, the best score so far as a step line) and the roofline (each
 * workload's fastest correct result against the measured bandwidth and
 * compute roofs, log-log). Each point carries a <title> tooltip. */
#include "ksearch.h"
#include "report/report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 900.0
#define H 300.0
#define ML 60.0 /* margins */
#define MR 20.0
#define MT 20.0
#define MB 45.0

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static void open_svg(ks_buf *b, const char *id, const char *label) {
  ks_buf_printf(b,
                "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" "
                "width=\"%.0f\" height=\"%.0f\" role=\"img\" "
                "aria-label=\"",
                id, W, H, W, H);
  ks_html_esc(b, label);
  ks_buf_puts(b, "\">\n");
}

static void empty_chart(ks_buf *b, const char *id, const char *msg) {
  open_svg(b, id, msg);
  ks_buf_printf(b,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                "class=\"frame\"/>\n<text x=\"%.0f\" y=\"%.0f\" "
                "class=\"empty\" text-anchor=\"middle\">",
                ML, MT, W - ML - MR, H - MT - MB, W / 2, H / 2);
  ks_html_esc(b, msg);
  ks_buf_puts(b, "</text>\n</svg>\n");
}

/* A 1-2-5 step giving about n ticks over range. */
static double nice_step(double range, int n) {
  double raw = range / n, mag = pow(10, floor(log10(raw)));
  double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void axis_labels(ks_buf *b, const char *x, const char *y) {
  ks_buf_printf(b,
                "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" "
                "text-anchor=\"middle\">%s</text>\n",
                ML + (W - ML - MR) / 2, H - 8, x);
  ks_buf_printf(b,
                "<text transform=\"translate(14 %.1f) rotate(-90)\" "
                "class=\"axis\" text-anchor=\"middle\">%s</text>\n",
                MT + (H - MT - MB) / 2, y);
}

void ks_svg_progress(ks_buf *b, const json_t *facts) {
  const json_t *ev = json_object_get(facts, "evaluations");
  size_t n = json_array_size(ev);
  if (n == 0) {
    empty_chart(b, "progress", "no evaluation has finished yet");
    return;
  }
  double ymax = 1.0;
  size_t i;
  const json_t *e;
  json_array_foreach(ev, i, e) {
    double s = jnum(e, "score");
    if (s > ymax)
      ymax = s;
  }
  ymax *= 1.1;
  double pw = W - ML - MR, ph = H - MT - MB;
  double xspan = n > 1 ? (double)(n - 1) : 1;
#define PX(k) (ML + 10 + (pw - 20) * ((double)(k)-1) / xspan)
#define PY(v) (MT + ph - ph * (v) / ymax)
  open_svg(b, "progress", "score of every evaluation and best so far");
  ks_buf_printf(b,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                "class=\"frame\"/>\n",
                ML, MT, pw, ph);
  double step = nice_step(ymax, 5);
  for (double t = 0; t <= ymax + 1e-9; t += step) {
    ks_buf_printf(b,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                  "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tick\" "
                  "text-anchor=\"end\">%gx</text>\n",
                  ML, ML + pw, PY(t), PY(t), ML - 6, PY(t) + 4, t);
  }
  double xstep = nice_step((double)n, 8);
  if (xstep < 1)
    xstep = 1;
  for (double k = 1; k <= (double)n + 1e-9; k += xstep)
    ks_buf_printf(b,
                  "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" "
                  "text-anchor=\"middle\">%.0f</text>\n",
                  PX(k), MT + ph + 16, k);
  /* the reference (1x) */
  ks_buf_printf(b,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                "class=\"ref\"/><text x=\"%.1f\" y=\"%.1f\" "
                "class=\"tick\">reference</text>\n",
                ML, ML + pw, PY(1), PY(1), ML + 4, PY(1) - 4);
  /* best so far: a step line */
  ks_buf_puts(b, "<polyline class=\"best\" points=\"");
  double prev = 0;
  json_array_foreach(ev, i, e) {
    double bs = jnum(e, "best_so_far");
    if (i > 0)
      ks_buf_printf(b, "%.1f,%.1f ", PX(i + 1), PY(prev));
    ks_buf_printf(b, "%.1f,%.1f ", PX(i + 1), PY(bs));
    prev = bs;
  }
  ks_buf_puts(b, "\"/>\n");
  json_array_foreach(ev, i, e) {
    const char *st = json_string_value(json_object_get(e, "status"));
    double s = jnum(e, "score");
    ks_buf_printf(b,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" "
                  "class=\"pt\"><title>",
                  PX(i + 1), PY(isfinite(s) ? s : 0),
                  ks_report_status_colour(st));
    ks_buf_printf(
        b, "#%zu candidate %lld, node ", i + 1,
        (long long)json_integer_value(json_object_get(e, "candidate_id")));
    ks_html_esc(b, json_string_value(json_object_get(e, "node_id")));
    ks_buf_puts(b, ": ");
    ks_html_esc(b, st);
    ks_buf_printf(b, " %.3fx", isfinite(s) ? s : 0);
    ks_buf_puts(b, "</title></circle>\n");
  }
#undef PX
#undef PY
  axis_labels(b, "evaluation", "score (speedup over the reference)");
  ks_buf_puts(b, "</svg>\n");
}

static void log_ticks(ks_buf *b, double lo, double hi, bool x_axis,
                      double (*map)(double, const double *), const double *m) {
  for (double d = pow(10, floor(log10(lo))); d <= hi * 1.0001; d *= 10) {
    if (d < lo * 0.9999)
      continue;
    double p = map(d, m);
    if (x_axis)
      ks_buf_printf(b,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                    "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
                    "class=\"tick\" text-anchor=\"middle\">%g</text>\n",
                    p, p, MT, H - MB, p, H - MB + 16, d);
    else
      ks_buf_printf(b,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                    "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
                    "class=\"tick\" text-anchor=\"end\">%g</text>\n",
                    ML, W - MR, p, p, ML - 6, p + 4, d);
  }
}

/* m = {xlo, xhi, ylo, yhi} in log10 */
static double map_x(double v, const double *m) {
  return ML + (W - ML - MR) * (log10(v) - m[0]) / (m[1] - m[0]);
}
static double map_y(double v, const double *m) {
  return MT + (H - MT - MB) * (1 - (log10(v) - m[2]) / (m[3] - m[2]));
}

void ks_svg_roofline(ks_buf *b, const json_t *facts) {
  const json_t *pts = json_object_get(facts, "roofline_points");
  const json_t *rl =
      json_object_get(json_object_get(facts, "context"), "roofline");
  double bw = jnum(rl, "bandwidth_gbps"), peak = jnum(rl, "peak_gflops");
  bool roofs = bw > 0 && peak > 0;
  double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  size_t i, np = 0;
  const json_t *p;
  json_array_foreach(pts, i, p) {
    double x = jnum(p, "intensity"), y = jnum(p, "gflops");
    if (!(x > 0 && y > 0))
      continue;
    np++;
    xlo = fmin(xlo, x), xhi = fmax(xhi, x);
    ylo = fmin(ylo, y), yhi = fmax(yhi, y);
  }
  if (!np && !roofs) {
    empty_chart(b, "roofline",
                "no correct result with a cost model, and no roofline "
                "recorded");
    return;
  }
  if (roofs) {
    double ridge = peak / bw;
    xlo = fmin(xlo, np ? ridge : ridge / 16), xhi = fmax(xhi, ridge);
    yhi = fmax(yhi, peak);
  }
  xlo /= 8, xhi *= 8;
  if (roofs)
    ylo = fmin(ylo, bw * xlo);
  ylo /= 2, yhi *= 2;
  double m[4] = {log10(xlo), log10(xhi), log10(ylo), log10(yhi)};
  open_svg(b, "roofline", "roofline: each workload's fastest correct result");
  ks_buf_printf(b,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                "class=\"frame\"/>\n",
                ML, MT, W - ML - MR, H - MT - MB);
  log_ticks(b, xlo, xhi, true, map_x, m);
  log_ticks(b, ylo, yhi, false, map_y, m);
  if (roofs) {
    double ridge = peak / bw;
    ks_buf_printf(b,
                  "<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f "
                  "%.1f,%.1f\"/>\n",
                  map_x(xlo, m), map_y(bw * xlo, m), map_x(ridge, m),
                  map_y(peak, m), map_x(xhi, m), map_y(peak, m));
    /* the bandwidth label sits on the slope near its foot, away from the
     * points (which sit at the task's intensities, further right) */
    double lxv = pow(10, m[0] + (log10(ridge) - m[0]) * 0.08);
    double x0 = map_x(xlo, m), y0 = map_y(bw * xlo, m);
    double x1 = map_x(ridge, m), y1 = map_y(peak, m);
    double angle = atan2(y1 - y0, x1 - x0) * 180 / M_PI;
    ks_buf_printf(b,
                  "<text transform=\"translate(%.1f %.1f) rotate(%.1f)\" "
                  "class=\"tick\">%.1f GB/s (memory)</text>\n<text x=\"%.1f\" "
                  "y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.0f GFLOP/s "
                  "(FP32 FMA)</text>\n",
                  map_x(lxv, m), map_y(bw * lxv, m) - 6, angle, bw, W - MR - 6,
                  map_y(peak, m) - 6, peak);
  }
  /* labels beside their points; one that would overlap an earlier label
   * moves one column to the right (workloads often share an intensity) */
  double lx[KS_MAX_WORKLOADS], ly[KS_MAX_WORKLOADS];
  int nl = 0;
  json_array_foreach(pts, i, p) {
    double x = jnum(p, "intensity"), y = jnum(p, "gflops");
    if (!(x > 0 && y > 0) || nl >= KS_MAX_WORKLOADS)
      continue;
    int wl = (int)json_integer_value(json_object_get(p, "workload"));
    double cx = map_x(x, m), cy = map_y(y, m);
    double tx = cx + 8;
    for (int k = 0; k < nl; k++)
      if (fabs(ly[k] - cy) < 11 && fabs(lx[k] - tx) < 24)
        tx = lx[k] + 26, k = -1; /* re-check against all */
    lx[nl] = tx, ly[nl++] = cy;
    ks_buf_printf(b,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" class=\"wpt\">"
                  "<title>workload %d ",
                  cx, cy, wl);
    char *axes = json_dumps(json_object_get(p, "axes"), JSON_COMPACT);
    ks_html_esc(b, axes);
    free(axes);
    ks_buf_printf(
        b,
        ": %.2f GFLOP/s, %.2f GB/s, intensity %.3g flop/byte, "
        "roofline fraction %.2f, candidate %lld</title></circle>\n"
        "<text x=\"%.1f\" y=\"%.1f\" class=\"wlabel\">w%d</text>\n",
        y, jnum(p, "gbps"), x, jnum(p, "roofline_fraction"),
        (long long)json_integer_value(json_object_get(p, "candidate_id")), tx,
        cy + 4, wl);
  }
  axis_labels(b, "arithmetic intensity (flop/byte)", "GFLOP/s");
  if (!roofs || !np)
    ks_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"empty\">%s</text>\n",
                  ML + 10, MT + 18,
                  roofs ? "no correct result yet: only the roofs"
                        : "no roofline recorded for this run");
  ks_buf_puts(b, "</svg>\n");
}
