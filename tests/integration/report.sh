#!/usr/bin/env bash
# `ksearch report` in a real browser: headless Chromium (Debian's chromium,
# from scripts/setup.sh) renders the pages of a real short run (written by
# `run --report` while it searches), of a run with no evaluation (killed
# before its first), of a run whose every evaluation failed, of an
# interrupted run, of a candidate whose source is hostile HTML, of the random
# and LLM planners and (where OpenCL exists) of the opencl backend.
# report_check.py checks each page: no console message, no URL loaded,
# markup that can load nothing, charts with content (in the DOM and painted
# in the screenshot), the notes and the state. A deliberately bad page must
# fail those checks, so they can fail. Screenshots go to
# $KSEARCH_REPORT_SHOTS (default: a temp folder, removed) for a human to look
# at. Also: `show --json` agrees with summary.json; command-line errors.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
tmp=$(mktemp -d /tmp/ksearch-report-test.XXXXXX)
shots=${KSEARCH_REPORT_SHOTS:-$tmp/shots}
mkdir -p "$shots"
pass=0 fail=0
servers=()
cleanup() {
  for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }
state_of() { grep -o 'id="state"[^>]*>[a-z ]*' "$1" 2>/dev/null | sed 's/.*>//'; }
chrome=$(command -v chromium || command -v chromium-browser)
py=/usr/bin/python3 # Debian's, with python3-pil
if [[ -z $chrome ]] || ! $py -c 'import PIL' 2>/dev/null; then
  echo "FAIL report: headless chromium and python3-pil are needed; run scripts/setup.sh"
  echo "report: 0 passed, 1 failed"
  exit 1
fi
# Chromium without its own background traffic, sandbox (root in CI) or GPU
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
  --no-default-browser-check --disable-background-networking --disable-component-update
  --disable-sync --disable-default-apps --disable-extensions --disable-domain-reliability
  --disable-client-side-phishing-detection --disable-features=Translate,OptimizationHints,MediaRouter
  --no-pings --enable-logging=stderr --v=1 --window-size=1280,3000)

# render NAME PAGE: screenshot, DOM, console log and net log of PAGE
render() {
  local n=$1 page=$2
  rm -rf "$tmp/profile-$n"
  timeout 60 "$chrome" "${flags[@]}" --user-data-dir="$tmp/profile-$n" \
    --log-net-log="$tmp/$n.net.json" --screenshot="$shots/$n.png" --dump-dom \
    "file://$page" >"$tmp/$n.dom" 2>"$tmp/$n.log"
}
# checker NAME PAGE [options]: report_check.py's lines for a rendered page
checker() {
  local n=$1 page=$2
  shift 2
  $py "$here/tests/integration/report_check.py" --name "$n" --html "$page" \
    --log "$tmp/$n.log" --netlog "$tmp/$n.net.json" --dom "$tmp/$n.dom" --png "$shots/$n.png" "$@" 2>&1
}
# page_ok NAME PAGE [report_check options]: renders and checks one page
page_ok() {
  local n=$1 page=$2
  shift 2
  if [[ ! -s $page ]]; then
    check "$n: the page exists" no "$page missing"
    return
  fi
  render "$n" "$page"
  local out
  out=$(checker "$n" "$page" "$@")
  echo "$out"
  pass=$((pass + $(grep -c '^ok ' <<<"$out")))
  fail=$((fail + $(grep -c '^FAIL' <<<"$out")))
  grep -q '^ok ' <<<"$out" || check "$n: the checker ran" no "$out"
}
nwl=$(python3 -c "import json; print(sum(1 for w in json.load(open('$here/tasks/softmax/task.json'))['workloads'] if w.get('device', 'cpu') == 'cpu'))")  # the CPU workloads: what a c run measures

# ---- a real short run; --report rewrites the page while it searches
run=$tmp/real
"$ks" run softmax --budget 3 --report --out "$run" -q --min-time 0.02 &
pid=$!
states="" torn=0
while kill -0 $pid 2>/dev/null; do
  if [[ -f $run/report.html ]]; then
    cp "$run/report.html" "$tmp/snap.html" 2>/dev/null
    grep -q '</html>' "$tmp/snap.html" || torn=$((torn + 1))
    s=$(state_of "$tmp/snap.html")
    [[ -n $s && $states != *"$s;"* ]] && states="$states$s;"
  fi
  sleep 0.1
done
wait $pid
rc=$?
final=$(state_of "$run/report.html")
check "run --report: the page says 'in progress' during the search, 'finished' after ($states)" \
  "$([[ $rc == 0 && $states == *"in progress"* && $final == finished ]] && echo yes)" "exit $rc, states $states, final $final"
check "run --report: every snapshot read was a whole page (temp file + rename)" "$([[ $torn == 0 ]] && echo yes)" "$torn torn"
page_ok real "$run/report.html" --points 3 --roof --roofline-points "$nwl" --state finished \
  --text "World model" --text "Top candidates" --text "Difference from its parent" \
  --text "ksearch run softmax --budget 3 --report"
out=$("$ks" report "$run" --out "$tmp/real-again.html")
rc=$?
check "report --out FILE writes there and prints the path" \
  "$([[ $rc == 0 && $out == "$tmp/real-again.html" && -s $tmp/real-again.html ]] && echo yes)" "exit $rc: $out"
"$ks" show "$run" --json >"$tmp/facts.json"
rc=$?
same=$(python3 - "$tmp/facts.json" "$run/summary.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
ok = (f["counts"]["evaluations"] == s["evaluations"] == len(f["evaluations"])
      and f["counts"]["correct"] == s["correct_evaluations"]
      and f["best"]["candidate_id"] == s["best"]["candidate_id"]
      and abs(f["best"]["score"] - s["best"]["score"]) < 1e-9
      and f["best"]["params"] == s["best"]["params"] and f["best"]["plan"] == s["best"]["plan"]
      and f["summary"] == s and f["state"] == "finished"
      and f["tree"]["best_node"] and f["context"]["roofline"]["bandwidth_gbps"] > 0
      and len(f["roofline_points"]) > 0 and f["top"][0]["candidate_id"] == s["best"]["candidate_id"])
print("yes" if ok else "no")
PY
)
check "show --json gives the page's facts, agreeing with summary.json" "$([[ $rc == 0 && $same == yes ]] && echo yes)" \
  "exit $rc: $(head -c 400 "$tmp/facts.json")"

# ---- the checks can fail: a page with a script, an external image and no CSP
sed -e 's|<meta http-equiv="Content-Security-Policy"[^>]*>||' \
  -e 's|</main>|<img src="http://127.0.0.1:9/x.png"><script>console.error("canary")</script></main>|' \
  "$run/report.html" >"$tmp/canary.html"
render canary "$tmp/canary.html"
out=$(checker canary "$tmp/canary.html")
check "a bad page fails the checks (console, URL, CSP, markup)" \
  "$([[ $out == *"FAIL canary: no console messages"* && $out == *"FAIL canary: loads no URL"* && $out == *"FAIL canary: CSP"* && $out == *"FAIL canary: markup"* ]] && echo yes)" "$out"

# ---- a run with no evaluation: killed before its first one finished
run=$tmp/empty
"$ks" run softmax --budget 3 --out "$run" -q --min-time 0.02 &
pid=$!
for _ in $(seq 1 500); do
  [[ $(db "$run/ksearch.db" "select count(*) from runs") == 1 ]] && break
  sleep 0.02
done
kill -9 $pid
wait $pid 2>/dev/null
n=$(db "$run/ksearch.db" "select count(*) from evaluations where status not in ('running','interrupted')")
out=$("$ks" report "$run" 2>&1)
rc=$?
check "report of a run killed before any evaluation ($n finished)" "$([[ $rc == 0 && $n == 0 ]] && echo yes)" "exit $rc: $out"
page_ok empty "$run/report.html" --points 0 --roofline-points 0 --state stopped \
  --note "No evaluation has finished" --note=--resume

# ---- only failures: the only template does not compile
task=$tmp/broken
cp -r "$here/tasks/softmax" "$task"
rm -f "$task"/templates/c/*
for t in a b; do
  printf '%s\n' '// ksearch: backend=c entry=softmax' '// ksearch: param VEC in 4,8' \
    '#include <stdint.h>' 'void softmax(const float *x, float *y, int64_t rows, int64_t cols) {' \
    "  this is not C ($t);" '}' >"$task/templates/c/broken_$t.c"
done
run=$tmp/failed
"$ks" run "$task" --budget 2 --report --out "$run" -q --min-time 0.02
rc=$?
statuses=$(db "$run/ksearch.db" "select group_concat(status) from evaluations")
check "a run whose every evaluation fails ($statuses)" "$([[ $rc == 0 && $statuses == compile_error,compile_error ]] && echo yes)" "exit $rc"
page_ok failed "$run/report.html" --points 2 --roofline-points 0 --state finished \
  --note "All 2 evaluations failed" --text "No correct kernel yet" --text "compile_error"

# ---- interrupted: SIGINT after the first evaluation
run=$tmp/interrupted
"$ks" run softmax --budget 20 --out "$run" -q --min-time 0.02 &
pid=$!
for _ in $(seq 1 600); do
  [[ $(db "$run/ksearch.db" "select count(*) from evaluations where status not in ('running','interrupted')") -ge 1 ]] && break
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
"$ks" report "$run" -q
rc2=$?
check "an interrupted run: exit 0 and a report" "$([[ $rc == 0 && $rc2 == 0 ]] && echo yes)" "exit $rc, report $rc2"
page_ok interrupted "$run/report.html" --state interrupted --note "interrupted" --roof

# ---- hostile candidate source: markup in a template's comment is text
task=$tmp/hostile
cp -r "$here/tasks/softmax" "$task"
rm -f "$task"/templates/c/*
{
  head -1 "$here/tasks/softmax/templates/c/three_pass.c"
  echo '// </pre></details><script>console.error("xss")</script><img src="http://127.0.0.1:9/x.png"><style>@import url(http://127.0.0.1:9/a.css);</style>'
  tail -n +2 "$here/tasks/softmax/templates/c/three_pass.c"
} >"$task/templates/c/three_pass.c"
run=$tmp/hostile-run
"$ks" run "$task" --budget 1 --report --out "$run" -q --min-time 0.02
rc=$?
check "a run of a template with hostile comments" "$([[ $rc == 0 ]] && echo yes)" "exit $rc"
page_ok hostile "$run/report.html" --points 1 --text '<script>console.error("xss")</script>'

# ---- the random planner
run=$tmp/random
"$ks" run softmax --planner random --budget 2 --report --out "$run" -q --min-time 0.02
rc=$?
check "random planner run" "$([[ $rc == 0 ]] && echo yes)" "exit $rc"
page_ok random "$run/report.html" --points 2 --roof --state finished

# ---- the LLM planner against the fake server
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_API_KEY \
  KSEARCH_LLM_BASE_URL KSEARCH_LLM_MODEL
export KSEARCH_API_KEY=sk-ksearch-report-0123456789abcdef
python3 "$here/tests/fake_llm/server.py" --script "$here/tests/fake_llm/scripts/softmax_short.json" \
  --log "$tmp/llm.log" --root "$here" >"$tmp/llm.port" 2>"$tmp/llm.err" &
servers+=($!)
port=
for _ in $(seq 1 100); do
  port=$(head -1 "$tmp/llm.port" 2>/dev/null)
  [[ -n $port ]] && break
  sleep 0.05
done
run=$tmp/llm
"$ks" run softmax --planner llm --llm-model fake-model --llm-base-url "http://127.0.0.1:$port/v1" \
  --attempts 2 --budget 2 --report --out "$run" -q --min-time 0.02
rc=$?
check "llm planner run against the fake server" "$([[ $rc == 0 ]] && echo yes)" "exit $rc: $(tail -3 "$tmp/llm.err")"
n=$(db "$run/ksearch.db" "select count(*) from evaluations where status not in ('running','interrupted')")
page_ok llm "$run/report.html" --points "$n" --state finished --text "LLM calls" --text "fake-model"
leak=$(grep -l -- "$KSEARCH_API_KEY" "$run/report.html" "$tmp/llm.dom" 2>/dev/null)
check "the API key is not on the page" "$([[ -z $leak ]] && echo yes)" "$leak"

# ---- the opencl backend, where OpenCL exists
if "$ks" roofline --backend opencl --list >/dev/null 2>&1; then
  run=$tmp/opencl
  "$ks" run softmax --backend opencl --budget 2 --report --out "$run" -q --min-time 0.02
  rc=$?
  check "opencl run" "$([[ $rc == 0 ]] && echo yes)" "exit $rc"
  page_ok opencl "$run/report.html" --points 2 --roof --state finished --text "opencl"
else
  echo "skip opencl report: no OpenCL platform (scripts/setup.sh installs PoCL)"
fi

# ---- command-line errors
err=$("$ks" report "$tmp/nowhere" 2>&1)
rc=$?
check "report of a folder without a run: exit 2 naming it" \
  "$([[ $rc == 2 && $err == *"$tmp/nowhere"* && $err == *"not a run folder"* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" report 2>&1)
rc=$?
check "report without RUN_DIR: exit 2 with usage" "$([[ $rc == 2 && $err == *usage* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" report "$tmp/real" --out "$tmp/no/such/dir/r.html" 2>&1)
rc=$?
check "report --out into a missing folder: exit 2 naming the file" \
  "$([[ $rc == 2 && $err == *"$tmp/no/such/dir"* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" show "$tmp/nowhere" --json 2>&1)
rc=$?
check "show --json of a folder without a run: exit 2" "$([[ $rc == 2 && $err == *"not a run folder"* ]] && echo yes)" "exit $rc: $err"

echo "report: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
