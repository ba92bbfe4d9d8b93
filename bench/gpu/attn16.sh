#!/usr/bin/env bash
# bench/gpu/attn16.sh — issue 16's attention goal in one short device call (the
# H200, from the repo root with build/ksearch and build/ksearch-runner):
#   1. tasks/attention_prefill/templates/cuda/wgmma_flash.cu at its defaults
#      on the small CI shapes with an instance (head_dim 64/128: partial
#      tiles, GQA, a one-token sequence) and the GPU workloads but S 16384
#      (its C reference takes minutes), checked against the C reference and
#      timed by `ksearch eval --backend cuda`;
#   2. the producer/consumer paths (WS=1, and WS=2 with the pingpong) the
#      same way, then parameter variants at S 4096, head_dim 128 and 64
#      (VARIANTS, `;`-separated lists of K=V; WS=1/2 ones only if that WS
#      passed; none after TOTAL-60 s, TOTAL default 420), and mma_flash at
#      its defaults there for comparison;
#   3. torch SDPA (causal, GQA) at the same two shapes, timed like ksearch
#      (L2 flushed, CUDA events, minimum of 15);
#   4. one table: correctness, time, TFLOP/s and the ratio to SDPA (the goal
#      is 0.8 at S 4096), also in OUTDIR/attn16.txt.
# About 5 minutes. Usage: bench/gpu/attn16.sh [OUTDIR]
set -u
out=${1:-/tmp/attn16}
mkdir -p "$out"
ks=${KSEARCH:-./build/ksearch}
start=$(date +%s)
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
f=${KERNEL:-tasks/attention_prefill/templates/cuda/wgmma_flash.cu}
IFS=';' read -r -a variants <<<"${VARIANTS:-OVERLAP=0;BKV=64;BKV=64 STAGES=3;WGS=1;WS=1 OVERLAP=0;WS=1 BKV=64 STAGES=3;WS=1 WGS=1;WS=2 OVERLAP=0;WS=2 BKV=64 STAGES=3;WS=2 STAGES=3 BKV=64 WGS=3}"
# CI shapes with an instance (0-3) and the GPU ones but S 16384
all=0,1,2,3,$(python3 bench/gpu/gpu_workloads.py attention_prefill seqlen=16384)
big=$(python3 -c "import json; t=json.load(open('tasks/attention_prefill/task.json')); print(','.join(str(i) for i,w in enumerate(t['workloads']) if w.get('device')=='gpu' and w['seqlen']==4096))")
evalk() { # name file workloads params...
  local name=$1 file=$2 wls=$3
  shift 3
  local ps=()
  for p in "$@"; do ps+=(--param "$p"); done
  timeout 300 "$ks" eval attention_prefill "$file" --backend cuda --workloads "$wls" "${ps[@]}" --json -q \
    --seeds 1 --min-time 0.05 --min-reps 5 --timeout "${TO:-100}" >"$out/$name.json" 2>"$out/$name.err"
  echo "eval $name: exit $?"
}
# the first call also computes (and caches) the C references: more time
TO=200 evalk default "$f" "$all"
evalk ws "$f" "$all" WS=1
echo "WS=1" >"$out/ws.params"
evalk ws2 "$f" "$all" WS=2
echo "WS=2" >"$out/ws2.params"
ok() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(int(d['status']=='ok' and all(w['correct'] for w in d['workloads'])))" "$1" 2>/dev/null; }
ws_ok=$(ok "$out/ws.json")
ws2_ok=$(ok "$out/ws2.json")
echo "mma_flash defaults" >"$out/mma.params"
TO=60 evalk mma tasks/attention_prefill/templates/cuda/mma_flash.cu "$big"
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  if [[ ($v == *WS=1* && $ws_ok != 1) || ($v == *WS=2* && $ws2_ok != 1) ]]; then
    echo "v$i [$v]: skipped (its WS failed above)"
    continue
  fi
  if [[ $(($(date +%s) - start)) -gt $((${TOTAL:-420} - 60)) ]]; then
    echo "v$i [$v]: skipped (time)"
    continue
  fi
  echo "$v" >"$out/v$i.params"
  # shellcheck disable=SC2086
  TO=60 evalk "v$i" "$f" "$big" $v
done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/attn_torch.py --seqlen 4096 >"$out/torch.json" 2>"$out/torch.err"
echo "torch: exit $? $(tail -c 300 "$out/torch.err")"
python3 - "$out" <<'PY' | tee "$out/attn16.txt"
import glob, json, os, sys
out = sys.argv[1]
try:
    torch = json.load(open(f"{out}/torch.json"))
except Exception:
    torch = {}
fl = lambda B, Hq, S, D: 2.0 * B * Hq * D * S * (S + 1)
for key, t in sorted(torch.items()):
    B, Hq, Hk, S, D = map(int, key.split(","))
    print(f"SDPA b{B} hq{Hq} hkv{Hk} S{S} D{D}: {t/1e6:.3f} ms  {fl(B, Hq, S, D)/t/1e3:.0f} TFLOP/s")
names = ["default", "ws", "ws2", "mma"] + sorted((os.path.basename(p)[:-5] for p in glob.glob(f"{out}/v*.json")), key=lambda x: int(x[1:]))
for name in names:
    p = f"{out}/{name}.params"
    params = open(p).read().strip() if os.path.exists(p) else "defaults"
    try:
        d = json.load(open(f"{out}/{name}.json"))
    except Exception:
        err = open(f"{out}/{name}.err").read()[-400:] if os.path.exists(f"{out}/{name}.err") else ""
        print(f"{name} [{params}]: no JSON: {err!r}")
        continue
    print(f"{name} [{params}]: status {d.get('status')} {(d.get('error') or '')[:300]}")
    for w in d.get("workloads", []):
        ax = w["axes"]
        B, Hq, Hk, S, D = ax["batch"], ax["heads_q"], ax["heads_kv"], ax["seqlen"], ax["head_dim"]
        t = w.get("device_time_ns_min") or w.get("time_ns_min") or 0
        line = "  b%d hq%-2d hkv%d S%-5d D%-3d %-5s err %.3g  %.4f ms  %.0f TFLOP/s" % (
            B, Hq, Hk, S, D, "ok" if w.get("correct") else "WRONG", w.get("max_abs_err", 0),
            t / 1e6, fl(B, Hq, S, D) / t / 1e3 if t else 0)
        key = "%d,%d,%d,%d,%d" % (B, Hq, Hk, S, D)
        if key in torch and t:
            line += "  x%.2f SDPA" % (torch[key] / t)
        if w.get("reason"):
            line += "  (" + w["reason"][:120] + ")"
        print(line)
PY
