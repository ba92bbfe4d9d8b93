#!/usr/bin/env bash
# bench/gpu/decode_diag.sh — flash_decode's stages timed apart on the GPU
# (bench/gpu/decode_diag.cu: full, split alone, merge alone, the paged-read
# and stream-read ceilings of the same bytes, the copy anchor) for a few
# parameter sets, at batch 1 x 32768 tokens and batch 64 x 1024 (issue 16's
# decode shapes of uniform length), then Nsight Compute on the default's
# fd_split at batch 1 where ncu reads counters (Firecracker), clocks left
# alone (its SpeedOfLight, memory, occupancy, launch and warp-state
# sections). From the repo root on the device, no carried build needed:
#   bash bench/gpu/decode_diag.sh OUT
# VARIANTS: ";"-separated sets of K=V (default below); one JSON line per
# (set, shape) in OUT/decode_diag.jsonl, ncu's table in OUT/ncu.txt (NCU=0:
# none).
set -u
out=${1:?usage: bench/gpu/decode_diag.sh OUT}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH
# shellcheck source=bench/gpu/diag_lib.sh
. "$here/bench/gpu/diag_lib.sh"
IFS=';' read -ra sets <<<"${VARIANTS:-default;PDL=0;SPLIT_BLOCKS=396;WARPS=4 SPLIT_BLOCKS=528;PIPE=1;MERGE=1}"
diag_build "$here/bench/gpu/decode_diag.cu" "$out" diag "${sets[@]}"
i=0
for s in "${sets[@]}"; do
  for shape in "1 32 8 128 32768" "64 32 8 128 1024"; do
    if [[ -x $out/diag$i ]]; then
      read -r sb shq shk sd sl <<<"$shape"
      mp=$(((sl + 15) / 16))
      # shellcheck disable=SC2086
      geo=$(python3 "$here/tests/cuda_emu/cuda_launch.py" "$here/tasks/decode_paged/task.json" \
        "$here/tasks/decode_paged/templates/cuda/flash_decode.cu" batch="$sb" heads_q="$shq" \
        heads_kv="$shk" head_dim="$sd" max_pages="$mp" num_pages=$((sb * mp)) $([[ $s == default ]] || echo "$s"))
      # shellcheck disable=SC2086
      line=$(timeout 120 "$out/diag$i" $shape $geo 2>"$out/run$i.err"); rc=$?
      python3 - "$line" "$s" "$shape" "$rc" "$out/run$i.err" >>"$out/decode_diag.jsonl" <<'PY'
import json, sys
line, s, shape, rc, err = sys.argv[1:]
try:
    d = json.loads(line)
except ValueError:
    d = {"shape": shape, "error": open(err).read()[-300:]}
d.update({"set": s, "exit": int(rc)})
print(json.dumps(d))
PY
    else
      python3 -c 'import json,sys; print(json.dumps({"set": sys.argv[1], "error": "build failed: " + open(sys.argv[2]).read()[-300:]}))' \
        "$s" "$out/build$i.log" >>"$out/decode_diag.jsonl"
    fi
  done
  i=$((i + 1))
done
python3 - "$out/decode_diag.jsonl" <<'PY'
import json, sys
print("%-28s %-7s %6s %6s %6s %6s %6s %6s  %s" % ("set", "batch", "full", "split", "merge", "read", "stream", "copy", "fractions full/split/read/stream"))
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "us_min_median" not in d:
        print(d.get("set"), d.get("error", d)); continue
    u = d["us_min_median"]; f = d["fraction_of_copy"]
    print("%-28s %-7s %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f  %.3f %.3f %.3f %.3f err %.3g" % (
        d["set"], d["shape"]["batch"], u["full"][0], u["split"][0], u["merge"][0], u["read"][0],
        u["stream"][0], u["copy"][0], f["full"], f["split"], f["read"], f["stream"], d["max_abs_err"]))
PY
ncu=$(diag_ncu)
if [[ ${NCU:-1} == 0 ]]; then
  echo "ncu: skipped (NCU=0)"
elif [[ -n $ncu && -x $out/diag0 ]]; then
  # sections, not metric names: a metric the installed ncu lacks would fail
  # the whole list
  timeout 180 "$ncu" --clock-control none -k fd_split -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    "$out/diag0" >"$out/ncu.txt" 2>&1
  echo "ncu ($ncu): exit $? (OUT/ncu.txt)"
  tail -20 "$out/ncu.txt"
else
  echo "ncu: not found, or the default set did not build"
fi
