#!/usr/bin/env bash
# Issue benchmark (the judge out of the candidate's reach): the same fast
# kernel of each built-in task evaluated by two builds of ksearch in
# alternation, in one sitting, so that machine load hits both alike; prints
# each build's median score over ROUNDS and their ratio. The scores must
# agree within noise when the harness change is only about who judges.
#   OLD=/path/to/old/build/ksearch NEW=build/ksearch ROUNDS=3 bash bench/ab_harness.sh
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
old=${OLD:?set OLD to the path of the other build of ksearch}
new=${NEW:-$here/build/ksearch}
rounds=${ROUNDS:-3}
# OLD_HOME / NEW_HOME: each build's data folder (tasks, specs), if not
# beside its binary
score() { # cache, ksearch, task, kernel, home
  KSEARCH_HOME=$5 KSEARCH_CACHE_DIR=$1 "$2" eval "$3" "$4" --json -q 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["score"])'
}
for t in ${TASKS:-softmax rmsnorm layernorm selective_scan}; do
  k=$here/tests/kernels/${t}_fast.c
  score /tmp/ks-ab-old "$old" "$t" "$k" "${OLD_HOME:-}" >/dev/null
  score /tmp/ks-ab-new "$new" "$t" "$k" "${NEW_HOME:-}" >/dev/null
  so=() sn=()
  for r in $(seq "$rounds"); do
    so+=("$(score /tmp/ks-ab-old "$old" "$t" "$k" "${OLD_HOME:-}")")
    sn+=("$(score /tmp/ks-ab-new "$new" "$t" "$k" "${NEW_HOME:-}")")
  done
  python3 - "$t" "${so[*]}" "${sn[*]}" <<'PY'
import statistics, sys
t, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
print("%-15s old %6.2f %s  new %6.2f %s  new/old %.2f" % (t, ma, a, mb, b, mb / ma if ma else 0))
PY
done
