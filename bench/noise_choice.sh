#!/usr/bin/env bash
# Issue benchmark (choosing the best under noise, DESIGN.md: Final
# tournament, Built-in planner noise): rmsnorm's `row_blocked` template
# alone, on the one workload 1024 x 8192.
#  1. The table: its 81 configurations evaluated exhaustively in PASSES
#     shuffled passes (default 1): only to find the leading TOP (default 8).
#  2. The truth: TRUTH_PASSES passes (default 8) over those TOP, each
#     evaluated beside a fixed anchor (the table's best) with `ksearch eval
#     --beside`: the anchor runs after every timed repetition of each, on
#     the same inputs, so each pass gives a ratio to the anchor measured in
#     the same seconds (the anchor beside itself too: its place in the order
#     cancels). The true order is the median ratio over passes; its own
#     uncertainty is stated: the paired per-pass ratios of the true best
#     over the runner-up, their median and a distribution-free interval
#     (order statistics, >= 90% where the passes allow), and whether the
#     two are told apart at all.
#  3. SEEDS searches of BUDGET evaluations (built-in planner, final
#     tournament on). Per search: the reported best's configuration, its
#     true ratio against the true best's (goal: within 3% in every seed;
#     a pick outside the TOP is timed afterwards the same way, TRUTH_PASSES
#     passes beside the anchor, and says so), and the evaluation at which
#     the true best was first evaluated, and the one at which any
#     configuration within 3% of it (by the truth) was.
# Writes JSON to OUT (default bench/results/noise-choice-cpu-DATE.json, the
# table and the truth's passes included) and prints a summary. TABLE_FROM=an
# earlier result JSON reuses its table (step 1) only.
#   [PASSES=1] [TOP=8] [TRUTH_PASSES=8] [SEEDS=5] [BUDGET=20] [TABLE_FROM=J] \
#     [FINALISTS=N] [ROUNDS=N] [TIE_ROUNDS=N] [TIE_AB=1] [NOISE=1] \
#     bash bench/noise_choice.sh [OUT]
# Smoke test (a minute; proves the plumbing, measures nothing):
#   CONFIGS=6 TOP=3 TRUTH_PASSES=2 SEEDS=1 BUDGET=4 FINALISTS=3 ROUNDS=2 \
#     bash bench/noise_choice.sh /tmp/noise-smoke.json
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
passes=${PASSES:-1} seeds=${SEEDS:-5} budget=${BUDGET:-20}
top=${TOP:-8} truth_passes=${TRUTH_PASSES:-8}
out=${1:-$here/bench/results/noise-choice-cpu-$(date +%Y-%m-%d).json}
tmp=$(mktemp -d /tmp/ks-noise.XXXXXX)
# NOISE=1: a neighbour for the whole run, as this machine's were when the
# issue was measured: one thread copying 256 MiB (memory traffic, and a
# core taken from the kernel's two) for 0.2-2 s at random, then idle
# 0.2-2 s. Its pattern is seeded, so two runs see the same kind of noise.
noise_pid=
if [[ ${NOISE:-0} == 1 ]]; then
  python3 "$here/bench/neighbour.py" 7 &
  noise_pid=$!
  trap '[[ -n $noise_pid ]] && kill $noise_pid 2>/dev/null' EXIT
fi
export KSEARCH_CACHE_DIR=$tmp/cache
task=$tmp/rmsnorm_rb
mkdir -p "$task/templates/c"
cp "$here/tasks/rmsnorm/reference.c" "$task/"
# the issue's grid: VEC x ROWS x SCHED x CHUNK (81); STORE stays at its
# default (0, ordinary stores), as when the issue was measured
grep -v '^// ksearch: param STORE ' "$here/tasks/rmsnorm/templates/c/row_blocked.c" >"$task/templates/c/row_blocked.c"
python3 - "$here/tasks/rmsnorm/task.json" "$task/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["name"] = "rmsnorm_rb"
t["workloads"] = [w for w in t["workloads"] if w.get("rows") == 1024 and w.get("cols") == 8192] or [{"rows": 1024, "cols": 8192}]
for w in t["workloads"]:
    w.pop("device", None)
json.dump(t, open(sys.argv[2], "w"), indent=1)
PY
# the class spec is rmsnorm's: the task keeps "class": "rmsnorm"
configs=$(python3 -c '
import itertools
for v in itertools.product(["8","16","4"], ["4","2","8"], ["0","1","2"], ["0","1","16"]):
    print("VEC=%s,ROWS=%s,SCHED=%s,CHUNK=%s" % v)')
: >"$tmp/table.txt"
if [[ -n ${TABLE_FROM:-} ]]; then
  python3 - "$TABLE_FROM" >"$tmp/table.txt" <<'PY'
import json, sys
for c, scores in json.load(open(sys.argv[1]))["table"].items():
    for p, s in enumerate(scores):
        print(p + 1, c, s)
PY
  passes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["passes"])' "$TABLE_FROM")
fi
# CONFIGS=N: only N of them (a smoke test; the true best may be missed)
[[ -n ${CONFIGS:-} ]] && configs=$(shuf <<<"$configs" | head -n "$CONFIGS")
for p in $( [[ -n ${TABLE_FROM:-} ]] || seq "$passes"); do
  for c in $(shuf <<<"$configs"); do
    args=()
    IFS=, read -ra kv <<<"$c"
    for x in "${kv[@]}"; do args+=(--param "$x"); done
    s=$("$ks" eval "$task" "$task/templates/c/row_blocked.c" "${args[@]}" --seeds 1 --json -q 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["score"] if d["status"]=="ok" else 0)' 2>/dev/null)
    echo "$p $c ${s:-0}" >>"$tmp/table.txt"
  done
done
# the truth: the table's leaders, each beside the table's best, per pass
python3 - "$tmp/table.txt" "$top" >"$tmp/top.txt" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    p, c, s = line.split()
    t.setdefault(c, []).append(float(s))
for c in sorted(t, key=lambda c: statistics.mean(t[c]), reverse=True)[:int(sys.argv[2])]:
    print(c)
PY
anchor=$(head -1 "$tmp/top.txt")
aargs=()
IFS=, read -ra kv <<<"$anchor"
for x in "${kv[@]}"; do aargs+=(--beside-param "$x"); done
: >"$tmp/truth.txt"
for p in $(seq "$truth_passes"); do
  for c in $(shuf "$tmp/top.txt"); do
    args=()
    IFS=, read -ra kv <<<"$c"
    for x in "${kv[@]}"; do args+=(--param "$x"); done
    r=$("$ks" eval "$task" "$task/templates/c/row_blocked.c" "${args[@]}" --beside "$task/templates/c/row_blocked.c" "${aargs[@]}" --seeds 1 --json -q 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("beside_ratio", 0) if d["status"]=="ok" else 0)' 2>/dev/null)
    echo "$p $c ${r:-0}" >>"$tmp/truth.txt"
  done
done
# TIE_AB=1: every seed searched twice in a row, with the default tie-break
# rounds (run$s) and with none (run$((seeds + s))), judged by one truth
runs=$seeds
[[ ${TIE_AB:-0} == 1 ]] && runs=$((2 * seeds))
for s in $(seq "$seeds"); do
  "$ks" run "$task" --budget "$budget" --seed "$s" --out "$tmp/run$s" ${FINALISTS:+--finalists "$FINALISTS"} ${ROUNDS:+--rounds "$ROUNDS"} ${TIE_ROUNDS:+--tie-rounds "$TIE_ROUNDS"} --json -q >"$tmp/run$s.json" 2>"$tmp/run$s.err"
  if [[ ${TIE_AB:-0} == 1 ]]; then
    b=$((seeds + s))
    "$ks" run "$task" --budget "$budget" --seed "$s" --out "$tmp/run$b" ${FINALISTS:+--finalists "$FINALISTS"} ${ROUNDS:+--rounds "$ROUNDS"} --tie-rounds 0 --json -q >"$tmp/run$b.json" 2>"$tmp/run$b.err"
  fi
done
# 4. the truth for the reported picks outside the leaders: the same passes
# beside the same anchor (a single table pass is as noisy as one evaluation,
# 8% here: a pick scored from it could read 0.8 by bad luck)
for s in $(seq "$runs"); do
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["best"]["params"]; print(",".join("%s=%s" % (k, p[k]) for k in ("VEC","ROWS","SCHED","CHUNK")))' "$tmp/run$s/summary.json" 2>/dev/null
done | sort -u | grep -vxF -f "$tmp/top.txt" >"$tmp/picks.txt"
for p in $( [[ -s $tmp/picks.txt ]] && seq "$truth_passes"); do
  for c in $(shuf "$tmp/picks.txt"); do
    args=()
    IFS=, read -ra kv <<<"$c"
    for x in "${kv[@]}"; do args+=(--param "$x"); done
    r=$("$ks" eval "$task" "$task/templates/c/row_blocked.c" "${args[@]}" --beside "$task/templates/c/row_blocked.c" "${aargs[@]}" --seeds 1 --json -q 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("beside_ratio", 0) if d["status"]=="ok" else 0)' 2>/dev/null)
    echo "$p $c ${r:-0}" >>"$tmp/picks_truth.txt"
  done
done
python3 - "$tmp" "$runs" "$passes" "$budget" "$out" "$(git -C "$here" rev-parse HEAD 2>/dev/null)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$truth_passes" "$anchor" <<'PY'
import json, math, sqlite3, statistics, sys
tmp, seeds, passes, budget, out, commit, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
truth_passes, anchor = int(sys.argv[8]), sys.argv[9]
table = {}
for line in open(tmp + "/table.txt"):
    p, c, s = line.split()
    table.setdefault(c, []).append(float(s))
key = lambda params: ",".join("%s=%s" % (k, params[k]) for k in ("VEC", "ROWS", "SCHED", "CHUNK"))
tmean = {c: statistics.mean(v) for c, v in table.items()}
# the truth: per pass, each leader's ratio to the anchor measured beside it
passes_r = {}
for line in open(tmp + "/truth.txt"):
    p, c, r = line.split()
    passes_r.setdefault(c, {})[int(p)] = float(r)
true = {c: statistics.median([x for x in v.values() if x > 0]) for c, v in passes_r.items() if any(x > 0 for x in v.values())}
order = sorted(true, key=true.get, reverse=True)
# the reported picks outside the leaders, timed the same way after the
# searches (step 4): scored as "truth" too, never made the true best
picks_r = {}
try:
    for line in open(tmp + "/picks_truth.txt"):
        p, c, r = line.split()
        picks_r.setdefault(c, {})[int(p)] = float(r)
except OSError:
    pass
picks_true = {c: statistics.median([x for x in v.values() if x > 0]) for c, v in picks_r.items() if any(x > 0 for x in v.values())}
best, best_s = order[0], true[order[0]]
def binom_cdf(n, c):
    return sum(math.comb(n, i) for i in range(c + 1)) / 2 ** n
def median_ci(q):
    q = sorted(q)
    n, k = len(q), 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * binom_cdf(n, k) >= 0.9:
        k += 1
    return q[k - 1], q[n - k], 1 - 2 * binom_cdf(n, k - 1)
# the truth's own uncertainty: the true best over the runner-up, pass by pass
q = [passes_r[best][p] / passes_r[order[1]][p] for p in passes_r[best] if passes_r[best][p] > 0 and passes_r[order[1]].get(p, 0) > 0]
lo, hi, conf = median_ci(q) if q else (0, 0, 0)
truth_unc = {"best_over_runner_up": statistics.median(q) if q else None, "interval": [lo, hi], "confidence": conf,
             "told_apart": lo > 1, "passes": len(q),
             "per_config_spread": {c: max(v.values()) / min(x for x in v.values() if x > 0) for c, v in passes_r.items() if any(x > 0 for x in v.values())}}
spread = statistics.median(truth_unc["per_config_spread"].values())
def vs_best(k):
    if k in true:
        return true[k] / best_s, "truth"
    if k in picks_true:
        return picks_true[k] / best_s, "truth (timed after the searches)"
    # outside the leaders: from the table, over the anchor's table score
    return (tmean.get(k, 0) / tmean[anchor] / best_s if tmean.get(anchor) else 0), "table"
ab = __import__("os").environ.get("TIE_AB") == "1"
half = seeds // 2 if ab else seeds
runs = []
for s in range(1, seeds + 1):
    r = {"seed": s if s <= half else s - half}
    if ab:
        r["variant"] = "tie-break rounds (default)" if s <= half else "--tie-rounds 0"
    try:
        summ = json.load(open("%s/run%d/summary.json" % (tmp, s)))
        params = summ["best"]["params"]
        k = key(params)
        r["reported"] = k
        r["reported_score"] = summ["best"]["score"]
        r["true_ratio_of_reported"] = true.get(k)
        r["vs_true_best"], r["vs_from"] = vs_best(k)
        tj = summ.get("tournament", {})
        r["tournament"] = tj.get("note")
        ids = {f["candidate_id"]: f for f in tj.get("finalists", [])}
        r["tournament_evaluations"] = sum(len(f.get("ratios", [])) for f in ids.values())
        db = sqlite3.connect("file:%s/run%d/ksearch.db?mode=ro" % (tmp, s), uri=True)
        first = None
        cid = {}
        for i, (pj, ci) in enumerate(db.execute("select c.params_json, c.id from evaluations e join candidates c on c.id = e.candidate_id order by e.id")):
            cid[ci] = key(json.loads(pj))
            if first is None and key(json.loads(pj)) == best:
                first = i + 1
        r["true_best_first_evaluated_at"] = first
        r["tie_settlements"] = summ.get("tie_settlements", 0)
        # when the search first evaluated what it reported (budget units:
        # a tie settlement costs 2, and the ones before it count)
        rep_first = None
        for i, (pj,) in enumerate(db.execute("select c.params_json from evaluations e join candidates c on c.id = e.candidate_id order by e.id")):
            if key(json.loads(pj)) == k:
                rep_first = i + 1
                break
        r["reported_first_evaluated_at"] = rep_first
        # when the search first evaluated any configuration within 3% of
        # the true best by the truth (the leaders and the picks timed
        # beside the anchor; one outside them counts as not within: this
        # can only make the figure later)
        near = None
        for i, (pj,) in enumerate(db.execute("select c.params_json from evaluations e join candidates c on c.id = e.candidate_id order by e.id")):
            v = true.get(key(json.loads(pj)), picks_true.get(key(json.loads(pj))))
            if v is not None and v >= 0.97 * best_s:
                near = i + 1
                break
        r["within_3pct_first_evaluated_at"] = near
        r["true_best_in_final"] = any(cid.get(i) == best for i in ids)
    except Exception as e:
        r["error"] = str(e)
    runs.append(r)
ok = sum(1 for r in runs if r.get("vs_true_best", 0) >= 0.97)
by_variant = {}
for r in runs:
    v = by_variant.setdefault(r.get("variant", "all"), [0, 0, 0])
    v[0] += r.get("vs_true_best", 0) >= 0.97
    v[1] += 1
    v[2] += r.get("tournament_evaluations", 0)
nears = [r["within_3pct_first_evaluated_at"] for r in runs if r.get("within_3pct_first_evaluated_at")]
cg = [l.strip().split(":", 2)[2] for l in open("/proc/self/cgroup") if l.split(":")[1] in ("cpu", "cpu,cpuacct")]
env = __import__("os").environ
cmd = " ".join("%s=%s" % (k, env[k]) for k in ("NOISE", "TIE_AB", "TIE_ROUNDS", "FINALISTS", "ROUNDS", "SEEDS", "BUDGET", "TABLE_FROM") if env.get(k))
res = {"commit": commit, "command": (cmd + " " if cmd else "") + "bash bench/noise_choice.sh", "load_average": load,
       "noise": "a neighbour copying 256 MiB on one thread 0.2-2 s on, 0.2-2 s off (NOISE=1)" if env.get("NOISE") == "1" else "none added",
       "cpu_cgroup": cg[0] if cg else None,
       "table_from": __import__("os").environ.get("TABLE_FROM"),
       "workload": "rmsnorm row_blocked 1024x8192", "passes": passes, "truth_passes": truth_passes,
       "budget": budget, "anchor": anchor,
       "true_best": best, "true_best_ratio": best_s, "runner_up": order[1], "runner_up_ratio": true[order[1]],
       "true_order": [[c, true[c]] for c in order], "truth_uncertainty": truth_unc,
       "median_truth_pass_spread": spread,
       "runs": runs, "within_3pct": "%d of %d" % (ok, len(runs)),
       "within_3pct_by_variant": {k: "%d of %d (tournament evaluations %d)" % tuple(v) for k, v in by_variant.items()},
       "within_3pct_first_evaluated_at_median": statistics.median(nears) if nears else None,
       "reported_first_evaluated_at_median": statistics.median([r["reported_first_evaluated_at"] for r in runs if r.get("reported_first_evaluated_at")] or [0]), "table": table, "truth_passes_raw": passes_r, "picks_truth_raw": picks_r}
json.dump(res, open(out, "w"), indent=1)
print("true best %s (ratio to the anchor %.3f), runner-up %s (%.3f)" % (best, best_s, order[1], true[order[1]]))
print("truth's own uncertainty: best / runner-up %.3f, interval %.3f to %.3f (%.0f%%, %d passes): %s; median per-config spread over passes %.1f%%" % (
    truth_unc["best_over_runner_up"] or 0, lo, hi, 100 * conf, len(q), "told apart" if lo > 1 else "NOT told apart: a pick of the runner-up is within the truth's noise", 100 * (spread - 1)))
for r in runs:
    print("%sseed %d: reported %s -> %.3f of the true best (%s), first evaluated at %s; true best first evaluated at %s, in the final: %s; tie settlements %s; %s" % (r.get("variant", "") + ": " if r.get("variant") else "", r["seed"], r.get("reported"), r.get("vs_true_best", 0), r.get("vs_from"), r.get("reported_first_evaluated_at"), r.get("true_best_first_evaluated_at"), r.get("true_best_in_final"), r.get("tie_settlements"), r.get("tournament")))
print("within 3%%: %s; a configuration within 3%% of the true best first evaluated at a median %s (per seed %s); the reported one at a median %s  (%s)" % (
    res["within_3pct"], res["within_3pct_first_evaluated_at_median"], [r.get("within_3pct_first_evaluated_at") for r in runs],
    res["reported_first_evaluated_at_median"], out))
if ab:
    print("by variant: %s" % res["within_3pct_by_variant"])
PY
rm -rf "$tmp"
