#!/usr/bin/env bash
# bench/gpu/untimed.sh — the template parameters that were checked on the
# CPU emulation (tests/cuda_emu) but never timed on a GPU, each beside its
# default and the anchors, in one device call (the H200; DESIGN.md:
# Benchmarks). From the repo root with the carried build (bench/gpu/carry.sh),
# after ../shared/device/stage-mlx.sh's install call for the MLX part:
#   .devcarry/go.sh bash bench/gpu/untimed.sh OUT
# 1. decode_paged flash_decode MERGE=0 / MERGE=1 (the spread merger), and
#    splits sized to whole waves of SMs, at the three GPU shapes, beside
#    torch (torch16.py) and the CUDA copy roofline;
# 2. attention_prefill wgmma_flash at its defaults (TMA=1 since the run of
#    2026-12-05), TMA=0 and PERSIST=132 on every GPU workload (the S 16384 reference first: about 90 s on
#    16 cores), beside torch's and MLX's SDPA (bench/gpu/attn_vs_mlx.sh);
# 3. with MLX: mlx-lm's Mamba block with chunked_scan PREFIX=0 / PREFIX=1
#    (and NCH=64 CH=8 with PREFIX=1), mlx_block.py at T 1024 and 4096.
# Each step has its own time limit; a failure never stops the rest. A table
# in OUT/untimed.txt; every JSON beside it. PARTS (default "dec att block")
# picks steps, so that the whole can be split over device calls of 600 s
# (one each: the attention part evaluates three parameter sets on every GPU
# workload); ATT_VARIANTS overrides the attention sets beside the defaults.
set -u
out=${1:?usage: bench/gpu/untimed.sh OUT}
mkdir -p "$out/dec" "$out/att" "$out/block"
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
log() { echo "[$(date +%T)] $*" | tee -a "$out/untimed.txt"; }
parts=" ${PARTS:-dec att block} "
if [[ $parts == *" dec "* ]]; then
timeout 90 "$ks" roofline --backend cuda --json >"$out/dec/roofline.json" 2>"$out/dec/roofline.err"
log "roofline: exit $?"
PYTHONUNBUFFERED=1 timeout 150 python3 "$here/torch16.py" . >"$out/dec/torch16.json" 2>"$out/dec/torch16.err"
log "torch16: exit $?"
# and the split sized to whole waves of the H200's 132 SMs (SPLIT_BLOCKS
# 264 / 396: at batch 1, 8 kv heads x 33 or 49 ranges)
TO=60 bash "$here/variants.sh" decode_paged flash_decode "$out/dec" "MERGE=0;MERGE=1;MERGE=0 SPLIT_PAGES=16 SPLIT_BLOCKS=264;MERGE=0 SPLIT_PAGES=16 SPLIT_BLOCKS=396;MERGE=1 SPLIT_PAGES=16 SPLIT_BLOCKS=264" 2>&1 | tee -a "$out/untimed.txt"
fi
# the defaults, the cp.async producer and the persistent blocks beside MLX's and torch's
# SDPA: attn_vs_mlx.sh's own table (MLX's column is empty where MLX does not import)
[[ $parts == *" att "* ]] &&
  VARIANTS=${ATT_VARIANTS:-TMA=0;PERSIST=132} TO=300 bash "$here/attn_vs_mlx.sh" "$out/att" 2>&1 | tee -a "$out/untimed.txt"
if [[ $parts != *" block "* ]]; then
  log "the MLX block part not asked for (PARTS)"
elif python3 -c "import mlx.core as mx, sys; sys.exit(0 if mx.default_device() == mx.gpu else 1)" 2>/dev/null; then
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
for r in ld("block/block.json").get("results", []):
    for k in r.get("kernels", []):
        if "ms" in k:
            print(f"block T{r['T']} {k['kernel']}: {k['ms']:.3f} ms ({k['speedup_vs_mlx_lm']:.0f}x mlx-lm), "
                  f"compiled {k['ms_compiled']:.3f} ms ({k['speedup_compiled_vs_mlx_lm']:.0f}x), scan {k['scan_queued_ms']}")
        else:
            print(f"block T{r['T']} {k['kernel']}: {k.get('error')}")
PY
