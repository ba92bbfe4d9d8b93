#!/usr/bin/env bash
# Issue benchmark (OpenCL backend): per built-in task, the best OpenCL kernel
# on this machine's OpenCL device (PoCL on the CPU here) against the best C
# kernel, each found by `ksearch run --budget N` (default 20) on its backend,
# then both re-evaluated back to back in this script run, so the ratio is
# measured under the same conditions:
#   ratio = geometric mean over workloads of t_C / t_OpenCL (> 1: OpenCL
#           faster), wall-clock medians, transfers excluded for both
#   roofline = each kernel's mean roofline fraction over the workloads,
#           against its own backend's measured roofline (`ksearch roofline
#           --backend c|opencl`), and on the largest workload
# Skipped, with what to install, where no OpenCL platform exists.
#   BUDGET=N  evaluations per search (default 20)   TASKS="softmax ..."
#   OUT=DIR   where the runs are kept              MIN_TIME=S (default 0.2)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
budget=${BUDGET:-20}
min_time=${MIN_TIME:-0.2}
out=${OUT:-$(mktemp -d /tmp/ksearch-bench-opencl.XXXXXX)}
if ! devs=$("$ks" roofline --backend opencl --list 2>&1); then
  echo "opencl_vs_c: skipped: $devs"
  exit 0
fi
echo "OpenCL device: $(grep '^\*' <<<"$devs")"
printf "%-15s %9s %9s %8s %17s %17s  %s | %s\n" task "C score" "CL score" \
  "CL/C" "C roofline" "CL roofline" "best C plan" "best OpenCL plan"
for t in ${TASKS:-softmax rmsnorm layernorm selective_scan}; do
  for b in c opencl; do
    "$ks" run "$t" --backend "$b" --budget "$budget" --stagnation "$budget" \
      --out "$out/$t-$b" --json -q >"$out/$t-$b.json" || echo "$t: $b run failed"
  done
  fc=$out/$t-c/best/$t.c fo=$out/$t-opencl/best/$t.c
  if [[ ! -f $fc || ! -f $fo ]]; then
    echo "$t: no correct kernel on one of the backends"
    continue
  fi
  # back to back, same conditions: C, OpenCL, C, OpenCL; the better of each
  for i in 1 2; do
    "$ks" eval "$t" "$fc" --backend c --json -q --min-time "$min_time" >"$out/$t-c-eval$i.json"
    "$ks" eval "$t" "$fo" --backend opencl --json -q --min-time "$min_time" >"$out/$t-opencl-eval$i.json"
  done
  python3 - "$t" "$out" <<'PY'
import json, math, sys
t, out = sys.argv[1], sys.argv[2]
def best(b):
    evs = [json.load(open("%s/%s-%s-eval%d.json" % (out, t, b, i))) for i in (1, 2)]
    evs = [e for e in evs if e["status"] == "ok"]
    return max(evs, key=lambda e: e["score"]) if evs else None
c, o = best("c"), best("opencl")
if not c or not o:
    print("%-15s evaluation failed" % t); sys.exit()
def size(w):
    p = 1
    for v in w["axes"].values(): p *= v
    return p
ratio = math.exp(sum(math.log(a["time_ns_median"] / b["time_ns_median"])
                     for a, b in zip(c["workloads"], o["workloads"])) / len(c["workloads"]))
def roof(e):
    ws = e["workloads"]
    mean = sum(w["roofline_fraction"] for w in ws) / len(ws)
    big = max(ws, key=size)["roofline_fraction"]
    return "%5.1f%% (big %4.1f%%)" % (100 * mean, 100 * big)
def plan(b):
    s = json.load(open("%s/%s-%s.json" % (out, t, b)))
    return " > ".join(s["best"]["plan"]) if s.get("best") else "-"
print("%-15s %8.2fx %8.2fx %7.2fx %17s %17s  %s | %s" % (
    t, c["score"], o["score"], ratio, roof(c), roof(o), plan("c"), plan("opencl")))
PY
done
echo "runs kept in $out"
