#!/usr/bin/env bash
# `ksearch run --planner llm` against the scripted OpenAI-compatible fake
# server (tests/fake_llm/server.py, 127.0.0.1 only, started and stopped here):
# a whole softmax search where the world model grows, nodes get solved,
# refined and split, and the run ends with a correct kernel faster than the
# reference, through a 429 with Retry-After, a 500, an invalid world model, a
# compile error, a primitive-check rejection, empty, cut, refused, invalid
# UTF-8 and 2 MB answers; the same run replayed offline from --llm-cache with
# the server stopped, and from a copy whose keys match nothing with
# --llm-cache-match order; a streamed run with a timeout, a slow stream and a cut
# stream; the token budget; a bad key; a missing endpoint. The API key never
# reaches the run folder, the cache or the logs.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
tmp=$(mktemp -d /tmp/ksearch-llm-test.XXXXXX)
pass=0 fail=0
cleanup() {
  cleanup_servers
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$here/tests/integration/fake_llm.sh"
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }

key=sk-ksearch-test-0123456789abcdefXYZ
export KSEARCH_API_KEY=$key
common=(--planner llm --llm-model fake-model --attempts 2 --min-time 0.02 --json)

# ---- the whole search, with faults along the way
log=$tmp/main.log
FAKE_LLM_KEY=$key start_server softmax_main.json "$log"
check "fake server started on 127.0.0.1" "$([[ -n $port ]] && echo yes)" "$(cat "$log.err")"
url=http://127.0.0.1:$port/v1
run=$tmp/main
out=$("$ks" run softmax "${common[@]}" --budget 6 --out "$run" \
  --llm-base-url "$url" --llm-cache "$tmp/cache" 2>"$tmp/main.stderr"); rc=$?
stop_server "$server_pid"
ok=$(field '"yes" if d["best"] and d["best"]["score"] > 1 and d["evaluations"] == 6 and d["stopped_because"] == "budget" and d["planner"] == "llm" else "no"' "$out")
check "llm run ends with a correct kernel faster than the reference ($(field 'round(d["best"]["score"],2)' "$out")x)" \
  "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $out $(tail -5 "$tmp/main.stderr")"
statuses=$(db "$run/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
check "evaluations: compile error, fixed, slow, fast, wrong twice" \
  "$([[ $statuses == compile_error,ok,ok,ok,incorrect,incorrect ]] && echo yes)" "$statuses"
wm=$(python3 - "$run/world_model.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
n = {x["id"]: x for x in d["nodes"]}
solved = sorted(i for i, x in n.items() if x["status"] == "solved" and i != "root")
print(len(n), ",".join(solved), int(n.get("tp.omp.block", {}).get("split", False)),
      int("reflection after candidate" in n["tp"]["notes"]),
      int("LLM deep analysis" in n["root"]["notes"]),
      int("threads and SIMD come next" in n["tp"]["notes"]),
      int(n["ol"]["action"]["priority"] < 0.5))
EOF
)
check "world model grew: 7 nodes, tp and tp.omp solved, a node split (too hard)" \
  "$([[ $wm == "7 tp,tp.omp 1 "* ]] && echo yes)" "$wm"
check "refine reflections (one sent with invalid UTF-8) in the notes, deep analysis in the root, priorities moved" \
  "$([[ $wm == *" 1 1 1 1" ]] && echo yes)" "$wm"
best=$(field 'd["best"]["file"]' "$out")
e=$("$ks" eval softmax "$best" --json -q --no-timing); rc=$?
check "best/softmax.c builds and passes on its own" "$([[ $rc == 0 ]] && echo yes)" "exit $rc: $e"
q=$(asked "$log" "init#1")
check "an invalid world model is re-asked quoting the error" "$([[ $q == *"ops[1].action.priority"* ]] && echo yes)" "${q:0:300}"
q=$(asked "$log" "debug#0")
check "the debug prompt quotes the compiler errors" "$([[ $q == *"(ksearch prompt: debug)"* && $q == *"candidate.c:"*"error:"* && $q == *undeclared_sum* ]] && echo yes)" "${q:0:300}"
q=$(asked "$log" "debug#1")
check "a primitive-check rejection goes into the next debug prompt" "$([[ $q == *"rejected before compiling"* && $q == *system* ]] && echo yes)" "${q:0:300}"
rej=$(db "$run/ksearch.db" "select (select count(*) from events where kind='precheck_rejected' and json like '%system%') || ':' || (select count(*) from candidates where source like '%system(%')")
check "the rejected code is recorded and never reaches the compiler" "$([[ $rej == 1:0 ]] && echo yes)" "events:candidates = $rej"
q=$(asked "$log" "improve#0")
check "the improve prompt gives timings and roofline fractions of this and the parent plan" \
  "$([[ $q == *"roofline fraction"* && $q == *"parent plan's best code"* && $q == *"speedup"* ]] && echo yes)" "${q:0:300}"
q1=$(asked "$log" "improve#1") q2=$(asked "$log" "improve#2")
check "oversized and refused answers are re-asked" "$([[ $q1 == *"byte limit"* && $q2 == *refusal* ]] && echo yes)" "${q1:0:200} / ${q2:0:200}"
q1=$(asked "$log" "refine#4") q2=$(asked "$log" "refine#5")
check "empty and truncated answers are re-asked" "$([[ $q1 == *"was empty"* && $q2 == *"cut off"* ]] && echo yes)" "${q1:0:200} / ${q2:0:200}"
times=$(python3 - "$log" <<'EOF'
import json, sys
t = {json.loads(l)["entry"]: json.loads(l)["t"] for l in open(sys.argv[1])}
print("%.2f" % (t["code#1"] - t["code#0"]))
EOF
)
check "a 429 with Retry-After: 1 is retried after >= 1 s (${times} s)" "$(python3 -c "print('yes' if $times >= 0.95 else 'no')")" "$times"
calls=$(db "$run/ksearch.db" "select group_concat(distinct status) from llm_calls")
check "every try is recorded (429, 500, empty, truncated, oversized, refused)" \
  "$([[ $calls == *http_429* && $calls == *http_500* && $calls == *empty* && $calls == *truncated* && $calls == *oversized* && $calls == *refused* ]] && echo yes)" "$calls"
tok=$(db "$run/ksearch.db" "select sum(prompt_tokens) > 0 and sum(completion_tokens) > 0 and min(latency_s) >= 0 from llm_calls where status = 'ok'")
check "tokens and latency recorded" "$([[ $tok == 1 ]] && echo yes)" "$tok"
auth=$(python3 -c "import json,sys; print(sorted({json.loads(l)['auth'] for l in open(sys.argv[1])}))" "$log")
check "every request carried the key" "$([[ $auth == "['ok']" ]] && echo yes)" "$auth"
leak=$(grep -rla -- "$key" "$run" "$tmp/cache" "$tmp/main.stderr" 2>/dev/null)
check "the key is in no file of the run, the cache or the log" "$([[ -z $leak ]] && echo yes)" "$leak"
check "the cache holds one file per answered request" "$([[ $(ls "$tmp/cache" | wc -l) -ge 15 ]] && echo yes)" "$(ls "$tmp/cache" | wc -l)"

# ---- the same search, offline: every answer from the cache
out=$("$ks" run softmax "${common[@]}" -q --budget 6 --out "$tmp/replay" \
  --llm-base-url "$url" --llm-cache "$tmp/cache" --llm-retries 0); rc=$?
statuses2=$(db "$tmp/replay/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
hits=$(db "$tmp/replay/ksearch.db" "select group_concat(distinct status) from llm_calls")
check "offline replay from --llm-cache with the server stopped" \
  "$([[ $rc == 0 && $statuses2 == "$statuses" && $hits == cache_hit ]] && echo yes)" "exit $rc: $statuses2 / $hits / ${out:0:300}"
check "the replay ends with the same faster kernel" "$([[ $(field '"yes" if d["best"]["score"] > 1 else "no"' "$out") == yes ]] && echo yes)" "${out:0:300}"

# ---- a recording whose prompts no longer match (another machine quotes
# other measurements): every entry under another key. Exact matching finds
# nothing (exit 3, nothing asked of a network); --llm-cache-match order
# answers each request with the next recorded answer of its prompt kind and
# evaluates the same candidates
mkdir -p "$tmp/cache-other"
for f in "$tmp"/cache/*.json; do
  k=$(basename "$f" .json)
  cp -p "$f" "$tmp/cache-other/$(printf '%s' "x$k" | md5sum | cut -c1-32).json"
done
"$ks" run softmax "${common[@]}" -q --budget 6 --out "$tmp/replay-exact" \
  --llm-base-url http://127.0.0.1:9/v1 --llm-cache "$tmp/cache-other" --llm-retries 0 >/dev/null 2>"$tmp/exact.err"
rc=$?
check "a recording with other prompts: exact matching misses (exit 3)" "$([[ $rc == 3 ]] && echo yes)" "exit $rc $(tail -2 "$tmp/exact.err")"
out=$("$ks" run softmax "${common[@]}" -q --budget 6 --out "$tmp/replay-order" \
  --llm-base-url http://127.0.0.1:9/v1 --llm-cache "$tmp/cache-other" --llm-cache-match order --llm-retries 0 2>"$tmp/order.err"); rc=$?
statuses3=$(db "$tmp/replay-order/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
kinds=$(db "$tmp/replay-order/ksearch.db" "select group_concat(distinct status) from llm_calls")
check "--llm-cache-match order replays it: same candidates, every answer by order" \
  "$([[ $rc == 0 && $statuses3 == "$statuses" && $kinds == cache_order ]] && echo yes)" "exit $rc: $statuses3 / $kinds / $(tail -3 "$tmp/order.err")"
"$ks" run softmax "${common[@]}" -q --budget 1 --out "$tmp/bad-match" --llm-base-url "$url" --llm-cache-match fuzzy >/dev/null 2>"$tmp/bad.err"
rc=$?
check "a bad --llm-cache-match is exit 2 naming the choices" "$([[ $rc == 2 ]] && grep -q '"order"' "$tmp/bad.err" && echo yes)" "exit $rc $(cat "$tmp/bad.err")"

# ---- streaming: a timeout, a slow stream, a stream cut mid-JSON
log=$tmp/stream.log
start_server softmax_stream.json "$log"
out=$("$ks" run softmax "${common[@]}" -q --budget 2 --out "$tmp/stream" --llm-base-url "http://127.0.0.1:$port/v1" \
  --llm-stream --llm-timeout 2); rc=$?
stop_server "$server_pid"
calls=$(db "$tmp/stream/ksearch.db" "select group_concat(status) from llm_calls")
streamed=$(grep -c '"stream": true' "$log")
check "streamed run survives a timeout and a cut stream ($calls)" \
  "$([[ $rc == 0 && $(field 'd["evaluations"]' "$out") == 2 && $calls == timeout,ok,*stream_cut,ok* && $streamed -ge 5 ]] && echo yes)" "exit $rc: $calls ${out:0:300}"
check "the streamed run finds a faster kernel" "$([[ $(field '"yes" if d["best"]["score"] > 1 else "no"' "$out") == yes ]] && echo yes)" "${out:0:300}"

# ---- token budget, keys, endpoints
log=$tmp/short.log
FAKE_LLM_KEY=$key start_server softmax_short.json "$log"
url=http://127.0.0.1:$port/v1
out=$("$ks" run softmax "${common[@]}" -q --budget 5 --out "$tmp/budget" --llm-base-url "$url" --llm-token-budget 100); rc=$?
check "token budget ends the run cleanly (stopped_because token budget, exit 0)" \
  "$([[ $rc == 0 && $(field 'd["stopped_because"]' "$out") == "token budget" && $(field 'd["evaluations"]' "$out") == 0 ]] && echo yes)" "exit $rc: ${out:0:300}"
bad=sk-wrong-0123456789abcdefghijkl
err=$(KSEARCH_API_KEY=$bad "$ks" run softmax --planner llm --llm-model m --out "$tmp/badkey" --llm-base-url "$url" --budget 1 --min-time 0.02 2>&1); rc=$?
check "a rejected key: exit 3 naming KSEARCH_API_KEY" "$([[ $rc == 3 && $err == *401* && $err == *KSEARCH_API_KEY* ]] && echo yes)" "exit $rc: $err"
leak=$(grep -rla -- "$bad" "$tmp/badkey" 2>/dev/null; [[ $err == *"$bad"* ]] && echo stderr)
check "the rejected key echoed by the server is redacted" "$([[ -z $leak && $err == *redacted* ]] && echo yes)" "$leak: $err"
stop_server "$server_pid"
err=$("$ks" run softmax --planner llm --llm-model m --out "$tmp/down" --llm-base-url "$url" --llm-retries 1 --budget 1 --min-time 0.02 2>&1); rc=$?
check "an endpoint that does not answer: exit 3 after the retries" "$([[ $rc == 3 && $err == *"after every retry"* && $err == *127.0.0.1* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run softmax --planner llm --llm-model m 2>&1); rc=$?
check "--planner llm without an endpoint: exit 2 saying what to set" \
  "$([[ $rc == 2 && $err == *--llm-base-url* && $err == *KSEARCH_LLM_BASE_URL* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run softmax --planner llm --llm-base-url "$url" 2>&1); rc=$?
check "--planner llm without a model: exit 2" "$([[ $rc == 2 && $err == *--llm-model* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run softmax --llm-model m 2>&1); rc=$?
check "--llm-* flags without --planner llm: exit 2" "$([[ $rc == 2 && $err == *"--planner llm"* ]] && echo yes)" "exit $rc: $err"

echo "llm: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
