#!/usr/bin/env bash
# bench/gpu/llm_session.sh — the LLM planner's whole loop on the H200
# (issue 22, DESIGN.md: LLM planner and coder), in one call on the device
# machine, from the repo root with build/ksearch and build/ksearch-runner:
#   bench/gpu/llm_session.sh OUTDIR
# No model is reachable there, so the scripted fake server
# (tests/fake_llm/server.py, 127.0.0.1) answers from
# tests/fake_llm/scripts/rmsnorm_cuda.json: hand-written CUDA variants of
# rmsnorm (tests/fake_llm/kernels/cuda/) and world-model edits. The session
# goes through every part of the loop: init (3 plans), answers rejected
# before nvcc (host cudaMalloc + <<<>>>, a 2048-thread block, OpenCL calls in
# CUDA) with the reasons in the next debug prompt, an nvcc compile error,
# a wrong kernel, correct kernels timed against the device baseline,
# refine adding a child plan, best/. The session is recorded with
# --llm-cache, then replayed offline with the server stopped; the two runs
# must evaluate the same candidates in the same order.
# BACKEND=opencl runs the same loop with the OpenCL script on PoCL: a dry
# run of this script on a machine without a GPU.
# REPLAY_FROM=DIR replays a cache recorded by an earlier call (its
# OUTDIR/cache, which comes back with the files) with no server at all.
# Writes OUTDIR/result.json (commit, command, statuses, rejections, world
# model, best per workload with roofline fractions and baseline speedups,
# the replay's agreement), both summaries, logs and the best kernel.
set -u
out=${1:?usage: bench/gpu/llm_session.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ks=${KSEARCH:-$PWD/build/ksearch}
work=${WORK:-/tmp/ks-llm-session}
rm -rf "$work"
mkdir -p "$work"
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-llm-session}
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_API_KEY KSEARCH_API_KEY
backend=${BACKEND:-cuda}
# DEVICE=N: the OpenCL device (`ksearch roofline --backend opencl --list`)
[[ -n ${DEVICE:-} ]] && export KSEARCH_OPENCL_DEVICE=$DEVICE
log() { echo "[$(date +%T)] $*" | tee -a "$out/session.log"; }
[[ -x $ks ]] || { echo "no $ks: build first (make)"; exit 3; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv >"$out/nvidia-smi.csv" 2>&1
# mlx has no roofline of its own (the session goes on without the figures)
if [[ $backend == mlx ]]; then
  log "roofline: none for mlx"
elif "$ks" roofline --backend "$backend" --json >"$out/roofline.json" 2>"$out/roofline.err"; then
  log "roofline: $(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print("copy %.0f GB/s, L2 %.0f GB/s" % (d["copy_gbps"], d.get("l2_gbps", 0)))' "$out/roofline.json")"
else
  log "no $backend roofline: $(tail -2 "$out/roofline.err")"
  exit 3
fi

if [[ -n ${REPLAY_FROM:-} ]]; then
  # replay only: a cache recorded elsewhere (e.g. an earlier call's
  # OUTDIR/cache), no server at all; an answer the cache lacks fails the call
  # (exit 3); with CACHE_MATCH=order (the default here) a request that
# differs from the recorded ones takes the next recorded answer of its kind
  cp -r "$REPLAY_FROM" "$work/cache"
  port=9
  server=
else
  python3 tests/fake_llm/server.py --script "tests/fake_llm/scripts/rmsnorm_$backend.json" \
    --log "$out/server.log" --root "$PWD" >"$work/port" 2>"$out/server.err" &
  server=$!
  port=
  for _ in $(seq 1 100); do
    port=$(head -1 "$work/port" 2>/dev/null)
    [[ -n $port ]] && break
    sleep 0.05
  done
  [[ -n $port ]] || { log "fake server did not start: $(cat "$out/server.err")"; exit 3; }
fi
args=(rmsnorm --backend "$backend" --planner llm --llm-model fake-model
  --llm-base-url "http://127.0.0.1:$port/v1" --llm-cache "$work/cache"
  --attempts 2 --budget "${BUDGET:-8}" --time "${SESSION_TIME:-150}" --seeds 1 --min-time 0.05 --json)
# a recording from another machine: its prompts quote that machine's
# measurements, so a miss takes the next recorded answer of its kind
[[ -n ${REPLAY_FROM:-} ]] && args+=(--llm-retries 0 --llm-cache-match "${CACHE_MATCH:-order}")
cmd="$ks run ${args[*]} --out $work/run"
log "session: $cmd${REPLAY_FROM:+ (replaying $REPLAY_FROM)}"
t0=$(date +%s.%N)
"$ks" run "${args[@]}" --out "$work/run" >"$out/summary.json" 2>"$out/run.stderr"
rc=$?
t1=$(date +%s.%N)
if [[ -n $server ]]; then
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
fi
log "session exit $rc in $(python3 -c "print('%.1f' % ($t1 - $t0))") s: $(tail -1 "$out/run.stderr")"
cp -r "$work/cache" "$out/cache" 2>/dev/null

# the same session offline: every answer from the cache, the server gone
"$ks" run "${args[@]}" --llm-retries 0 --out "$work/replay" >"$out/replay_summary.json" 2>"$out/replay.stderr"
rrc=$?
t2=$(date +%s.%N)
log "replay exit $rrc in $(python3 -c "print('%.1f' % ($t2 - $t1))") s"

best=$(python3 -c 'import json,sys;b=json.load(open(sys.argv[1])).get("best");print(b["file"] if b else "")' "$out/summary.json" 2>/dev/null)
if [[ -n $best && -f $best ]]; then
  cp "$best" "$out/best_rmsnorm.$backend"
  "$ks" eval rmsnorm "$best" --backend "$backend" --json -q --seeds 2 >"$out/best_eval.json" 2>"$out/best_eval.err"
  log "best/ on its own: exit $? $(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d["status"], "score %.3f" % d["score"])' "$out/best_eval.json" 2>&1)"
fi
cp "$work/run/world_model.json" "$out/" 2>/dev/null
commit=${COMMIT:-${KS_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}}

python3 - "$work/run/ksearch.db" "$work/replay/ksearch.db" "$out" "$commit" "$cmd" "$rc" "$rrc" "$backend" <<'EOF'
import json, sqlite3, sys
run_db, replay_db, out, commit, cmd, rc, rrc, backend = sys.argv[1:9]
def q(db, sql):
    try:
        c = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
        return c.execute(sql).fetchall()
    except Exception as e:
        return [("error: %s" % e,)]
evals = q(run_db, "select e.id, e.status, e.score, c.id, substr(c.source, 1, 200), e.node_id, "
                  "substr(json_extract(e.result_json, '$.error'), 1, 400) "
                  "from evaluations e join candidates c on c.id = e.candidate_id order by e.id")
replay = q(replay_db, "select e.status, c.hash from evaluations e join candidates c on c.id = e.candidate_id order by e.id")
orig = q(run_db, "select e.status, c.hash from evaluations e join candidates c on c.id = e.candidate_id order by e.id")
rej = [json.loads(r[0]) for r in q(run_db, "select json from events where kind = 'precheck_rejected' order by id")
       if isinstance(r[0], str) and r[0].startswith("{")]
calls = q(run_db, "select status, count(*) from llm_calls group by status")
rcalls = q(replay_db, "select status, count(*) from llm_calls group by status")
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
summary = load(out + "/summary.json")
wm = load(out + "/world_model.json")
best_eval = load(out + "/best_eval.json")
res = {
    "what": "issue 22: the LLM planner's whole loop on %s (fake server with hand-written rmsnorm variants), recorded with --llm-cache and replayed offline" % backend,
    "backend": backend,
    "commit": commit, "command": cmd + "  (then the same with --llm-retries 0 and the server stopped)",
    "exit": int(rc), "replay_exit": int(rrc),
    "evaluations": [{"id": e[0], "status": e[1], "score": e[2], "candidate": e[3], "node": e[5],
                     "error": e[6] if len(e) > 6 else None,
                     "head": e[4].splitlines()[2] if isinstance(e[4], str) and len(e[4].splitlines()) > 2 else ""} for e in evals],
    "rejected_before_compiling": rej,
    "llm_calls": dict((a, b) for a, b in calls if isinstance(b, int)),
    "replay_llm_calls": dict((a, b) for a, b in rcalls if isinstance(b, int)),
    "replay_same_candidates_and_statuses": orig == replay and len(orig) > 0,
    "world_model": [{"id": n["id"], "status": n["status"], "choice": n.get("choice"),
                     "score": (n.get("solution") or {}).get("score")} for n in (wm or {}).get("nodes", [])],
    "stopped_because": (summary or {}).get("stopped_because"),
    "best": None,
}
b = (summary or {}).get("best")
if b:
    res["best"] = {"score": b.get("score"), "plan": b.get("plan"), "file": b.get("file"),
                   "workloads": [{k: w.get(k) for k in ("axes", "time_ns_min", "gbps", "roofline_fraction",
                                  "speedup", "baseline_speedup", "device_time_ns_min", "clock_verified")}
                                 for w in b.get("workloads", [])]}
if best_eval:
    res["best_alone"] = {"status": best_eval.get("status"), "score": best_eval.get("score")}
json.dump(res, open(out + "/result.json", "w"), indent=1)
print(json.dumps({k: res[k] for k in ("exit", "replay_exit", "stopped_because", "replay_same_candidates_and_statuses")}))
print("statuses:", ",".join(e["status"] for e in res["evaluations"]))
if res["best"]:
    print("best score %.3f plan %s" % (res["best"]["score"], res["best"]["plan"]))
EOF
log "result: $out/result.json"
