#!/usr/bin/env bash
# bench/gpu/verify.sh — the CUDA backend's checks on the device machine, in
# one call: tests/integration/cuda.sh (baselines, every template, the
# adversarial kernels, the roofline), the sandbox in audit mode (which system
# calls the CUDA executor makes that the allow-list would trap), and each
# template's default parameters timed on the GPU workloads.
#   bench/gpu/verify.sh OUTDIR     (from the folder holding build/, tasks/)
set -u
out=${1:?usage: verify.sh OUTDIR}
mkdir -p "$out"
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu}
ks=${KSEARCH:-./build/ksearch}
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
KSEARCH=$ks bash tests/integration/cuda.sh >"$out/cuda_it.log" 2>&1
echo "cuda.sh exit $?: $(grep -c '^ok' "$out/cuda_it.log") ok, $(grep -c '^FAIL' "$out/cuda_it.log") FAIL"
grep '^FAIL' "$out/cuda_it.log" | cut -c1-600
rm -f /tmp/ks-audit.txt
KSEARCH_SANDBOX_AUDIT=/tmp/ks-audit.txt "$ks" eval softmax tasks/softmax/templates/cuda/block_row.cu --backend cuda --json -q --seeds 1 --min-time 0.02 >"$out/audit_eval.json" 2>&1
echo "sandbox audit (call numbers the filter would trap): $(sort -n /tmp/ks-audit.txt 2>/dev/null | uniq -c | tr '\n' ' ')"
for t in softmax rmsnorm layernorm softmax_bf16 rmsnorm_bf16 layernorm_bf16 selective_scan; do
  for k in tasks/$t/baseline/cuda.cu tasks/$t/templates/cuda/*.cu; do
    "$ks" eval "$t" "$k" --backend cuda --json -q --seeds 1 --min-time 0.05 >"$out/t.json" 2>&1
    python3 - "$out/t.json" "$t" "$k" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print(sys.argv[2], sys.argv[3], "no JSON:", open(sys.argv[1]).read()[:300]); sys.exit()
ws = [w for w in d["workloads"] if w["axes"].get("rows") == 8192 or w["axes"].get("dim") in (1536, 2048)]
print("%-15s %-45s %s %s" % (sys.argv[2], sys.argv[3].split("/")[-1] if "baseline" not in sys.argv[3] else "BASELINE", d["status"],
      " | ".join("%s %.1fus %.0fGB/s base x%.2f" % ("x".join(str(v) for v in w["axes"].values()), w.get("device_time_ns_min", 0) / 1e3, w["gbps"], w.get("baseline_speedup", 0)) for w in ws) or d["error"][:300]))
PY
  done
done
