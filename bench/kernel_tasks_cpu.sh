#!/usr/bin/env bash
# The issue-16 CPU goal (attention and GEMM at least 10x their references,
# with the roofline fraction): the roofline measured before and after, then
# `ksearch run TASK --budget N` on attention_prefill and gemm_bf16, and the
# best candidate's per-workload speedup and roofline fraction, with the load
# average (the machine may be shared). Writes one JSON object to stdout
# (bench/results/ keeps the measured ones).
#   bash bench/kernel_tasks_cpu.sh [BUDGET]   (default 20)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
budget=${1:-20}
tmp=$(mktemp -d)
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-$tmp/cache}
load() { cut -d' ' -f1 /proc/loadavg; }
l0=$(load)
"$ks" roofline --remeasure --json >"$tmp/roof0.json" 2>/dev/null
for t in attention_prefill gemm_bf16; do
  echo "$(load)" >"$tmp/$t.load0"
  "$ks" run "$t" --budget "$budget" --out "$tmp/run-$t" -q --json >"$tmp/$t.json" 2>"$tmp/$t.err"
  echo "$(load)" >"$tmp/$t.load1"
done
"$ks" roofline --remeasure --json >"$tmp/roof1.json" 2>/dev/null
python3 - "$tmp" "$budget" "$l0" "$(git -C "$here" rev-parse HEAD)" "$(nproc)" <<'PY'
import json, sys, os
tmp, budget, l0, commit, ncpu = sys.argv[1:]
r0, r1 = (json.load(open(f"{tmp}/roof{i}.json")) for i in (0, 1))
out = {"commit": commit, "command": f"bash bench/kernel_tasks_cpu.sh {budget}", "cpus": int(ncpu),
       "load_average_start": float(l0),
       "roofline_before": {k: r0[k] for k in ("bandwidth_gbps", "peak_gflops", "isa")},
       "roofline_after": {k: r1[k] for k in ("bandwidth_gbps", "peak_gflops", "isa")}, "tasks": {}}
for t in ("attention_prefill", "gemm_bf16"):
    d = json.load(open(f"{tmp}/{t}.json")); b = d["best"]
    out["tasks"][t] = {"evaluations": d.get("evaluations"), "best_score": b["score"], "best_params": b["params"],
        "plan": b["plan"], "load_average": [float(open(f"{tmp}/{t}.load{i}").read()) for i in (0, 1)],
        "workloads": [{"axes": w["axes"], "speedup": w["speedup"], "roofline_fraction": w["roofline_fraction"],
                       "ceiling": w["ceiling"], "gflops": w["gflops"], "clock_verified": w["clock_verified"]}
                      for w in b["workloads"]]}
print(json.dumps(out, indent=1))
PY
rm -rf "$tmp"
