#!/usr/bin/env bash
# bench/gpu/session.sh — every GPU benchmark of the open issues in ONE device
# call, each step under its own time cap so that one slow step cannot eat
# the others (the device time of a session is 30 minutes, start-up
# included). From the folder holding build/, tasks/ and bench/:
#   bench/gpu/session.sh OUTDIR
# Steps (skipped when their script is missing): mlx.sh (issue 15; needs MLX
# installed by ../shared/device/stage-mlx.sh's two calls first), run.sh with
# the checks and the norm searches (issue 14), kernels16.sh (issue 16),
# llm_session.sh (issue 22). CAP_<STEP> overrides a cap in seconds; STEPS
# (default "mlx norms kernels16 llm") chooses steps, so that a session split
# over two calls runs each step once.
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
steps=" ${STEPS:-mlx norms kernels16 llm} "
has() { [[ $steps == *" $1 "* ]]; }
has mlx && [[ -f bench/gpu/mlx.sh ]] && step mlx "${CAP_MLX:-110}" env LIMIT_S=$((${CAP_MLX:-110} - 30)) bash bench/gpu/mlx.sh "$out/mlx"
has norms && step norms "${CAP_NORMS:-130}" env CHECKS="${CHECKS:-1}" ANCHORS=1 OPENCL="${OPENCL:-0}" BUDGET="${BUDGET:-6}" TASK_TIME="${TASK_TIME:-20}" \
  RUN_ARGS="--finalists 0" KS_COMMAND="bench/gpu/session.sh (run.sh step)" \
  bash bench/gpu/run.sh "$out/norms" ${NORM_TASKS:-softmax rmsnorm_bf16 layernorm}
has kernels16 && [[ -f bench/gpu/kernels16.sh ]] && step kernels16 "${CAP_K16:-150}" env TOTAL=$((${CAP_K16:-150} - 10)) \
  TASKS="${K16_TASKS:-moe_routing decode_paged gemm_bf16 attention_prefill}" bash bench/gpu/kernels16.sh "$out/kernels16"
has llm && [[ -f bench/gpu/llm_session.sh ]] && step llm "${CAP_LLM:-50}" env BUDGET=3 SESSION_TIME=20 COMMIT="$KS_COMMIT" \
  bash bench/gpu/llm_session.sh "$out/llm_session"
echo "session done"
