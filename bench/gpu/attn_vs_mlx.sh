#!/usr/bin/env bash
# bench/gpu/attn_vs_mlx.sh — issue 16's attention goals in one device call
# (the H200, after ../shared/device/stage-mlx.sh installed MLX, with the
# carried build): the wgmma_flash template (PARAMS, default WS=2, the
# fastest of bench/gpu/attn16.sh) on every GPU workload of
# tasks/attention_prefill but SKIP_SEQLEN (default none), `ksearch eval
# --backend cuda` (device time, L2 flushed, minimum), against MLX's SDPA
# (attn_mlx.py, the faster of its two timings) and torch's SDPA (causal,
# GQA, attn_torch.py) in the same call; VARIANTS (`;`-separated parameter
# sets) are evaluated the same way. Table in OUT/attn_vs_mlx.txt.
#   .devcarry/go.sh bash bench/gpu/attn_vs_mlx.sh OUT
set -u
out=${1:?usage: bench/gpu/attn_vs_mlx.sh OUT}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
skip=${SKIP_SEQLEN:-0}
wls=$(python3 bench/gpu/gpu_workloads.py attention_prefill seqlen="$skip")
ps=()
for p in ${PARAMS:-WS=2}; do ps+=(--param "$p"); done
timeout "${TO:-400}" "$ks" eval attention_prefill tasks/attention_prefill/templates/cuda/wgmma_flash.cu \
  --backend cuda --workloads "$wls" "${ps[@]}" --json -q --seeds 1 --min-time 0.05 --min-reps 5 \
  --timeout 300 >"$out/ours.json" 2>"$out/ours.err"
echo "eval: exit $?"
# VARIANTS="P=V P=V;...": more parameter sets of the template, the same way
IFS=";" read -r -a vars <<<"${VARIANTS:-}"
for v in "${vars[@]}"; do
  vs=()
  for p in $v; do vs+=(--param "$p"); done
  timeout "${TO:-400}" "$ks" eval attention_prefill tasks/attention_prefill/templates/cuda/wgmma_flash.cu \
    --backend cuda --workloads "$wls" "${vs[@]}" --json -q --seeds 1 --min-time 0.05 --min-reps 5 \
    --timeout 300 >"$out/ours[$(echo "$v" | tr ' =' '_-')].json" 2>>"$out/ours.err"
  echo "eval [$v]: exit $?"
done
timeout 120 python3 bench/gpu/attn_mlx.py --skip-seqlen "$skip" >"$out/mlx.json" 2>"$out/mlx.err"
echo "mlx: exit $? $(tail -c 300 "$out/mlx.err")"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/attn_torch.py --skip-seqlen "$skip" >"$out/torch.json" 2>"$out/torch.err"
echo "torch: exit $? $(tail -c 300 "$out/torch.err")"
python3 - "$out" <<'PY' | tee "$out/attn_vs_mlx.txt"
import glob, json, os, sys
out = sys.argv[1]
def load(n):
    try:
        return json.load(open(f"{out}/{n}.json"))
    except Exception:
        return {}
mlx, torch = load("mlx").get("shapes", {}), load("torch")
fl = lambda B, Hq, S, D: 2.0 * B * Hq * D * S * (S + 1)
for p in sorted(glob.glob(f"{out}/ours*.json")):
    name = os.path.basename(p)[:-5]
    ours = load(name)
    print(f"{name}: status {ours.get('status')} {(ours.get('error') or '')[:200]}")
    for w in ours.get("workloads", []):
        ax = w["axes"]
        B, Hq, Hk, S, D = ax["batch"], ax["heads_q"], ax["heads_kv"], ax["seqlen"], ax["head_dim"]
        key = "%d,%d,%d,%d,%d" % (B, Hq, Hk, S, D)
        t = w.get("device_time_ns_min") or w.get("time_ns_min") or 0
        line = "  b%d hq%d hkv%d S%-5d D%-3d %s ours %.4f ms %.0f TFLOP/s" % (
            B, Hq, Hk, S, D, "ok" if w.get("correct") else "WRONG", t / 1e6, fl(B, Hq, S, D) / t / 1e3 if t else 0)
        if key in mlx and t:
            m = mlx[key]["anchor_ns"]
            line += " | MLX %.4f ms x%.2f" % (m / 1e6, m / t)
        if key in torch and t:
            line += " | torch %.4f ms x%.2f" % (torch[key] / 1e6, torch[key] / t)
        print(line)
PY
