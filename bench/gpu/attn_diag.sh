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
IFS=';' read -ra sets <<<"${VARIANTS:-default;KU=4;WM=1 BQ=64}"
bin=${BIN:-$out}
if [[ -z ${BIN:-} ]]; then
  i=0
  for s in "${sets[@]}"; do
    defs=()
    [[ $s == default ]] || for kv in $s; do defs+=("-D$kv"); done
    nvcc -O3 -std=c++17 -arch=sm_90a "${defs[@]}" -o "$out/attn_diag$i" \
      "$here/bench/gpu/attn_diag.cu" >"$out/build$i.log" 2>&1 &
    i=$((i + 1))
  done
  wait
fi
i=0
for s in "${sets[@]}"; do
  for shape in "1 32 8 4096 128" "1 32 8 4096 64" "1 32 8 1024 128"; do
    # shellcheck disable=SC2086
    line=$(timeout 60 "$bin/attn_diag$i" $shape 2>&1)
    echo "{\"set\": \"$s\", \"result\": ${line:-null}}" | tee -a "$out/attn_diag.jsonl"
  done
  i=$((i + 1))
done
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
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
