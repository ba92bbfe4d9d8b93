#!/usr/bin/env bash
# Issue benchmark: evaluations needed to reach 95% of the best score, for the
# world-model planner and for random search over the same templates and
# parameters, same budget, several seeds each. "Best" is the best score any
# of the runs found for the task (so a run that stalls early is not called
# efficient); a run that never gets there counts as budget+1. Medians compared.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
task=${TASK:-softmax}
budget=${BUDGET:-20}
seeds=${SEEDS:-5}
out=${OUT:-$(mktemp -d /tmp/ksearch-eff.XXXXXX)}
for planner in builtin random; do
  for seed in $(seq 1 "$seeds"); do
    "$ks" run "$task" --planner "$planner" --seed "$seed" --budget "$budget" --stagnation 0 \
      --out "$out/$planner-$seed" --json -q >/dev/null || echo "run $planner $seed failed"
  done
done
python3 - "$out" "$budget" "$seeds" <<'PY'
import json, os, sqlite3, statistics, sys
out, budget, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
curves = {}
for p in ("builtin", "random"):
    for s in range(1, seeds + 1):
        db = os.path.join(out, "%s-%d" % (p, s), "ksearch.db")
        rows = sqlite3.connect(db).execute(
            "select score, correct from evaluations where status not in ('running','interrupted') order by id").fetchall()
        best, curve = 0.0, []
        for score, ok in rows:
            if ok and score and score > best: best = score
            curve.append(best)
        curves[(p, s)] = curve
top = max(max(c) if c else 0 for c in curves.values())
def reach(curve, target):
    for i, v in enumerate(curve):
        if v >= target: return i + 1
    return budget + 1
for p in ("builtin", "random"):
    own = [reach(curves[(p, s)], 0.95 * max(curves[(p, s)])) for s in range(1, seeds + 1)]
    glob = [reach(curves[(p, s)], 0.95 * top) for s in range(1, seeds + 1)]
    finals = [max(curves[(p, s)]) for s in range(1, seeds + 1)]
    print("%-8s evals to 95%% of best-of-all (%.2fx): %s median %s | to 95%% of own final: median %s | final best median %.2fx"
          % (p, top, glob, statistics.median(glob), statistics.median(own), statistics.median(finals)))
PY
echo "runs kept in $out"
