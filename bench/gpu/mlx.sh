#!/usr/bin/env bash
# bench/gpu/mlx.sh — the MLX headline of issue 15 in one call on the H200,
# after ../shared/device/stage-mlx.sh installed mlx + mlx-cuda + mlx-lm
# there; run from the folder holding build/, tasks/, specs/, mlx/, bench/:
#   KS_COMMIT=$(git rev-parse HEAD) bench/gpu/mlx.sh OUTDIR   (the commit measured, for the JSON)
# Steps, each skipped once the call has used LIMIT_S seconds (default 360),
# each writing into OUTDIR/result.json as it ends:
#   1. sanity: a cuda_kernel candidate through --backend mlx (the executor,
#      its sandbox, the kernel path); if the sandbox kills it, the rest runs
#      with KSEARCH_SANDBOX_AUDIT=1 (forbidden calls fail with EPERM) and the
#      result says so;
#   2. (a) mlx-lm's MambaBlock prefill (mamba-370m shapes) with the
#      mamba_mlx templates' scans against mlx-lm as it is, T 256/1024/4096
#      (mlx_block.py);
#   3. (b) each MLX template (defaults) against MLX's own op: `ksearch eval
#      --backend mlx`, whose baseline is tasks/<t>/baseline/mlx.py
#      (mx.softmax, mx.fast.rms_norm, mx.fast.layer_norm, mlx-lm's loop);
#   4. a short search on mamba_mlx (BUDGET, default 6), `ksearch export
#      --to mlx`, and the exported module in the block again (step 2's
#      script);
#   4b. SEEDED=1: bench/seeded.sh, mamba_mlx seeded with a CUDA chunked
#      scan against unseeded (issue 15, item 4);
#   5. tests/integration/mlx.sh (on a GPU it also runs the kernel form).
set -u
out=${1:?usage: bench/gpu/mlx.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ks=${KSEARCH:-./build/ksearch}
limit=${LIMIT_S:-360}
budget=${BUDGET:-6}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-mlx-gpu}
work=${WORK:-/tmp/ks-mlx-bench}
rm -rf "$work"
mkdir -p "$work/runs"
t0=$(date +%s)
log() { echo "[$(date +%T)] $*" | tee -a "$out/log.txt"; }
left() { (($(date +%s) - t0 < limit)); }
res=$out/result.json
commit=${KS_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
python3 - "$res" "$commit" <<'PY'
import json, sys, subprocess
import mlx.core as mx
info = {"commit": sys.argv[2], "command": "bench/gpu/mlx.sh OUTDIR", "mlx": mx.__version__,
        "device": str(mx.default_device()), "cuda": mx.cuda.is_available(), "steps": {}}
try:
    info["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm",
                                  "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError:
    pass
json.dump(info, open(sys.argv[1], "w"), indent=2)
PY
# put(STEP, JSON file or literal): one step's result into result.json
put() {
  python3 - "$res" "$1" "$2" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
v = sys.argv[3]
try:
    v = json.load(open(v)) if os.path.exists(v) else json.loads(v)
except ValueError:
    v = {"text": open(v).read()[-4000:] if os.path.exists(v) else v}
r["steps"][sys.argv[2]] = v
json.dump(r, open(sys.argv[1], "w"), indent=2)
PY
}
# brief(EVAL_JSON): status, score, baseline score, per-workload speedups
brief() {
  python3 - "$1" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(json.dumps({"error": f"no eval JSON: {e}"})); sys.exit()
print(json.dumps({"status": j.get("status"), "error": (j.get("error") or "")[:400],
    "score": j.get("score"), "baseline_score": j.get("baseline_score"),
    "reference_score": j.get("reference_score"),
    "workloads": [{"axes": w["axes"], "correct": w["correct"], "time_ns_min": w["time_ns_min"],
                   "baseline_time_ns_min": w.get("baseline_time_ns_min"),
                   "baseline_speedup": w.get("baseline_speedup"), "gbps": w.get("gbps")}
                  for w in j.get("workloads", [])]}))
PY
}

# 1. sanity
log "1. sanity: tests/mlx/softmax_kernel.cu on --backend mlx"
"$ks" eval softmax tests/mlx/softmax_kernel.cu --backend mlx --json --seeds 1 --no-timing \
  >"$work/sanity.json" 2>"$work/sanity.log"
st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/sanity.json" 2>/dev/null)
sandbox="seccomp allow-list, forbidden calls end the executor"
if grep -q "forbidden system call" "$work/sanity.json" 2>/dev/null; then
  export KSEARCH_SANDBOX_AUDIT=1
  sandbox="AUDIT: the allow-list killed the executor ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"][:200])' "$work/sanity.json")); the rest ran with forbidden calls failing with EPERM"
  "$ks" eval softmax tests/mlx/softmax_kernel.cu --backend mlx --json --seeds 1 --no-timing \
    >"$work/sanity.json" 2>"$work/sanity.log"
  st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/sanity.json" 2>/dev/null)
fi
log "   status ${st:-none}; sandbox: $sandbox"
brief "$work/sanity.json" >"$work/sanity.brief.json"
put sanity "$work/sanity.brief.json"
put sandbox "\"$(echo "$sandbox" | tr -d '"\\')\""
[[ -n $st ]] || { tail -20 "$work/sanity.log" | tee -a "$out/log.txt"; }

# 2. (a) the block with the templates' scans
if left; then
  log "2. MambaBlock prefill: mlx-lm vs the mamba_mlx templates' scans"
  python3 bench/gpu/mlx_block.py "$work/block_templates.json" \
    --candidate tasks/mamba_mlx/templates/mlx/chunked_scan.cu \
    --candidate tasks/mamba_mlx/templates/mlx/thread_per_channel.cu --profile 2>&1 | tee -a "$out/log.txt"
  put block_templates "$work/block_templates.json"
fi

# 3. (b) templates against MLX's own ops
for tt in ${MLX_EVALS:-softmax:vec_row rmsnorm:vec_row layernorm:vec_row softmax:block_row rmsnorm:block_row layernorm:block_row mamba_mlx:chunked_scan}; do
  left || break
  t=${tt%%:*} n=${tt#*:}
  log "3. $t $n (defaults) vs tasks/$t/baseline/mlx.py"
  "$ks" eval "$t" "tasks/$t/templates/mlx/$n.cu" --workloads "$(python3 bench/gpu/gpu_workloads.py "$t")" --backend mlx --json --seeds 1 \
    >"$work/eval_$t-$n.json" 2>"$work/eval_$t-$n.log"
  brief "$work/eval_$t-$n.json" >"$work/eval_$t-$n.brief.json"
  log "   $(head -c 300 "$work/eval_$t-$n.brief.json")"
  put "eval_$t-$n" "$work/eval_$t-$n.brief.json"
done

# 4. a short search, export, the exported kernel in the block
if left; then
  log "4. ksearch run mamba_mlx --backend mlx --budget $budget; export; block"
  "$ks" run mamba_mlx --workloads "$(python3 bench/gpu/gpu_workloads.py mamba_mlx)" --backend mlx --budget "$budget" --seeds 1 --out "$work/runs/mamba" --json -q \
    >"$work/run_mamba.json" 2>"$work/run_mamba.log"
  put run_mamba "$work/run_mamba.json"
  if "$ks" export "$work/runs/mamba" --to mlx --out "$work/kernels.py" >>"$out/log.txt" 2>&1; then
    cp "$work/kernels.py" "$out/kernels.py"
    python3 bench/gpu/mlx_block.py "$work/block_exported.json" --kernels "$work/kernels.py" 2>&1 | tee -a "$out/log.txt"
    put block_exported "$work/block_exported.json"
  else
    log "   export failed: $(tail -3 "$work/run_mamba.log")"
  fi
fi

# 4b. CUDA to MLX: seeded with a CUDA chunked scan against unseeded (bench/seeded.sh)
if left && [[ ${SEEDED:-1} == 1 ]]; then
  log "4b. seeded (--seed-cuda ${SEED_CUDA:-chunked_prefix.cu}) vs unseeded mamba_mlx runs, ${SEEDED_SEEDS:-3} seeds"
  BACKEND=mlx TASK=mamba_mlx SEEDS=${SEEDED_SEEDS:-3} BUDGET=${SEEDED_BUDGET:-5} RUN_TIME=${SEEDED_TIME:-30} WORKLOADS=${SEEDED_WL:-6} \
    KS_COMMIT=$commit KSEARCH=$ks bash bench/seeded.sh "$work/seeded.json" 2>&1 | tee -a "$out/log.txt"
  put seeded "$work/seeded.json"
fi

# 5. the integration suite
if left; then
  log "5. tests/integration/mlx.sh"
  KSEARCH=$ks bash tests/integration/mlx.sh >"$work/integration.txt" 2>&1
  rc=$?
  tail -25 "$work/integration.txt" | tee -a "$out/log.txt"
  put integration "{\"rc\": $rc, \"tail\": $(tail -25 "$work/integration.txt" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}"
fi
cp "$work"/*.log "$out/" 2>/dev/null
log "done in $(($(date +%s) - t0)) s: $res"
