# bench/gpu/diag_lib.sh — sourced by the device diagnostics (decode_diag.sh,
# attn_diag.sh): the parallel nvcc builds of one source at several
# parameter sets, and where Nsight Compute is on the device machine.

# diag_build SRC OUT NAME SET...: one build per SET ("default" or K=V
# words, each a -DK=V), all at once (nvcc takes 30-60 s each), as
# OUT/NAME0, OUT/NAME1, ... with their logs in OUT/build<i>.log
diag_build() {
  local src=$1 out=$2 name=$3 i=0 s kv
  shift 3
  for s in "$@"; do
    local defs=()
    [[ $s == default ]] || for kv in $s; do defs+=("-D$kv"); done
    nvcc -O3 -std=c++17 -arch=sm_90a "${defs[@]}" -o "$out/$name$i" "$src" >"$out/build$i.log" 2>&1 &
    i=$((i + 1))
  done
  wait
}

# diag_ncu: the path of ncu, or nothing
diag_ncu() {
  command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1
}
