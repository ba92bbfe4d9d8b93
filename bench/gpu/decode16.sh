#!/usr/bin/env bash
# bench/gpu/decode16.sh — issue 16's paged-decode goal in one device call
# (DESIGN.md: Templates; the decode_paged flash_decode family), from the repo
# root with build/ksearch and build/ksearch-runner present:
#   1. kernels16.sh for decode_paged only (roofline copy, every CUDA template
#      at its defaults on the GPU workloads, torch's gather + SDPA), then a
#      table: per workload and kernel, the fraction of ksearch's copy
#      bandwidth over the KV bytes read (goal 0.85) and the ratio to torch;
#   2. flash_decode at VARIANTS (parameter sets, `;`-separated) through
#      variants.sh: each one `ksearch eval` on the same workloads (the C
#      references are cached by step 1), in result16.json with the same
#      fractions and ratios to torch.
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
bash "$here/variants.sh" decode_paged flash_decode "$out" \
  "${VARIANTS:-SPLIT_PAGES=64;PIPE=1;WARPS=2;SPLIT_PAGES=32 PIPE=2}"
echo "decode16: $(($(date +%s) - t0)) s"
