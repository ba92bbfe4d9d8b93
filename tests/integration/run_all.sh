#!/usr/bin/env bash
# Runs every integration suite; the last line sums them up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-$(mktemp -d /tmp/ksearch-test-cache.XXXXXX)}
failed=0 passed=0
for s in eval_tasks kernel_tasks adversarial search llm timing_order opencl cuda mlx translate report workers; do
  echo "== $s"
  if bash "$here/$s.sh"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "integration: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
