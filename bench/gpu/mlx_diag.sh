#!/usr/bin/env bash
# bench/gpu/mlx_diag.sh — why `ksearch eval --backend mlx` times an MLX
# template at half of MLX's own op when, outside ksearch (mlx_overhead.py),
# the two take the same time (issue 15; H200, 2026-12-04). One device call,
# after stage-mlx.sh, with the carried build:
#   .devcarry/go.sh bash bench/gpu/mlx_diag.sh OUT
# rmsnorm on workloads 6 (8192x8192) and 1 (256x2048): the baseline file
# itself as a candidate (ops form: the same code on both sides, so any gap
# is the candidate's path) and the vec_row template (kernel form), each with
# MLX's CUDA graphs on and off; then the kernel form with --no-timing (the
# integration test's sanity eval, which hung past 140 s in the call before)
# and the executor's probe mode. Each eval under a timeout, stderr kept.
set -u
out=${1:?usage: bench/gpu/mlx_diag.sh OUT}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-mlx-gpu}
ev() { # name env... -- args
  local name=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local t0=$(date +%s.%N)
  env "${envs[@]}" timeout "${TO:-150}" "$ks" eval "$@" --backend mlx --json >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  echo "$name: exit $rc in $(python3 -c "import time;print(round(time.time()-$t0,1))") s: $(python3 - "$out/$name.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("no JSON"); sys.exit()
print(d.get("status"), (d.get("error") or "")[:200], " | ".join(
    "%sx%s cand %.1f us base %s us x%s probe %s" % (w["axes"].get("rows"), w["axes"].get("cols"),
    (w.get("time_ns_min") or 0) / 1e3, round((w.get("baseline_time_ns_min") or 0) / 1e3, 1),
    w.get("baseline_speedup"), w.get("probe_ratio")) for w in d.get("workloads", [])))
PY
)" | tee -a "$out/diag.txt"
  [[ $rc -ne 0 ]] && tail -5 "$out/$name.err" | tee -a "$out/diag.txt"
}
common=(--workloads 6,1 --seeds 1 --min-time 0.05 --min-reps 10)
ev ops MLX_X=1 -- rmsnorm tasks/rmsnorm/baseline/mlx.py "${common[@]}"
ev kern MLX_X=1 -- rmsnorm tasks/rmsnorm/templates/mlx/vec_row.cu "${common[@]}"
ev ops_nograph MLX_USE_CUDA_GRAPHS=0 -- rmsnorm tasks/rmsnorm/baseline/mlx.py "${common[@]}"
ev kern_nograph MLX_USE_CUDA_GRAPHS=0 -- rmsnorm tasks/rmsnorm/templates/mlx/vec_row.cu "${common[@]}"
ev kern_noflush MLX_X=1 -- rmsnorm tasks/rmsnorm/templates/mlx/vec_row.cu "${common[@]}" --no-flush
TO=120 ev sanity MLX_X=1 -- softmax tests/mlx/softmax_kernel.cu --no-timing
timeout 120 python3 tests/integration/mlx_probe.py "$PWD" >"$out/probe.log" 2>&1
echo "mlx_probe.py: exit $? $(tail -3 "$out/probe.log" | tr '\n' ' ')" | tee -a "$out/diag.txt"
