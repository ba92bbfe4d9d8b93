#!/usr/bin/env bash
# bench/gpu/mlx16.sh — issue 16's tasks on MLX's CUDA backend (the H200),
# one device call, after ../shared/device/stage-mlx.sh installed MLX and
# with the carried build (bench/gpu/carry.sh):
#   .devcarry/go.sh bash bench/gpu/mlx16.sh OUT
# Each MLX template of attention_prefill, decode_paged, moe_routing and
# gemm_bf16 (tasks/*/templates/mlx/*.cu: `translate --to mlx` of the CUDA
# families) is evaluated with `ksearch eval --backend mlx` on the task's GPU
# workloads; its MLX baseline (tasks/*/baseline/mlx.py: SDPA, gather + SDPA,
# the routing composition, matmul) is timed in the same executor session,
# so `baseline_speedup` per workload is ours over MLX's own ops in one
# sitting (issue 15's "attention against mx.fast.scaled_dot_product_attention").
# SKIP_SEQLEN (default 16384: its C reference alone takes about 90 s on 16
# cores) drops attention workloads; TO (default 240) limits each eval; TASKS
# (default all four) picks tasks; SKIP_M (default 8192) drops gemm workloads
# with that m (its C reference at 8192^3 takes minutes). Each template's
# rows follow its eval, so a call cut short still shows what ran; a
# table on stdout and in OUT/mlx16.txt (device file names with brackets do
# not come back: the table is what to keep).
set -u
out=${1:?usage: bench/gpu/mlx16.sh OUT}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
here=$(cd "$(dirname "$0")" && pwd)
# one template's rows, printed as soon as its eval ends (a call cut short
# still shows the templates that ran)
rows() {
  python3 - "$1" <<'PY'
import json, os, sys
p = sys.argv[1]
try:
    j = json.load(open(p))
except Exception as e:
    print(f"{os.path.basename(p)[:-5]}: no result ({e})")
    sys.exit(0)
print(f"{os.path.basename(p)[:-5]}: status {j.get('status')} {j.get('error', '')[:200]}")
for w in j.get("workloads", []):
    ax = " ".join(f"{k}={v}" for k, v in w["axes"].items())
    print(f"  {ax}: correct {w.get('correct')}, {w.get('time_ns_min', 0) / 1e3:.1f} us, "
          f"vs MLX's ops {w.get('baseline_speedup', 0):.3f}x, roofline {w.get('roofline_fraction', 0):.3f}")
PY
}
files=()
for t in ${TASKS:-attention_prefill decode_paged moe_routing gemm_bf16}; do files+=(tasks/"$t"/templates/mlx/*.cu); done
for f in "${files[@]}"; do
  task=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")
  skip=()
  [[ $task == attention_prefill ]] && skip=(seqlen="${SKIP_SEQLEN:-16384}")
  [[ $task == gemm_bf16 ]] && skip=(m="${SKIP_M:-8192}")
  wl=$(python3 "$here/gpu_workloads.py" "$task" "${skip[@]}")
  name=$task.$(basename "$f" .cu)
  timeout "${TO:-240}" "$ks" eval "$task" "$f" --backend mlx --workloads "$wl" --json -q --seeds 1 \
    --min-time 0.05 --min-reps 5 >"$out/$name.json" 2>"$out/$name.err"
  echo "$name: exit $? $(tail -c 300 "$out/$name.err" | tr '\n' ' ')"
  rows "$out/$name.json"
done | tee "$out/mlx16.txt"
