#!/usr/bin/env bash
# bench/gpu/untimed.sh — the template parameters that were checked on the
# CPU emulation (tests/cuda_emu) but never timed on a GPU, each beside its
# default and the anchors, in one device call (the H200; DESIGN.md:
# Benchmarks). From the repo root with the carried build (bench/gpu/carry.sh),
# after ../shared/device/stage-mlx.sh's install call for the MLX part:
#   .devcarry/go.sh bash bench/gpu/untimed.sh OUT
# 1. decode_paged flash_decode MERGE=0 / MERGE=1 (the spread merger) at the
#    three GPU shapes, beside torch (torch16.py) and the CUDA copy roofline;
# 2. attention_prefill wgmma_flash TMA=0 / TMA=1 on every GPU workload (the
#    S 16384 reference first: about 90 s on 16 cores), beside torch's SDPA
#    and, where MLX imports, MLX's SDPA;
# 3. with MLX: mlx-lm's Mamba block with chunked_scan PREFIX=0 / PREFIX=1
#    (and NCH=64 CH=8 with PREFIX=1), mlx_block.py at T 1024 and 4096.
# Each step has its own time limit; a failure never stops the rest. A table
# in OUT/untimed.txt; every JSON beside it.
set -u
out=${1:?usage: bench/gpu/untimed.sh OUT}
mkdir -p "$out/dec" "$out/att" "$out/block"
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
log() { echo "[$(date +%T)] $*" | tee -a "$out/untimed.txt"; }
timeout 90 "$ks" roofline --backend cuda --json >"$out/dec/roofline.json" 2>"$out/dec/roofline.err"
log "roofline: exit $?"
PYTHONUNBUFFERED=1 timeout 150 python3 "$here/torch16.py" . >"$out/dec/torch16.json" 2>"$out/dec/torch16.err"
log "torch16: exit $?"
TO=60 bash "$here/variants.sh" decode_paged flash_decode "$out/dec" "MERGE=0;MERGE=1" 2>&1 | tee -a "$out/untimed.txt"
wl=$(python3 "$here/gpu_workloads.py" attention_prefill)
for v in TMA=0 TMA=1; do
  timeout 300 "$ks" eval attention_prefill tasks/attention_prefill/templates/cuda/wgmma_flash.cu --backend cuda \
    --workloads "$wl" --param "$v" --json -q --seeds 1 --min-time 0.05 --min-reps 5 --timeout 290 \
    >"$out/att/ours-$v.json" 2>"$out/att/ours-$v.err"
  log "attention $v: exit $? $(tail -c 200 "$out/att/ours-$v.err")"
done
PYTHONUNBUFFERED=1 timeout 120 python3 "$here/attn_torch.py" >"$out/att/torch.json" 2>"$out/att/torch.err"
log "torch sdpa: exit $?"
if python3 -c "import mlx.core as mx, sys; sys.exit(0 if mx.default_device() == mx.gpu else 1)" 2>/dev/null; then
  timeout 120 python3 "$here/attn_mlx.py" >"$out/att/mlx.json" 2>"$out/att/mlx.err"
  log "mlx sdpa: exit $?"
  S=tasks/mamba_mlx/templates/mlx/chunked_scan.cu
  timeout 200 python3 "$here/mlx_block.py" "$out/block/block.json" --T 1024,4096 --candidate "$S" \
    --candidate "$S:PREFIX=1" --candidate "$S:PREFIX=1,NCH=64,CH=8" >"$out/block/block.out" 2>"$out/block/block.err"
  log "mlx block: exit $? $(tail -c 200 "$out/block/block.err")"
else
  log "no MLX GPU here: the MLX part skipped (stage it first: ../shared/device/stage-mlx.sh)"
fi
python3 - "$out" <<'PY' | tee -a "$out/untimed.txt"
import json, os, sys
out = sys.argv[1]
def ld(p):
    try:
        return json.load(open(os.path.join(out, p)))
    except Exception:
        return {}
m, t = ld("att/mlx.json").get("shapes", {}), ld("att/torch.json")
for v in ("TMA=0", "TMA=1"):
    for w in ld(f"att/ours-{v}.json").get("workloads", []):
        ax = w["axes"]
        key = "%d,%d,%d,%d,%d" % (ax["batch"], ax["heads_q"], ax["heads_kv"], ax["seqlen"], ax["head_dim"])
        ns = w.get("device_time_ns_min") or 0
        fl = 2.0 * ax["batch"] * ax["heads_q"] * ax["head_dim"] * ax["seqlen"] * (ax["seqlen"] + 1)
        mx_ns = m.get(key, {}).get("anchor_ns")
        print(f"attention {v} {key} {'ok' if w.get('correct') else 'WRONG'} {ns / 1e6:.4f} ms "
              f"{fl / ns / 1e3 if ns else 0:.0f} TFLOP/s vs torch "
              f"{t[key] / ns if t.get(key) and ns else 0:.3f} vs MLX {mx_ns / ns if mx_ns and ns else 0:.3f}")
for r in ld("block/block.json").get("results", []):
    for k in r.get("kernels", []):
        if "ms" in k:
            print(f"block T{r['T']} {k['kernel']}: {k['ms']:.3f} ms ({k['speedup_vs_mlx_lm']:.0f}x mlx-lm), "
                  f"compiled {k['ms_compiled']:.3f} ms ({k['speedup_compiled_vs_mlx_lm']:.0f}x), scan {k['scan_queued_ms']}")
        else:
            print(f"block T{r['T']} {k['kernel']}: {k.get('error')}")
PY
