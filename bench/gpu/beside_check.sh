#!/usr/bin/env bash
# Device check of the paired comparison (DESIGN.md: Evaluation, Another
# candidate as the anchor; Final tournament) on the cuda backend: rmsnorm's
# block_row template beside itself (beside_ratio should be 1 within a few
# percent), beside warp_row (a steady ratio, either side of 1), and a small
# search whose final tournament times each finalist beside the yardstick.
# Prints one line per evaluation and the tournament's note. About 2-3
# minutes on the H200.
#   bash bench/gpu/beside_check.sh
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
t=$here/tasks/rmsnorm/templates/cuda
show() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
w = [x for x in d.get("workloads", []) if x.get("anchor_reps")]
print("%-28s status %-12s score %.3f beside_ratio %.4f anchor_reps %s %s" % (sys.argv[1], d["status"], d.get("score", 0),
      d.get("beside_ratio", 0), [x["anchor_reps"] for x in w], d.get("error", "")[:200]))' "$1"
}
for i in 1 2 3; do
  "$ks" eval rmsnorm "$t/block_row.cu" --backend cuda --beside "$t/block_row.cu" --json -q | show "block_row beside itself"
done
for i in 1 2 3; do
  "$ks" eval rmsnorm "$t/block_row.cu" --backend cuda --beside "$t/warp_row.cu" --json -q | show "block_row beside warp_row"
done
out=$(mktemp -d /tmp/ks-beside.XXXXXX)
"$ks" run rmsnorm --backend cuda --budget 10 --finalists 4 --rounds 4 --out "$out/run" --json -q >/dev/null 2>"$out/err"
echo "run exit $?"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1])).get("tournament", {})
for f in t.get("finalists", []):
    print("finalist %s ratios %s eliminated_after %s failed %s" % (f["candidate_id"], ["%.3f" % r for r in f["ratios"]], f["eliminated_after"], f["failed"]))
print("tournament:", t.get("note"))' "$out/run/summary.json" || tail -5 "$out/err"
rm -rf "$out"
