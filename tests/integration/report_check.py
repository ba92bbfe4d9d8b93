#!/usr/bin/python3
"""Checks one report page as headless Chromium rendered it (report.sh).

Given the page, Chromium's log (--enable-logging=stderr --v=1), its net log
(--log-net-log), the DOM it parsed (--dump-dom) and its screenshot, prints
one "ok   ..." or "FAIL ...: why" line per check:
  - no console message at all (the page has no script, so any message is an
    error: a CSP violation, a blocked load, a parse error);
  - the page asked the network for nothing (net-log requests initiated by the
    page: anything but Chromium's own background traffic);
  - static: a CSP meta forbidding every load, no <script>, no src=, no href
    but "#...", no url( or @import in styles;
  - the charts: each <svg> the DOM holds has drawn shapes (or an "empty"
    note where the run has nothing to draw), points as many as expected;
  - the screenshot shows the charts' own colours (best-so-far line, roof,
    workload points), i.e. the SVG was painted, not only parsed;
  - expected notes and state are on the page.
Run with Debian's python3 (python3-pil, from scripts/setup.sh).
"""
import argparse
import html.parser
import json
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--name", required=True)
ap.add_argument("--html", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--netlog", required=True)
ap.add_argument("--dom", required=True)
ap.add_argument("--png", required=True)
ap.add_argument("--points", type=int, default=None,
                help="progress points expected (evaluations)")
ap.add_argument("--roofline-points", type=int, default=None)
ap.add_argument("--roof", action="store_true", help="a roofline is drawn")
ap.add_argument("--note", action="append", default=[])
ap.add_argument("--state", default=None)
ap.add_argument("--text", action="append", default=[],
                help="text the page must contain")
a = ap.parse_args()
results = []


def check(what, ok, why=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + f"{a.name}: {what}" + ("" if ok else f": {why}"))


page = open(a.html, encoding="utf-8").read()
log = open(a.log, encoding="utf-8", errors="replace").read()

# ---- console
console = [l for l in log.splitlines() if ":CONSOLE" in l]
check("no console messages", not console, " | ".join(console)[:600])

# ---- network: requests the page made (Chromium's own traffic says
# initiator "not an origin" and a null isolation key)
page_reqs = set()
try:
    net = json.load(open(a.netlog))
except ValueError:
    # a net log cut short by a quick exit lacks its closing brackets
    text = open(a.netlog).read().rstrip().rstrip(",")
    net = json.loads(text + "]}")
for e in net.get("events", []):
    p = e.get("params") or {}
    if "url" not in p:
        continue
    init = p.get("initiator")
    nik = p.get("network_isolation_key", "")
    if (init is not None and init != "not an origin") or "file://" in nik:
        page_reqs.add(p["url"])
check("loads no URL", not page_reqs, " ".join(sorted(page_reqs))[:600])

# ---- static content
csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', page)
check("CSP meta forbids every load",
      bool(csp) and "default-src 'none'" in csp.group(1) and "script-src 'none'" in csp.group(1),
      csp.group(1) if csp else "no CSP meta")


class Markup(html.parser.HTMLParser):
    """What in the markup could load something: scripts, src, href to
    anything but an anchor, url( and @import in styles. Text (escaped
    candidate code) is not markup and may say anything."""

    def __init__(self):
        super().__init__()
        self.bad = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "img", "link", "base"):
            self.bad.append(f"<{tag}>")
        self.in_style = tag == "style"
        for k, v in attrs:
            v = v or ""
            if k in ("src", "srcset", "action", "formaction", "poster", "data"):
                self.bad.append(f"{k}={v}")
            if k in ("href", "xlink:href") and not v.startswith("#"):
                self.bad.append(f"{k}={v}")
            if k == "style" and re.search(r"url\(|@import", v, re.I):
                self.bad.append(f"style={v}")
            if k.startswith("on"):
                self.bad.append(f"{k}=")

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style and re.search(r"url\(|@import", data, re.I):
            self.bad.append("url( or @import in <style>")


mk = Markup()
mk.feed(page)
check("markup can load nothing (no script, src, external href, url(, @import)",
      not mk.bad, str(mk.bad[:5]))


# ---- the DOM Chromium built
class Svgs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs = {}
        self.cur = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if tag == "svg":
            self.cur = d.get("id", "?")
            self.svgs[self.cur] = {"shapes": 0, "circles": 0, "wpt": 0, "empty": False,
                                   "polylines": 0}
        elif self.cur:
            s = self.svgs[self.cur]
            if tag in ("circle", "polyline", "line", "rect", "path"):
                s["shapes"] += 1
            if tag == "circle":
                s["circles"] += 1
                if d.get("class") == "wpt":
                    s["wpt"] += 1
            if tag == "polyline":
                s["polylines"] += 1
            if tag == "text" and d.get("class") == "empty":
                s["empty"] = True

    def handle_endtag(self, tag):
        if tag == "svg":
            self.cur = None

    def handle_data(self, data):
        self.text.append(data)


dom = Svgs()
dom.feed(open(a.dom, encoding="utf-8").read())
text = " ".join(dom.text)
check("DOM has the progress and roofline charts",
      {"progress", "roofline"} <= set(dom.svgs), str(sorted(dom.svgs)))
for sid, s in dom.svgs.items():
    check(f"svg #{sid} has content", s["shapes"] >= 1 and (s["shapes"] >= 3 or s["empty"]), str(s))
pg = dom.svgs.get("progress", {})
if a.points is not None:
    check(f"progress chart: {a.points} points", pg.get("circles") == a.points, str(pg))
    if a.points:
        check("progress chart: best-so-far line", pg.get("polylines") == 1, str(pg))
    else:
        check("progress chart: says there is nothing to draw", pg.get("empty"), str(pg))
rl = dom.svgs.get("roofline", {})
if a.roofline_points is not None:
    check(f"roofline chart: {a.roofline_points} workload points",
          rl.get("wpt") == a.roofline_points, str(rl))
if a.roof:
    check("roofline chart: roofs drawn", rl.get("polylines") == 1, str(rl))
for n in a.note:
    check(f"note: {n}", n in text, "not on the page")
for t in a.text:
    check(f"text: {t}", t in text, "not on the page")
if a.state:
    check(f"state: {a.state}", re.search(r'id="state"[^>]*>' + re.escape(a.state), page) is not None,
          "badge says otherwise")

# ---- pixels: the charts' own colours were painted
from PIL import Image  # noqa: E402

img = Image.open(a.png).convert("RGB")
counts = {}
for c, n in img.getcolors(maxcolors=1 << 24) or []:
    counts[n] = c
def px(hexcol):
    return counts.get(tuple(int(hexcol[i:i + 2], 16) for i in (1, 3, 5)), 0)
check(f"screenshot {img.size[0]}x{img.size[1]} is not blank", len(counts) > 20,
      f"{len(counts)} colours")
if a.points and a.points >= 2:
    check("screenshot: best-so-far line painted", px("#1a73e8") > 200, f"{px('#1a73e8')} px")
if a.roof:
    check("screenshot: roofline roofs painted", px("#b3261e") > 200, f"{px('#b3261e')} px")
if a.roofline_points:
    check("screenshot: workload points painted", px("#00897b") > 30, f"{px('#00897b')} px")
sys.exit(0 if all(results) else 1)
