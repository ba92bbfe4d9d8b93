#!/usr/bin/env bash
# Runs every integration suite; the last line sums them up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# a private cache (references of the GPU-sized workloads: gigabytes), removed
# at the end unless the caller named one
if [[ -z ${KSEARCH_CACHE_DIR:-} ]]; then
  KSEARCH_CACHE_DIR=$(mktemp -d /tmp/ksearch-test-cache.XXXXXX)
  trap 'rm -rf "$KSEARCH_CACHE_DIR"' EXIT
fi
export KSEARCH_CACHE_DIR
failed=0 passed=0
for s in eval_tasks kernel_tasks adversarial search llm llm_backends timing_order opencl cuda tensormap_host cuda_emu mlx translate report workers workers_tls; do
  echo "== $s"
  t0=$SECONDS
  if bash "$here/$s.sh"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  echo "== $s: $((SECONDS - t0)) s"
done
echo "integration: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
