#!/usr/bin/env bash
# bench/gpu/wgmma16.sh — issue 16's GEMM goal in one short device call (the
# H200, from the repo root with build/ksearch and build/ksearch-runner):
#   1. tasks/gemm_bf16/templates/cuda/wgmma_pipeline.cu at its defaults on
#      every workload of the task (the small odd CI shapes too, which take
#      the element-load and masked-store paths on the device), checked
#      against the C reference (the 8192^3 one takes ~40 s, cached in
#      KSEARCH_CACHE_DIR) and timed by `ksearch eval --backend cuda`;
#   2. the producer/consumer path (WS=1) and the TMA producer (TMA=1: bulk
#      tensor copies from the executor's tensor maps) on every workload too,
#      then a few parameter variants at 4096^3 and 8192^3 (VARIANTS,
#      `;`-separated lists of K=V, TMA=1 ones first; WS=1 ones only if WS=1
#      passed, TMA=1 ones only if TMA=1 passed; none after TOTAL-60 s, TOTAL
#      default 420);
#   3. torch.matmul (cuBLAS) at the same two sizes, timed like ksearch
#      (L2 flushed, CUDA events, minimum of 15);
#   4. one table: correctness, time, TFLOP/s and the ratio to cuBLAS (the
#      goal is 0.8 at 4096^3 and 8192^3), also in OUTDIR/wgmma16.txt.
# About 3 minutes. Usage: bench/gpu/wgmma16.sh [OUTDIR]
set -u
out=${1:-/tmp/wgmma16}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
start=$(date +%s)
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
f=${KERNEL:-tasks/gemm_bf16/templates/cuda/wgmma_pipeline.cu}
IFS=';' read -r -a variants <<<"${VARIANTS:-TMA=1 PERSIST=1;TMA=1 PERSIST=1 MI=2 TILE_N=128;TMA=1 MI=2 TILE_N=128;TMA=1 PERSIST=1 STAGES=6 TILE_N=128;WS=1 PERSIST=1;WS=1 PERSIST=1 MI=2 TILE_N=128;WS=1 MI=2 TILE_N=128;WS=1 PERSIST=1 TILE_N=128 STAGES=6;WS=1 PERSIST=1 GROUP_M=16;MI=2 TILE_N=128;STAGES=3}"
evalk() { # name workloads params...
  local name=$1 wls=$2
  shift 2
  local ps=()
  for p in "$@"; do ps+=(--param "$p"); done
  timeout 300 "$ks" eval gemm_bf16 "$f" --backend cuda --workloads "$wls" "${ps[@]}" --json -q \
    --seeds 1 --min-time 0.05 --min-reps 5 --timeout "${TO:-100}" >"$out/$name.json" 2>"$out/$name.err"
  echo "eval $name: exit $?"
}
# the first call also computes (and caches) the C references: more time
TO=200 evalk default 0,1,2,3,4,5,6,7,8,9
evalk ws 0,1,2,3,4,5,6,7,8,9 WS=1
echo "WS=1" >"$out/ws.params"
evalk tma 0,1,2,3,4,5,6,7,8,9 TMA=1
echo "TMA=1" >"$out/tma.params"
# a WS=1 or TMA=1 that is wrong or hangs is not tried again in the variants
passed() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(int(d['status']=='ok' and all(w['correct'] for w in d['workloads'])))" "$1" 2>/dev/null; }
ws_ok=$(passed "$out/ws.json")
tma_ok=$(passed "$out/tma.json")
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  if [[ $v == *TMA=1* && $tma_ok != 1 ]]; then
    echo "v$i [$v]: skipped (TMA=1 failed above)"
    continue
  fi
  if [[ $v == *WS=1* && $ws_ok != 1 ]]; then
    echo "v$i [$v]: skipped (WS=1 failed above)"
    continue
  fi
  if [[ $(($(date +%s) - start)) -gt $((${TOTAL:-420} - 60)) ]]; then
    echo "v$i [$v]: skipped (time)"
    continue
  fi
  echo "$v" >"$out/v$i.params"
  # shellcheck disable=SC2086
  TO=60 evalk "v$i" 6,7 $v
done
PYTHONUNBUFFERED=1 timeout 120 python3 - "$out" <<'PY' >"$out/torch.json" 2>"$out/torch.err"
import json, sys, torch
dev = torch.device("cuda")
flush = torch.empty(128 << 20, dtype=torch.uint8, device=dev)
res = {}
for s in (4096, 8192):
    a = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
    b = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
    torch.matmul(a, b); torch.cuda.synchronize()
    ts = []
    for _ in range(15):
        flush.zero_()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); torch.matmul(a, b); e1.record(); torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e6)
    res[str(s)] = min(ts)
print(json.dumps(res))
PY
echo "torch: exit $? $(tail -c 300 "$out/torch.err")"
python3 - "$out" <<'PY' | tee "$out/wgmma16.txt"
import glob, json, os, sys
out = sys.argv[1]
try:
    torch = json.load(open(f"{out}/torch.json"))
except Exception:
    torch = {}
for s, t in sorted(torch.items()):
    print(f"cuBLAS {s}^3: {t/1e6:.3f} ms  {2*int(s)**3/t/1e3:.0f} TFLOP/s")
names = ["default", "ws", "tma"] + sorted((os.path.basename(p)[:-5] for p in glob.glob(f"{out}/v*.json")), key=lambda x: int(x[1:]))
for name in names:
    p = f"{out}/{name}.params"
    params = open(p).read().strip() if os.path.exists(p) else "defaults"
    try:
        d = json.load(open(f"{out}/{name}.json"))
    except Exception:
        print(f"{name} [{params}]: no JSON: {open(f'{out}/{name}.err').read()[-400:]!r}")
        continue
    print(f"{name} [{params}]: status {d.get('status')} {(d.get('error') or '')[:300]}")
    for w in d.get("workloads", []):
        ax = w["axes"]
        t = w.get("device_time_ns_min") or w.get("time_ns_min") or 0
        fl = 2 * ax["m"] * ax["n"] * ax["k"]
        line = "  %5dx%5dx%5d %-5s err %.3g  %.4f ms  %.0f TFLOP/s" % (
            ax["m"], ax["n"], ax["k"], "ok" if w.get("correct") else "WRONG",
            w.get("max_abs_err", 0), t / 1e6, fl / t / 1e3 if t else 0)
        if ax["m"] == ax["n"] == ax["k"] and str(ax["m"]) in torch and t:
            line += "  x%.2f cuBLAS" % (torch[str(ax["m"])] / t)
        if w.get("reason"):
            line += "  (" + w["reason"][:120] + ")"
        print(line)
PY
