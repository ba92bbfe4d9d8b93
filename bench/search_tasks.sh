#!/usr/bin/env bash
# Issue benchmark: per built-in task, `ksearch run --budget N` (default 60) on
# the CPU backend; prints the best score over the reference and the roofline
# fraction of the best kernel on the largest workload, from each run's own
# summary (ratios measured in that run). Goals: softmax, rmsnorm, layernorm
# >= 0.7 of the measured streaming bandwidth; selective_scan >= 10x.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
budget=${BUDGET:-60}
out=${OUT:-$(mktemp -d /tmp/ksearch-bench.XXXXXX)}
printf "%-16s %8s %10s %22s %s\n" task budget score "roofline (largest wl)" "best plan"
for t in ${TASKS:-softmax rmsnorm layernorm selective_scan}; do
  s=$("$ks" run "$t" --budget "$budget" --stagnation "$budget" --out "$out/$t" --json -q) || { echo "$t: run failed"; continue; }
  python3 - "$t" "$budget" "$s" <<'PY'
import json, sys
t, budget, s = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
b = s["best"]
if not b:
    print("%-16s %8s %10s" % (t, budget, "none")); sys.exit()
def size(w): 
    p = 1
    for v in w["axes"].values(): p *= v
    return p
big = max(b["workloads"], key=size)
print("%-16s %8s %9.2fx %21.0f%% %s" % (t, budget, b["score"], 100 * big["roofline_fraction"], " > ".join(b["plan"])))
PY
done
echo "runs kept in $out"
