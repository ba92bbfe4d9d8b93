#!/usr/bin/env bash
# The CUDA executor's tensor maps (DESIGN.md: Candidate file, tensormap;
# Backend interface, cuda) end to end without a GPU: a stand-in libcuda.so.1
# (fake_cuda.c: host memory, kernels not run, launches and encodes logged)
# under `ksearch eval --backend cuda` of gemm_bf16's wgmma_pipeline with
# TMA=1 (nvcc builds the real cubin for sm_90a). Checks: the load-time
# encode; each map covers exactly the buffer passed as that tensor's pointer
# (a as (k, m) box (64, TILE_M), b as (n, k) box (64, 64), 128B swizzle,
# L2 256 B, zeros out of bounds), follows the axes in line order, 64-byte
# aligned; a [m, k] with k % 8 != 0 gets a zero map; a map the driver
# refuses is the candidate's launch error naming the map; timed, the baseline
# (which cannot run there either) ends the evaluation with its reason. The
# kernels do not run, so the outputs stay NaN: status incorrect. Skipped
# without nvcc or cc.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
pass=0 fail=0
check() { # name, "yes" or not, detail when failing
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
nvcc=${KSEARCH_NVCC:-/usr/local/cuda/bin/nvcc}
[[ -x $nvcc ]] || nvcc=$(command -v nvcc)
if [[ -z $nvcc ]] || ! command -v cc >/dev/null; then
  echo "skip: nvcc or cc not found"
  exit 0
fi
work=$(mktemp -d /tmp/ks-tmap-host.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -shared -fPIC -O1 -o "$work/libcuda.so.1" "$here/tests/integration/fake_cuda.c" || exit 1
run() { # log file, workloads, extra env...
  local log=$1 wls=$2
  shift 2
  env LD_LIBRARY_PATH="$work" KS_FAKE_CUDA_LOG="$log" KS_FAKE_CUDA_DUMP=gemm_bf16 \
    KS_FAKE_CUDA_BLOCK=384 KS_FAKE_CUDA_ARGS=ppplllmm KSEARCH_CACHE_DIR="$work/cache" "$@" \
    timeout 600 "$ks" eval gemm_bf16 "$here/tasks/gemm_bf16/templates/cuda/wgmma_pipeline.cu" \
    --backend cuda --param TMA=1 --workloads "$wls" --no-timing --seeds 1 --json -q 2>&1
}
out=$(run "$work/log" 0,2)
log=$(cat "$work/log" 2>/dev/null)
st=$(python3 -c "import json,sys; print(json.load(sys.stdin)['status'])" <<<"$out" 2>/dev/null)
check "eval ran on the stand-in driver (kernels not run: incorrect)" "$([[ $st == incorrect ]] && echo yes)" "$out"
check "one encode at load, before any launch" \
  "$(grep -m1 -E '^(encode|launch)' <<<"$log" | grep -q 'dims=64,64 strides=128 box=64,8 es=1 interleave=0 swizzle=3 l2=3 oob=0' && echo yes)" "$log"
# workload 0: m 1000, n 256, k 128: both maps over the call's own a and b
l0=$(grep -m1 '^launch.* l=1000 l=256 l=128 ' <<<"$log")
read -r pa pb < <(sed -n 's/.* p=\(0x[0-9a-f]*\) p=\(0x[0-9a-f]*\) p=.*/\1 \2/p' <<<"$l0")
check "m1000 n256 k128: map a = a's buffer as (k, m), box (64, 128), 128B" \
  "$([[ -n ${pa:-} && $l0 == *"map(aligned64=1 addr=$pa dims=128,1000 box=64,128 swz=3)"* ]] && echo yes)" "$l0"
check "m1000 n256 k128: map b = b's buffer as (n, k), box (64, 64), 128B" \
  "$([[ -n ${pb:-} && $l0 == *"map(aligned64=1 addr=$pb dims=256,128 box=64,64 swz=3)" ]] && echo yes)" "$l0"
check "the encodes take packed strides and bfloat16" \
  "$(grep -q "addr=$pa rank=2 dtype=9 dims=128,1000 strides=256 box=64,128" <<<"$log" && echo yes)" "$log"
# workload 2: m 7, n 1000, k 513: a's rows are 1026 bytes: a zero map
l2=$(grep -m1 '^launch.* l=7 l=1000 l=513 ' <<<"$log")
pb2=$(sed -n 's/.* p=0x[0-9a-f]* p=\(0x[0-9a-f]*\) p=.*/\1/p' <<<"$l2")
check "m7 n1000 k513: a zero map for a, b encoded as (1000, 513)" \
  "$([[ $l2 == *"map=zero map(aligned64=1 addr=$pb2 dims=1000,513 box=64,64 swz=3)" ]] && echo yes)" "$l2"
# timed on a GPU, the score is over the device baseline (the C reference is
# not timed there): a baseline that cannot run ends the evaluation with its
# reason, never a score over nothing (an mlx run scored 1.000 that way)
env LD_LIBRARY_PATH="$work" KS_FAKE_CUDA_LOG="$work/log3" KS_FAKE_CUDA_BLOCK=384 KS_FAKE_CUDA_ARGS=ppplllmm \
  KSEARCH_CACHE_DIR="$work/cache" timeout 600 "$ks" eval gemm_bf16 \
  "$here/tasks/gemm_bf16/templates/cuda/wgmma_pipeline.cu" --backend cuda --workloads 0 --seeds 1 \
  --min-time 0.01 --min-reps 2 --json -q >"$work/timed.out" 2>"$work/timed.err"
rc=$?
check "timed without a working device baseline: exit 2 naming it" \
  "$([[ $rc == 2 ]] && grep -q "baseline failed" "$work/timed.err" && echo yes)" "rc $rc: $(tail -c 400 "$work/timed.err")"
out=$(run "$work/log2" 0 KS_FAKE_CUDA_REFUSE=1)
reason=$(python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('error') or d['workloads'][0].get('reason'))" <<<"$out" 2>/dev/null)
check "a refused map is the candidate's launch error naming it" \
  "$([[ $reason == *"tensormap tma_a (line 13) over a: cuTensorMapEncodeTiled(dims (128,1000), box (64,128), swizzle 128)"* ]] && echo yes)" "$out"
echo "tensormap_host: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
