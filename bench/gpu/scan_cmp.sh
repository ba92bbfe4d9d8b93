#!/usr/bin/env bash
# bench/gpu/scan_cmp.sh — issue 14's selective_scan goal in one device call
# (DESIGN.md: Evaluation; README: CUDA): `ksearch eval` of the naive fused
# baseline, bc_shared at the search's best (EXP=1), chunked_prefix at its
# best (NCH=16) and the warp_scan template at its defaults and a few
# parameter points, on the task's GPU workloads, then one table: device time
# (minimum) per shape, x the naive baseline (baseline_speedup), x bc_shared, and for
# b1 d1536 L1024 x torch's per-step loop (TORCH_MS, default 54.7 ms, the
# 2026-12-03c anchor). warp_scan's defaults are also checked on every
# workload of the task (the small odd CI shapes too, --no-timing), CPW=2
# NU=4 on the small ones.
#   bench/gpu/scan_cmp.sh [OUTDIR]   (from the repo root; ~1-2 minutes)
set -u
out=${1:-/tmp/scan_cmp}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu}
wl=$(python3 bench/gpu/gpu_workloads.py selective_scan)
t=tasks/selective_scan
ev() { # NAME FILE [--param K=V...]
  local name=$1 file=$2
  shift 2
  "$ks" eval selective_scan "$file" --backend cuda --workloads "$wl" --json -q \
    --seeds 1 "$@" >"$out/$name.json" 2>"$out/$name.err"
}
"$ks" eval selective_scan $t/templates/cuda/warp_scan.cu --backend cuda --json \
  -q --seeds 1 --no-timing >"$out/all_workloads.json" 2>"$out/all_workloads.err"
small=$(python3 -c 'import json; t = json.load(open("tasks/selective_scan/task.json"))
print(",".join(str(i) for i, w in enumerate(t["workloads"]) if "device" not in w))')
"$ks" eval selective_scan $t/templates/cuda/warp_scan.cu --backend cuda --json \
  -q --seeds 1 --no-timing --workloads "$small" --param CPW=2 --param NU=4 \
  >"$out/small_CPW2.json" 2>"$out/small_CPW2.err"
ev baseline $t/baseline/cuda.cu
ev bc_shared_EXP1 $t/templates/cuda/bc_shared.cu --param EXP=1
ev chunked_prefix_NCH16 $t/templates/cuda/chunked_prefix.cu --param NCH=16
ev warp_scan $t/templates/cuda/warp_scan.cu
ev warp_scan_I8 $t/templates/cuda/warp_scan.cu --param ITEMS=8
ev warp_scan_NU4 $t/templates/cuda/warp_scan.cu --param NU=4
ev warp_scan_W8 $t/templates/cuda/warp_scan.cu --param WARPS=8
ev warp_scan_CPW2 $t/templates/cuda/warp_scan.cu --param CPW=2
ev warp_scan_CPW2_NU4_W2 $t/templates/cuda/warp_scan.cu --param CPW=2 \
  --param NU=4 --param WARPS=2
OUT=$out TORCH_MS=${TORCH_MS:-54.7} python3 - <<'EOF'
import json, os
out = os.environ["OUT"]
torch_ms = float(os.environ["TORCH_MS"])
def load(n):
    try:
        return json.load(open(f"{out}/{n}.json"))
    except Exception as e:
        err = open(f"{out}/{n}.err").read()[-300:] if os.path.exists(f"{out}/{n}.err") else ""
        return {"status": "no JSON", "error": f"{e} {err}"}
for n, what in [("all_workloads", "warp_scan defaults, every workload of the task"),
                ("small_CPW2", "warp_scan CPW=2 NU=4, the task's CPU-sized workloads")]:
    a = load(n)
    print(what, "(correctness):", a.get("status"), (a.get("error") or "")[:300])
    for w in a.get("workloads", []):
        print("   ", w["axes"], "correct" if w.get("correct") else "WRONG",
              "max_abs_err %.3g max_rel_err %.3g" % (w.get("max_abs_err", -1), w.get("max_rel_err", -1)))
names = ["baseline", "bc_shared_EXP1", "chunked_prefix_NCH16", "warp_scan",
         "warp_scan_I8", "warp_scan_NU4", "warp_scan_W8", "warp_scan_CPW2",
         "warp_scan_CPW2_NU4_W2"]
res = {n: load(n) for n in names}
def shapes(d):
    r = {}
    for w in d.get("workloads", []):
        ax = w["axes"]
        r["b%d d%d L%d" % (ax["batch"], ax["dim"], ax["seqlen"])] = w
    return r
bc = shapes(res["bc_shared_EXP1"])
keys = list(shapes(res["warp_scan"]) or bc)
print("%-22s %-6s" % ("kernel", "status") + "".join(
    " | %-34s" % (k + ": us  x naive  x bc_shared") for k in keys) + " | x torch loop (b1)")
for n in names:
    d = res[n]
    s = shapes(d)
    row = "%-22s %-6s" % (n, str(d.get("status"))[:6])
    tor = ""
    for k in keys:
        w = s.get(k)
        if not w or not w.get("device_time_ns_min"):
            row += " | %-34s" % "-"
            continue
        us = w["device_time_ns_min"] / 1e3
        vb = bc[k]["device_time_ns_min"] / 1e3 / us if k in bc and bc[k].get("device_time_ns_min") else float("nan")
        row += " | %9.1f  %7.2f  %9.2f      " % (us, w.get("baseline_speedup", float("nan")), vb)
        if k.startswith("b1 "):
            tor = "%.0f" % (torch_ms * 1e3 / us)
    print(row + " | " + tor)
    if d.get("status") != "ok":
        print("   ", (d.get("error") or "")[:300])
EOF
