#!/usr/bin/env bash
# bench/gpu/decode16.sh — issue 16's paged-decode goal in one device call
# (DESIGN.md: Templates; the decode_paged flash_decode family), from the repo
# root with build/ksearch and build/ksearch-runner present:
#   1. kernels16.sh for decode_paged only (roofline copy, every CUDA template
#      at its defaults on the GPU workloads, torch's gather + SDPA), then a
#      table: per workload and kernel, the fraction of ksearch's copy
#      bandwidth over the KV bytes read (goal 0.85) and the ratio to torch;
#   2. flash_decode at VARIANTS (parameter sets, `;`-separated), each one
#      `ksearch eval` on the same workloads (the C references are cached by
#      step 1), as the same fractions.
# About 2-3 minutes on the H200 (TOTAL caps step 1).
#   [TOTAL=150] [VARIANTS="..."] bench/gpu/decode16.sh OUTDIR
set -u
out=${1:?usage: decode16.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
ks=${KSEARCH:-./build/ksearch}
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu16}
t0=$(date +%s)
TASKS=decode_paged STEPS16="templates torch" TOTAL=${TOTAL:-150} bash "$here/kernels16.sh" "$out"
python3 - "$out/result16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("copy GB/s:", d["roofline"].get("copy_gbps"))
for w in d["tasks"].get("decode_paged", {}).get("workloads", []):
    a = w["axes"]
    print("%sx%sx%sx%s pages %s:" % (a["batch"], a["heads_q"], a["heads_kv"], a["head_dim"], a["max_pages"]),
          "torch %.3f ms" % (w.get("torch", {}).get("gather_sdpa", {}).get("time_ns_min", 0) / 1e6))
    for k, e in sorted(w.get("kernels", {}).items(), key=lambda x: -x[1].get("fraction_of_copy", 0)):
        print("  %-16s %s %.3f ms  copy fraction %.3f  vs torch %.2f" % (
            k, "ok   " if e.get("correct") else "WRONG", e["device_ns_min"] / 1e6,
            e.get("fraction_of_copy", 0), e.get("vs_torch", 0)))
PY
copy=$(python3 -c "import json; print(json.load(open('$out/roofline.json')).get('copy_gbps', 0))" 2>/dev/null || echo 0)
wl=$(python3 "$here/gpu_workloads.py" decode_paged)
IFS=";" read -r -a vars <<<"${VARIANTS:-SPLIT_PAGES=64;PIPE=1;WARPS=2;SPLIT_PAGES=32 PIPE=2}"
for v in "${vars[@]}"; do
  args=()
  for p in $v; do args+=(--param "$p"); done
  f="$out/evals/flash_decode.$(echo "$v" | tr ' =' '_-').json"
  timeout 60 "$ks" eval decode_paged tasks/decode_paged/templates/cuda/flash_decode.cu "${args[@]}" --workloads "$wl" \
    --backend cuda --json -q --seeds 1 --min-time 0.05 --min-reps 5 --timeout 50 >"$f" 2>"$f.err"
  python3 - "$f" "$copy" "$v" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("flash_decode [%s]: no result" % sys.argv[3]); sys.exit(0)
copy = float(sys.argv[2])
cells = []
for w in d.get("workloads", []):
    a, ns = w["axes"], w.get("device_time_ns_min") or w.get("time_ns_min") or 0
    by = 4.0 * a["batch"] * (a["max_pages"] * 16 - 15) * a["heads_kv"] * a["head_dim"]
    cells.append("%sx%s: %s %.3f ms %.3f" % (a["batch"], a["max_pages"], "ok" if w.get("correct") else "WRONG",
                                             ns / 1e6, by / ns / copy if ns and copy else 0))
print("flash_decode [%s]: %s %s" % (sys.argv[3], d.get("status"), " | ".join(cells)))
PY
done
echo "decode16: $(($(date +%s) - t0)) s"
