#!/usr/bin/env bash
# Times the issue-16 references on their GPU-sized workloads (bench/
# reference_time_gpu.c; tasks/<t>/workloads_gpu.json). Run on the device
# machine: bash bench/reference_time_gpu.sh [TASK]. Prints one line per
# workload: seconds for one reference call on all cores.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
cc -O3 -march=native -fopenmp -std=gnu11 -w -o "$out/reftime" "$here/bench/reference_time_gpu.c" \
  "$here"/tasks/{attention_prefill,decode_paged,moe_routing,gemm_bf16}/reference.c -lm
"$out/reftime" "$@"
rm -rf "$out"
