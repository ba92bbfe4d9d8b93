#!/usr/bin/env bash
# Issue benchmark (choosing the best under noise, DESIGN.md: Ratios in one
# sitting): the run-to-run spread of one kernel's reported score, before and
# after the base was timed in the same sitting. N evaluations in a row of
# the same kernel (default tests/kernels/rmsnorm_fast.c on rmsnorm); during
# evaluations LOAD_FROM..LOAD_TO a neighbour streams memory on one core (a
# numpy copy of 256 MiB in a loop), as this shared machine's neighbours do.
# From the same evaluations, per evaluation k:
#   after  = geomean over workloads of (reference time of evaluation k /
#            candidate time of k): the reference timed beside the candidate
#            (the anchor), what `eval` reports now;
#   before = geomean of (reference time of evaluation 1 / candidate time of
#            k): a reference timed once, at the start of a run, as scores
#            were before the anchor.
# Prints both series and their spreads (max/min); goal: after's spread well
# under before's when the load changes mid-run. JSON to OUT if given.
#   [N=10] [LOAD_FROM=4] [LOAD_TO=7] [TASK=rmsnorm KERNEL=file] bash bench/score_spread.sh [OUT]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
task=${TASK:-rmsnorm}
kernel=${KERNEL:-$here/tests/kernels/${task}_fast.c}
n=${N:-10}
lf=${LOAD_FROM:-4}
lt=${LOAD_TO:-7}
out=${1:-}
work=$(mktemp -d /tmp/ks-score-spread.XXXXXX)
hog=
stop_hog() { [[ -n $hog ]] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null; hog=; }
trap 'stop_hog; rm -rf "$work"' EXIT
"$ks" eval "$task" "$kernel" --json -q >/dev/null 2>&1 # reference outputs, build
for i in $(seq "$n"); do
  if [[ $i -eq $lf ]]; then
    python3 -c '
import numpy as np
a = np.ones(1 << 25); b = np.empty_like(a)
while True:
    np.copyto(b, a)' &
    hog=$!
  fi
  "$ks" eval "$task" "$kernel" --json -q >"$work/e$i.json" 2>/dev/null
  [[ $i -eq $lt ]] && stop_hog
  echo "evaluation $i done$([[ $i -ge $lf && $i -le $lt ]] && echo ' (neighbour streaming)')"
done
stop_hog
python3 - "$work" "$n" "$lf" "$lt" "$task" "$kernel" "$out" <<'PY'
import json, math, os, subprocess, sys
work, n, lf, lt, task, kernel, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
ev = [json.load(open(f"{work}/e{i}.json")) for i in range(1, n + 1)]
def ref(w): return w.get("reference_time_ns_min") or 0
def cand(w): return w.get("time_ns_min") or 0
first = {json.dumps(w["axes"], sort_keys=True): ref(w) for w in ev[0]["workloads"]}
after, before, reported = [], [], []
for e in ev:
    la, lb, m = 0.0, 0.0, 0
    for w in e["workloads"]:
        k = json.dumps(w["axes"], sort_keys=True)
        if ref(w) > 0 and cand(w) > 0 and first.get(k, 0) > 0:
            la += math.log(ref(w) / cand(w)); lb += math.log(first[k] / cand(w)); m += 1
    after.append(math.exp(la / m) if m else 0)
    before.append(math.exp(lb / m) if m else 0)
    reported.append(e.get("score", 0))
spread = lambda xs: max(xs) / min(xs) if xs and min(xs) > 0 else 0
res = {"task": task, "kernel": os.path.relpath(kernel), "evaluations": n,
       "neighbour_streaming_during": [lf, lt],
       "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
       "command": "bash bench/score_spread.sh", "load_average": open("/proc/loadavg").read().split()[:3],
       "after_in_one_sitting": after, "before_reference_timed_once": before, "reported_score": reported,
       "spread_after": spread(after), "spread_before": spread(before), "spread_reported": spread(reported)}
for k in range(n):
    tag = " (neighbour)" if lf <= k + 1 <= lt else ""
    print(f"evaluation {k + 1:2d}: after {after[k]:.3f}  before {before[k]:.3f}  reported {reported[k]:.3f}{tag}")
print(f"spread (max/min): after {res['spread_after']:.3f}, before {res['spread_before']:.3f}, reported score {res['spread_reported']:.3f}")
if out:
    json.dump(res, open(out, "w"), indent=1)
PY
