#!/usr/bin/env bash
# Timing must reproduce the order of two correct kernels: a scalar softmax and
# a vectorised one, evaluated alternately 10 times; the vectorised one must be
# faster (by median time on every workload) in at least 9 of the 10 rounds.
# This checks the harness's repeatability, not anybody's speed claim.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
task=$here/tests/timing/softmax_small
rounds=${ROUNDS:-10}
right=0
for i in $(seq 1 "$rounds"); do
  a=$("$ks" eval "$task" "$here/tests/timing/softmax_scalar.c" --json -q --threads 1 --min-time 0.05) || { echo "FAIL scalar eval"; exit 1; }
  b=$("$ks" eval "$task" "$here/tests/timing/softmax_vector.c" --json -q --threads 1 --min-time 0.05) || { echo "FAIL vector eval"; exit 1; }
  verdict=$(python3 - "$a" "$b" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ok = all(wb["time_ns_median"] < wa["time_ns_median"] for wa, wb in zip(a["workloads"], b["workloads"]))
print("yes" if ok else "no", " ".join("%.0f/%.0f" % (wa["time_ns_median"], wb["time_ns_median"]) for wa, wb in zip(a["workloads"], b["workloads"])))
PY
)
  echo "round $i: vector faster: $verdict (scalar/vector ns)"
  [[ $verdict == yes* ]] && right=$((right + 1))
done
need=$(( (rounds * 9 + 9) / 10 ))
if (( right >= need )); then
  echo "timing order: 1 passed, 0 failed ($right of $rounds rounds)"
  exit 0
fi
echo "timing order: 0 passed, 1 failed ($right of $rounds rounds, need $need)"
exit 1
