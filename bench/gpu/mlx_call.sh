#!/usr/bin/env bash
# bench/gpu/mlx_call.sh — the MLX work of one device call on the H200 (issues
# 15, 20, 22), after ../shared/device/stage-mlx.sh's two calls installed MLX
# there; from the repo root with the carried build (bench/gpu/carry.sh):
#   bash .dev/mlx-b/install.sh && .devcarry/go.sh bash bench/gpu/mlx_call.sh OUT
# Steps, each under its own timeout, each output under OUT:
#   1. mlx_overhead.py at 8192x8192 and 2049x3001, and again at 8192x8192
#      with MLX_USE_CUDA_GRAPHS=0: where a custom kernel's time goes
#      (overhead.jsonl);
#   2. the scripted LLM session writing MLX kernels (llm_session.sh with
#      BACKEND=mlx: record, then replay offline), OUT/llm-mlx;
#   3. a cache recorded on another machine replayed here offline: REPLAY
#      (default .dev/llmcache-opencl, an OpenCL session recorded on the dev
#      machine's PoCL) through the H200's OpenCL, OUT/llm-replay;
#   4. tests/integration/mlx.sh, which on a GPU also runs the kernel form and
#      the MLX device probe (mlx_probe.py), OUT/mlx_it.log;
#   5. bench/gpu/mlx.sh with LIMIT_S (default 150) for what time is left.
# Ends with OUT/x.tgz of everything (the call returns few files).
set -u
out=${1:?usage: bench/gpu/mlx_call.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "[$(date +%T)] $*" | tee -a "$out/call.log"; }
log "commit ${KS_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}"
for sz in "8192 8192" "2049 3001"; do
  read -r r c <<<"$sz"
  timeout 60 python3 bench/gpu/mlx_overhead.py --rows "$r" --cols "$c" >>"$out/overhead.jsonl" 2>>"$out/overhead.err"
  log "overhead $r x $c: exit $?"
done
MLX_USE_CUDA_GRAPHS=0 timeout 60 python3 bench/gpu/mlx_overhead.py >>"$out/overhead.jsonl" 2>>"$out/overhead.err"
log "overhead without cuda graphs: exit $?"
cat "$out/overhead.jsonl"
BACKEND=mlx timeout 240 bash bench/gpu/llm_session.sh "$out/llm-mlx" >"$out/llm-mlx.log" 2>&1
log "llm session mlx: exit $? $(tail -3 "$out/llm-mlx.log" | tr '\n' ' ')"
rep=${REPLAY:-.dev/llmcache-opencl}
if [[ -d $rep ]]; then
  REPLAY_FROM=$rep BACKEND=opencl timeout 120 bash bench/gpu/llm_session.sh "$out/llm-replay" >"$out/llm-replay.log" 2>&1
  log "replay of $rep on opencl: exit $? $(tail -3 "$out/llm-replay.log" | tr '\n' ' ')"
fi
timeout 200 bash tests/integration/mlx.sh >"$out/mlx_it.log" 2>&1
log "tests/integration/mlx.sh: exit $? $(grep -c '^ok' "$out/mlx_it.log") ok, $(grep -c '^FAIL' "$out/mlx_it.log") FAIL"
grep '^FAIL' "$out/mlx_it.log" | head -5
if [[ ${LIMIT_S:-150} -gt 0 ]]; then
  LIMIT_S=${LIMIT_S:-150} timeout $((${LIMIT_S:-150} + 60)) bash bench/gpu/mlx.sh "$out/mlx" >"$out/mlx.log" 2>&1
  log "mlx.sh: exit $?"
fi
tar czf /tmp/x.tgz -C "$out" . && mv /tmp/x.tgz "$out/x.tgz"
