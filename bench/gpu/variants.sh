#!/usr/bin/env bash
# bench/gpu/variants.sh — one CUDA template of an issue-16 task at several
# parameter sets, in the device call that timed the anchors (DESIGN.md:
# Benchmarks), from the repo root with the carried build:
#   variants.sh TASK TEMPLATE OUT "P=V P=V;P=V;..."
# Each `;`-separated set is one `ksearch eval --backend cuda` on the task's
# GPU workloads (device time, L2 flushed, minimum; the C references cached
# by an earlier step of the call), written as
# OUT/evals/TASK.TEMPLATE[SET].json, beside kernels16.sh's; then
# summarize16.py rebuilds OUT/result16.json, so every variant gets the same
# ratios as the defaults (vs torch in the same call, fraction of copy for
# decode, TFLOP/s), and a table of them is printed. SKIP="axis=v" drops GPU
# workloads (attention's seqlen=16384, whose reference takes minutes).
set -u
task=${1:?usage: variants.sh TASK TEMPLATE OUT "SET;SET"}
tmpl=${2:?template name}
out=${3:?out dir}
sets=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
mkdir -p "$out/evals"
src=tasks/$task/templates/cuda/$tmpl.cu
[[ -f $src ]] || { echo "variants: no $src"; exit 2; }
# shellcheck disable=SC2086
wl=$(python3 "$here/gpu_workloads.py" "$task" ${SKIP:-})
IFS=";" read -r -a vars <<<"$sets"
for v in "${vars[@]}"; do
  args=()
  for p in $v; do args+=(--param "$p"); done
  f="$out/evals/$task.$tmpl[$(echo "$v" | tr ' =' '_-')].json"
  timeout "${TO:-90}" "$ks" eval "$task" "$src" "${args[@]}" --workloads "$wl" --backend cuda \
    --json -q --seeds 1 --min-time 0.05 --min-reps 5 --timeout "${TO:-90}" >"$f" 2>"$f.err"
  echo "variants: $task $tmpl [$v] exit $?"
done
KS_COMMAND=${KS_COMMAND:-"bench/gpu/variants.sh $task $tmpl OUT \"$sets\""} \
  python3 "$here/summarize16.py" "$out" >"$out/result16.json" 2>"$out/summarize16.err" ||
  echo "variants: summarize16 failed: $(tail -c 300 "$out/summarize16.err")"
python3 - "$out/result16.json" "$task" "$tmpl" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
task, tmpl = sys.argv[2], sys.argv[3]
for w in d.get("tasks", {}).get(task, {}).get("workloads", []):
    print(" ".join("%s=%s" % kv for kv in sorted(w["axes"].items())))
    for k, e in sorted(w.get("kernels", {}).items(), key=lambda x: x[1].get("device_ns_min") or 1e18):
        if not k.startswith(tmpl) and k != "baseline":
            continue
        extra = ""
        if "fraction_of_copy" in e:
            extra += " copy fraction %.3f" % e["fraction_of_copy"]
        if "tflops" in e:
            extra += " %.0f TFLOP/s" % e["tflops"]
        if "vs_torch" in e:
            extra += " vs torch %.2f" % e["vs_torch"]
        print("  %-40s %s %.4f ms%s" % (k, "ok   " if e.get("correct") else "WRONG",
                                         (e.get("device_ns_min") or 0) / 1e6, extra))
PY
