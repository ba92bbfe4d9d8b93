#!/usr/bin/env bash
# All benchmarks; each prints ratios measured in one run (never a bare time).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/build/bench_harness_overhead" "$here/tests/timing/softmax_small" "$here/tests/timing/softmax_vector.c"
bash "$here/bench/search_tasks.sh"
bash "$here/bench/search_efficiency.sh"
bash "$here/bench/opencl_vs_c.sh"
bash "$here/bench/workers.sh"
bash "$here/bench/broker_tls.sh"
