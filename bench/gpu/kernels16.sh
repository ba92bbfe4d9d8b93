#!/usr/bin/env bash
# bench/gpu/kernels16.sh — the device side of issue 16 in one call on the
# H200 (DESIGN.md: Templates, Evaluation baselines), from the repo root with
# build/ksearch and build/ksearch-runner present:
#   1. ksearch's CUDA roofline (copy bandwidth, bf16 mma peak);
#   2. per task (attention_prefill decode_paged moe_routing gemm_bf16): the
#      device baseline (tasks/<t>/baseline/cuda.cu), then every CUDA template
#      at its default parameters, each `ksearch eval --backend cuda` on the
#      task's GPU workloads: correct against the C reference (computed once,
#      cached) and timed, so each carries baseline_speedup;
#   3. torch in one process (torch16.py): SDPA, gather + SDPA, the routing
#      composition, matmul (cuBLAS), timed like ksearch (L2 flushed, events);
#   4. a short built-in search per task (`ksearch run --backend cuda`,
#      BUDGET evaluations or TASK_TIME seconds) while time is left;
#   5. summarize16.py -> OUTDIR/result16.json (times, TFLOP/s or GB/s, the
#      ratios to the baseline and to torch, fraction of copy for decode).
# Every step has its own time limit and one failure never stops the rest; the
# whole stays under TOTAL seconds (default 460: the 8-minute budget).
#   [KS_COMMIT=SHA] [TOTAL=460] [BUDGET=8] [TASKS="..."] bench/gpu/kernels16.sh OUTDIR
set -u
out=${1:?usage: kernels16.sh OUTDIR}
mkdir -p "$out/evals" "$out/runs"
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
start=$(date +%s)
total=${TOTAL:-460}
tasks=(${TASKS:-attention_prefill decode_paged moe_routing gemm_bf16})
# the GPU-sized workloads but attention's S 16384 (its C reference alone
# would take minutes of the call)
wl() { python3 "$here/gpu_workloads.py" "$1" seqlen=16384 ${2:-}; }
# STEPS16 (default "baselines templates torch search") picks steps; a call
# that only searches can drop more shapes with SEARCH_DROP (say m=8192:
# GEMM 8192^3's C reference alone takes ~40 s on a fresh machine)
steps16=" ${STEPS16:-baselines templates torch search} "
do16() { [[ $steps16 == *" $1 "* ]]; }
log() { echo "[$(date +%T) +$(($(date +%s) - start))s] $*" | tee -a "$out/log.txt"; }
left() { echo $((start + total - $(date +%s))); }
# a step's limit: its own cap, never past the deadline (minus a margin for the summary)
cap() { local l=$(($(left) - 15)); [[ $l -lt $1 ]] && echo $((l > 1 ? l : 1)) || echo "$1"; }
brief() { # one line from an eval JSON (else the tail of its stderr, $2)
  python3 - "$1" <<'PY' 2>/dev/null || echo "no JSON: $(tail -c 300 "${2:-/dev/null}" 2>/dev/null | tr '\n' ' ')"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(1)
ws = d.get("workloads", [])
print(d.get("status"), (d.get("error") or "")[:160].replace("\n", " "), " ".join(
    "%s:%s:%.3gms%s" % ("x".join(str(v) for v in w["axes"].values()),
                        "ok" if w.get("correct") else "WRONG",
                        (w.get("device_time_ns_min") or w.get("time_ns_min") or 0) / 1e6,
                        " x%.2f" % w["baseline_speedup"] if w.get("baseline_speedup") else "")
    for w in ws))
PY
}

# the commit measured: KS_COMMIT (the device copy may have no .git), else git
echo "${KS_COMMIT:-$(git -C "$here/../.." rev-parse HEAD 2>/dev/null)}" >"$out/commit.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$out/nvidia-smi.csv" 2>&1
timeout "$(cap 90)" "$ks" roofline --backend cuda --json >"$out/roofline.json" 2>"$out/roofline.err" || log "roofline failed: $(tail -c 300 "$out/roofline.err")"
log "roofline: $(tr -d '\n' <"$out/roofline.json" | cut -c1-300)"

# 2. baselines first (they also compute and cache the references), then templates
do16 baselines && for t in "${tasks[@]}"; do
  f=tasks/$t/baseline/cuda.cu
  [[ -f $f ]] || { log "$t: no baseline"; continue; }
  [[ $(left) -gt 30 ]] || { log "$t baseline: skipped (time)"; continue; }
  timeout "$(cap 240)" "$ks" eval "$t" "$f" --workloads "$(wl "$t")" --backend cuda --json -q --seeds 1 --min-time 0.02 --min-reps 3 \
    >"$out/evals/$t.baseline.json" 2>"$out/evals/$t.baseline.err"
  log "$t baseline: exit $? $(brief "$out/evals/$t.baseline.json" "$out/evals/$t.baseline.err")"
done
do16 templates && for t in "${tasks[@]}"; do
  for f in tasks/$t/templates/cuda/*.cu; do
    n=$(basename "$f" .cu)
    [[ $(left) -gt 30 ]] || { log "$t $n: skipped (time)"; continue; }
    timeout "$(cap 120)" "$ks" eval "$t" "$f" --workloads "$(wl "$t")" --backend cuda --json -q --seeds 1 --min-time 0.05 --min-reps 5 --timeout 90 \
      >"$out/evals/$t.$n.json" 2>"$out/evals/$t.$n.err"
    log "$t $n: exit $? $(brief "$out/evals/$t.$n.json" "$out/evals/$t.$n.err")"
  done
done

# 3. torch in one process
if ! do16 torch; then
  :
elif [[ $(left) -gt 40 ]]; then
  PYTHONUNBUFFERED=1 timeout "$(cap 150)" python3 "$here/torch16.py" . >"$out/torch16.json" 2>"$out/torch16.err"
  log "torch16: exit $? $(tail -c 300 "$out/torch16.err" | tr '\n' ' ')"
else
  log "torch16: skipped (time)"
fi

# 4. short searches with what is left, split over the tasks
do16 search && for i in "${!tasks[@]}"; do
  t=${tasks[$i]}
  rest=$((${#tasks[@]} - i))
  share=$((($(left) - 25) / rest))
  [[ $share -gt 20 ]] || { log "$t search: skipped (time)"; continue; }
  tt=${TASK_TIME:-60}
  [[ $share -lt $tt ]] && tt=$share
  timeout "$((tt + 15))" "$ks" run "$t" --workloads "$(wl "$t" "${SEARCH_DROP:-}")" --backend cuda --budget "${BUDGET:-8}" --time "$tt" --seeds 1 \
    --min-time 0.03 --finalists 0 --out "$out/runs/$t" --json -q >"$out/runs/$t.json" 2>"$out/runs/$t.err"
  log "$t search (${tt}s): exit $? $(tail -c 200 "$out/runs/$t.err" | tr '\n' ' ')"
done

# 5. one JSON
KS_COMMAND="bench/gpu/kernels16.sh $out" python3 "$here/summarize16.py" "$out" >"$out/result16.json" 2>"$out/summarize16.err" ||
  log "summarize16 failed: $(tail -c 300 "$out/summarize16.err")"
log "done: $out/result16.json"
