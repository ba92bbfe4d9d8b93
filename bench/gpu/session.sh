#!/usr/bin/env bash
# bench/gpu/session.sh — every GPU benchmark of the open issues in ONE device
# call, each step under its own time cap so that one slow step cannot eat
# the others (the device time of a session is 30 minutes, start-up
# included). From the folder holding build/, tasks/ and bench/:
#   bench/gpu/session.sh OUTDIR
# Steps (skipped when their script is missing): mlx.sh (issue 15; needs MLX
# installed by ../shared/device/stage-mlx.sh's two calls first), run.sh with
# the checks and the norm searches (issue 14), kernels16.sh (issue 16),
# llm_session.sh (issue 22). CAP_<STEP> overrides a cap in seconds.
set -u
out=${1:?usage: session.sh OUTDIR}
mkdir -p "$out"
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-/tmp/kscache-gpu}
export KS_COMMIT=${KS_COMMIT:-$(cat .devcarry/commit 2>/dev/null || git rev-parse HEAD 2>/dev/null)}
step() { # name, cap seconds, command...
  local name=$1 cap=$2
  shift 2
  local s
  s=$(date +%s)
  timeout -k 5 "$cap" "$@" >"$out/$name.log" 2>&1
  echo "[$(date +%T)] $name: exit $? in $(($(date +%s) - s)) s (cap $cap)"
  tail -n 25 "$out/$name.log" | cut -c1-400
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
[[ -f bench/gpu/mlx.sh ]] && step mlx "${CAP_MLX:-110}" bash bench/gpu/mlx.sh "$out/mlx"
step norms "${CAP_NORMS:-190}" env CHECKS=1 ANCHORS=1 BUDGET="${BUDGET:-6}" TASK_TIME="${TASK_TIME:-18}" \
  RUN_ARGS="--finalists 0" KS_COMMAND="bench/gpu/session.sh (run.sh step)" \
  bash bench/gpu/run.sh "$out/norms" softmax rmsnorm layernorm softmax_bf16 rmsnorm_bf16 layernorm_bf16
[[ -f bench/gpu/kernels16.sh ]] && step kernels16 "${CAP_K16:-110}" bash bench/gpu/kernels16.sh "$out/kernels16"
[[ -f bench/gpu/llm_session.sh ]] && step llm "${CAP_LLM:-70}" env BUDGET=4 SESSION_TIME=45 COMMIT="$KS_COMMIT" \
  bash bench/gpu/llm_session.sh "$out/llm_session"
echo "session done"
