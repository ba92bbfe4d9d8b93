#!/usr/bin/env bash
# Issue benchmark (the judge out of the candidate's reach: "the searches'
# best kernels score the same before and after within noise"): per built-in
# task, `ksearch run --budget N` with two builds in alternation, in one
# sitting, each with its own cache; prints each build's best score and the
# ratio new/old, and writes one JSON line per task to OUT_JSON if set.
#   OLD=/path/old/build/ksearch OLD_HOME=/path/old [NEW=build/ksearch]
#   [BUDGET=20] [TASKS="softmax rmsnorm layernorm selective_scan"]
#   [NEW_ARGS="--finalists 0"] bash bench/ab_search.sh
# NEW_ARGS: options only the new build knows (--finalists 0 reports the
# best recorded score, as a build without the final tournament does).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
old=${OLD:?set OLD to the path of the other build of ksearch}
new=${NEW:-$here/build/ksearch}
budget=${BUDGET:-20}
tmp=$(mktemp -d /tmp/ks-ab-search.XXXXXX)
best() { # cache, ksearch, home, task, out, extra options: the best score
  KSEARCH_HOME=$3 KSEARCH_CACHE_DIR=$1 "$2" run "$4" --budget "$budget" \
    --stagnation "$budget" --out "$5" --json -q "${@:6}" 2>/dev/null |
    python3 -c 'import json,sys; b=json.load(sys.stdin)["best"]; print(b["score"] if b else 0)'
}
for t in ${TASKS:-softmax rmsnorm layernorm selective_scan}; do
  so=$(best "$tmp/cache-old" "$old" "${OLD_HOME:-}" "$t" "$tmp/old-$t")
  # shellcheck disable=SC2086
  sn=$(best "$tmp/cache-new" "$new" "${NEW_HOME:-}" "$t" "$tmp/new-$t" ${NEW_ARGS:-})
  line=$(python3 -c "
import json,sys
o, n = float('$so' or 0), float('$sn' or 0)
print(json.dumps({'task': '$t', 'budget': $budget, 'old_best': o, 'new_best': n, 'new_over_old': n / o if o else None}))")
  echo "$line"
  [[ -n ${OUT_JSON:-} ]] && echo "$line" >>"$OUT_JSON"
done
rm -rf "$tmp"
