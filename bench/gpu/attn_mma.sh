#!/usr/bin/env bash
# bench/gpu/attn_mma.sh — the mma.sync attention family (mma_flash: any
# sm_80+, and through `translate --to mlx` the only tensor-core attention MLX
# can compile, since MLX builds custom kernels for sm_90, not sm_90a) at
# parameter sets, in one device call (DESIGN.md: Benchmarks), from the repo
# root with the carried build (bench/gpu/carry.sh), MLX installed by
# ../shared/device/stage-mlx.sh's calls for step 3:
#   .devcarry/go.sh bash bench/gpu/attn_mma.sh OUT
# 1. kernels16.sh for attention_prefill: every CUDA template at its
#    defaults (wgmma_flash among them) and torch's SDPA, on the GPU
#    workloads but S 16384 (its C reference takes minutes);
# 2. variants.sh: CUDA mma_flash at each VARIANTS set (`;`-separated),
#    with the same ratios to torch as the defaults (OUT/result16.json);
# 3. if `import mlx.core` works with a GPU: the MLX copy
#    (templates/mlx/mma_flash.cu) at its defaults and at each VARIANTS set,
#    `ksearch eval --backend mlx`, MLX's SDPA timed in the same executor
#    session (baseline_speedup = ours over MLX's op).
# Tables on stdout and in OUT/attn_mma.txt. About 6 minutes on an H100.
# STEPS (default "cuda mlx") picks steps 1-2 (cuda) and 3 (mlx).
#   [VARIANTS="BQ=128 WM=2;..."] [TOTAL=300] [STEPS=mlx] bench/gpu/attn_mma.sh OUT
set -u
out=${1:?usage: bench/gpu/attn_mma.sh OUT}
mkdir -p "$out/mlx"
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
sets=${VARIANTS:-BQ=128 WM=2;BQ=128 WM=2 BKV=32;BQ=128 BKV=32}
t0=$(date +%s)
steps=" ${STEPS:-cuda mlx} "
{
  if [[ $steps == *" cuda "* ]]; then
    TASKS=attention_prefill STEPS16="templates torch" TOTAL=${TOTAL:-300} \
      bash "$here/kernels16.sh" "$out" >"$out/kernels16.log" 2>&1
    echo "kernels16: exit $? after $(($(date +%s) - t0)) s"
    SKIP="seqlen=16384" bash "$here/variants.sh" attention_prefill mma_flash "$out" "$sets"
  fi
  if [[ $steps != *" mlx "* ]]; then
    :
  elif python3 -c "import mlx.core as mx; assert mx.cuda.is_available()" 2>/dev/null; then
    wl=$(python3 "$here/gpu_workloads.py" attention_prefill seqlen=16384)
    IFS=";" read -r -a vars <<<";$sets"
    for v in "${vars[@]}"; do
      args=()
      for p in $v; do args+=(--param "$p"); done
      f="$out/mlx/mma_flash_$(echo "${v:-defaults}" | tr ' =' '_-').json"
      timeout "${TO:-240}" "$ks" eval attention_prefill tasks/attention_prefill/templates/mlx/mma_flash.cu \
        "${args[@]}" --backend mlx --workloads "$wl" --json -q --seeds 1 --min-time 0.05 --min-reps 5 \
        >"$f" 2>"$f.err"
      echo "mlx mma_flash [${v:-defaults}]: exit $? $(tail -c 200 "$f.err" | tr '\n' ' ')"
      python3 - "$f" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  no result ({e})")
    sys.exit(0)
for w in j.get("workloads", []):
    a = w["axes"]
    fl = 2 * a["batch"] * a["heads_q"] * a["seqlen"] * (a["seqlen"] + 1) * a["head_dim"]
    t = w.get("time_ns_min", 0)
    print(f"  b{a['batch']} S{a['seqlen']} d{a['head_dim']}: correct {w.get('correct')}, "
          f"{t / 1e3:.1f} us ({fl / t / 1e3 if t else 0:.0f} TFLOP/s wall), "
          f"vs MLX's SDPA {w.get('baseline_speedup', 0):.3f}x")
PY
    done
  else
    echo "mlx: no MLX with a GPU here (run ../shared/device/stage-mlx.sh's calls first): step 3 skipped"
  fi
  echo "attn_mma: $(($(date +%s) - t0)) s"
} 2>&1 | tee "$out/attn_mma.txt"
