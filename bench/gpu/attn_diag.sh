#!/usr/bin/env bash
# bench/gpu/attn_diag.sh — mma_flash outside the judge (bench/gpu/
# attn_diag.cu) at a few parameter sets on issue 16's S 4096 shapes, then
# Nsight Compute on the default at b1 S 4096 d128, clocks left alone (its
# SpeedOfLight, compute, memory, occupancy, launch, scheduler and
# warp-state sections): where the mma.sync kernel's time goes. From the
# repo root on the device:
#   bash bench/gpu/attn_diag.sh OUT
# VARIANTS: ";"-separated sets of K=V (default below), each an nvcc build
# (on the device, in parallel; BIN=DIR takes DIR/attn_diag0.. built
# elsewhere with the same sets). One JSON line per (set, shape) in
# OUT/attn_diag.jsonl, ncu's report in OUT/ncu.txt (NCU=0: none).
set -u
out=${1:?usage: bench/gpu/attn_diag.sh OUT}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH
# shellcheck source=bench/gpu/diag_lib.sh
. "$here/bench/gpu/diag_lib.sh"
IFS=';' read -ra sets <<<"${VARIANTS:-default;KU=4;WM=1 BQ=64}"
bin=${BIN:-$out}
[[ -n ${BIN:-} ]] || diag_build "$here/bench/gpu/attn_diag.cu" "$out" attn_diag "${sets[@]}"
i=0
for s in "${sets[@]}"; do
  for shape in "1 32 8 4096 128" "1 32 8 4096 64" "1 32 8 1024 128"; do
    # shellcheck disable=SC2086
    line=$(timeout 60 "$bin/attn_diag$i" $shape 2>&1)
    python3 -c 'import json, sys
try:
    r = json.loads(sys.argv[2])
except ValueError:  # a failed run: its message, kept as a string
    r = {"error": sys.argv[2][-300:]}
print(json.dumps({"set": sys.argv[1], "result": r}))' "$s" "$line" | tee -a "$out/attn_diag.jsonl"
  done
  i=$((i + 1))
done
ncu=$(diag_ncu)
if [[ ${NCU:-1} == 0 ]]; then
  echo "ncu: skipped (NCU=0)"
elif [[ -n $ncu && -x $bin/attn_diag0 ]]; then
  timeout 150 "$ncu" --clock-control none -k attention_prefill -s 2 -c 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section SchedulerStats --section WarpStateStats \
    "$bin/attn_diag0" 1 32 8 4096 128 3 >"$out/ncu.txt" 2>&1
  echo "ncu ($ncu): exit $? (OUT/ncu.txt)"
else
  echo "ncu: not found, or the default set did not build"
fi
