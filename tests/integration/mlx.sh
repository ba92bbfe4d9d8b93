#!/usr/bin/env bash
# MLX backend on the CPU (issue 15): the Python executor speaks the executor
# protocol under its sandbox; the MLX baselines (mx.softmax, mx.fast.rms_norm,
# mx.fast.layer_norm, mlx-lm's Mamba SSM loop, and issue 16's SDPA, gather +
# SDPA, routing composition and matmul) match the C references; hostile
# ops candidates are caught; a kernel-form candidate on an MLX without a GPU
# is exit 3 saying so; the launch-expression evaluator refuses anything but
# arithmetic. MLX custom kernels themselves run only on a GPU:
# bench/gpu/mlx.sh runs them on the H200.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ks=${KSEARCH:-$root/build/ksearch}
py=${KSEARCH_PYTHON:-python3}
own_cache=
if [[ -z ${KSEARCH_CACHE_DIR:-} ]]; then # a private cache, removed at exit
  KSEARCH_CACHE_DIR=$(mktemp -d /tmp/ksearch-test-cache.XXXXXX)
  own_cache=$KSEARCH_CACHE_DIR
  trap 'rm -rf "$own_cache"' EXIT
fi
export KSEARCH_CACHE_DIR
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
if ! "$py" -c 'import mlx.core' >/dev/null 2>&1; then
  echo "skip mlx: $py cannot import mlx (scripts/setup.sh installs mlx[cpu])"
  exit 0
fi
if ! "$py" -c 'import mlx.core as mx; assert not (mx.cuda.is_available() or mx.metal.is_available())' 2>/dev/null; then
  gpu=1
else
  gpu=0
fi
t=$(mktemp -d)
trap 'rm -rf "$t" ${own_cache:+"$own_cache"}' EXIT

# eval TASK FILE STATUS [extra args]: status and exit code
expect() {
  local task=$1 file=$2 want=$3
  shift 3
  "$ks" eval "$task" "$file" --backend mlx --json -q "$@" >"$t/out.json" 2>"$t/err.log"
  local rc=$?
  local got
  got=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$t/out.json" 2>/dev/null)
  if [[ $got == "$want" ]]; then ok "$task $(basename "$file"): $got"; else
    bad "$task $(basename "$file"): status '$got' (rc $rc), wanted $want"; tail -5 "$t/err.log"; fi
}
reason() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error",""))' "$t/out.json"; }

for task in softmax rmsnorm layernorm attention_prefill decode_paged moe_routing gemm_bf16; do
  expect "$task" "$root/tasks/$task/baseline/mlx.py" ok --no-timing --seeds 2
done
# the Mamba loop with timing: the whole protocol (prep, ping, call, collect)
expect mamba_mlx "$root/tasks/mamba_mlx/baseline/mlx.py" ok --seeds 1 --min-reps 2
n=$("$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(1 for w in j["workloads"] if w["correct"] and w["time_ns_min"] > 0))' "$t/out.json")
[[ $n -ge 5 ]] && ok "mamba_mlx: $n CPU workloads timed" || bad "mamba_mlx: only $n workloads timed"

expect softmax "$root/tests/mlx/fork.py" rejected --no-timing
reason | grep -q "forbidden system call" && ok "fork: forbidden system call" || bad "fork: reason $(reason)"
expect softmax "$root/tests/mlx/read_file.py" incorrect --no-timing
expect softmax "$root/tests/mlx/wrong_shape.py" incorrect --no-timing
reason | grep -q "output y is" && ok "wrong shape named" || bad "wrong shape: reason $(reason)"
expect softmax "$root/tests/mlx/raises.py" compile_error --no-timing
reason | grep -q "does not load" && ok "load error named" || bad "load error: reason $(reason)"

"$ks" eval softmax "$root/tests/mlx/bad_form.py" --backend mlx -q >/dev/null 2>"$t/err.log"
rc=$?
[[ $rc -eq 2 ]] && grep -q "form=bogus" "$t/err.log" && ok "bad form: exit 2 naming it" || bad "bad form: rc $rc $(cat "$t/err.log")"

if [[ $gpu -eq 0 ]]; then
  "$ks" eval softmax "$root/tests/mlx/softmax_kernel.cu" --backend mlx --no-timing -q >/dev/null 2>"$t/err.log"
  rc=$?
  [[ $rc -eq 3 ]] && grep -q "run only on a GPU" "$t/err.log" && ok "kernel form without a GPU: exit 3" ||
    bad "kernel form without a GPU: rc $rc $(cat "$t/err.log")"
else
  expect softmax "$root/tests/mlx/softmax_kernel.cu" ok --no-timing
fi

# export: a run's best kernel as a module, imported and compared with MLX's
# own op (a run folder of an ops-form best: kernel-form runs need a GPU)
mkdir -p "$t/run/best"
cp "$root/tasks/rmsnorm/baseline/mlx.py" "$t/run/best/rmsnorm.c"
printf '{"task":"rmsnorm","backend":"mlx","best":{"file":"%s"}}' "$t/run/best/rmsnorm.c" >"$t/run/summary.json"
if "$ks" export "$t/run" --to mlx --out "$t/kernels.py" -q &&
  (cd "$t" && "$py" -c '
import kernels, mlx.core as mx
x = mx.random.normal((37, 129)); w = mx.random.normal((129,))
assert mx.allclose(kernels.rmsnorm(x, w), mx.fast.rms_norm(x, w, 1e-6)).item()
assert mx.allclose(kernels.rmsnorm(x, w, eps=0.5), mx.fast.rms_norm(x, w, 0.5)).item()
try:
    kernels.rmsnorm(x, mx.ones((7,)))
except ValueError as e:
    assert "axis cols" in str(e), e
else:
    raise SystemExit("a shape mismatch passed")
'); then ok "export: imported, matches mx.fast.rms_norm"; else bad "export"; fi
# a task with derived axes (experts + 1, tokens * topk): the module computes
# them as the judge does (its MLX baseline as the exported kernel)
mkdir -p "$t/run2/best"
cp "$root/tasks/moe_routing/baseline/mlx.py" "$t/run2/best/moe_routing.c"
printf '{"task":"moe_routing","backend":"mlx","best":{"file":"%s"}}' "$t/run2/best/moe_routing.c" >"$t/run2/summary.json"
if "$ks" export "$t/run2" --to mlx --out "$t/kr.py" -q &&
  (cd "$t" && "$py" -c '
import kr, mlx.core as mx
lg = mx.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 5.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
try:
    kr.moe_routing(lg)
except TypeError as e:
    assert "topk=N" in str(e), e
else:
    raise SystemExit("an axis no input gives was not asked for")
w, ids, off, srt = kr.moe_routing(lg, topk=2)
assert ids.tolist() == [[1, 2], [2, 0], [0, 1]], ids.tolist()
assert off.tolist() == [0, 2, 4, 6, 6], off.tolist()
assert srt.tolist() == [3, 4, 0, 5, 1, 2], srt.tolist()
'); then ok "export: a task with derived axes"; else bad "export: derived axes"; fi
printf '{"task":"rmsnorm","backend":"c","best":null}' >"$t/run/summary.json"
"$ks" export "$t/run" --to mlx --out "$t/k2.py" -q 2>"$t/err.log"
rc=$?
[[ $rc -eq 2 ]] && grep -q "backend" "$t/err.log" && ok "export of a c run: exit 2" || bad "export of a c run: rc $rc"

# every MLX template, and every single-kernel CUDA template translated with
# `translate --to mlx`, compiles as MLX compiles it: NVRTC, MLX's header,
# signature and template constants (ksmlx.py source), where NVRTC is
"$py" "$here/../mlx/nvrtc_check.py" >/dev/null 2>&1
if [[ $? -ne 77 ]]; then
  n=0
  srcs=()
  for f in "$root"/tasks/*/templates/mlx/*.cu "$root/tests/mlx/softmax_kernel.cu" \
    "$root"/tasks/{softmax,rmsnorm,layernorm,softmax_bf16,rmsnorm_bf16,layernorm_bf16}/templates/cuda/*.cu \
    "$root"/tasks/selective_scan/templates/cuda/{bc_shared,thread_per_channel}.cu; do
    task=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")
    [[ $f == */tests/mlx/* ]] && task=softmax
    m=$f
    if [[ $f == */templates/cuda/* ]]; then
      m=$t/tr-$task-$(basename "$f")
      "$ks" translate "$f" --to mlx --out "$m" >"$t/tr.log" 2>&1 || { bad "translate --to mlx $f: $(tail -3 "$t/tr.log")"; continue; }
      grep -q "0 KSEARCH-TODO" "$t/tr.log" || bad "translate --to mlx $f: TODO marks"
    fi
    n=$((n + 1))
    "$py" "$root/mlx/ksmlx.py" source "$root/tasks/$task/task.json" "$m" >"$t/k$n.cu" || bad "ksmlx source $m"
    srcs+=("$t/k$n.cu")
  done
  if "$py" "$here/../mlx/nvrtc_check.py" "${srcs[@]}" >"$t/nvrtc.log" 2>&1; then
    ok "NVRTC: $n MLX kernels compile (templates and translations)"
  else
    bad "NVRTC: $(head -20 "$t/nvrtc.log")"
  fi
else
  echo "skip NVRTC check: no libnvrtc.so"
fi

# the translated MLX templates are `translate --to mlx` of CUDA templates
# (vec_row: of block_row, family renamed): they stay what translate writes
# today. TASK CUDA-TEMPLATE MLX-TEMPLATE
t_tr=$t/translated.cu
while read -r task from to; do
  (cd "$root" && "$ks" translate "tasks/$task/templates/cuda/$from" --to mlx --out "$t_tr" >/dev/null 2>&1) &&
    sed -i "s|^// ksearch: family=${from%.cu}\$|// ksearch: family=${to%.cu}|" "$t_tr"
  if cmp -s "$t_tr" "$root/tasks/$task/templates/mlx/$to"; then
    ok "$task mlx/$to is translate --to mlx of cuda/$from"
  else
    bad "$task mlx/$to differs from translate --to mlx of templates/cuda/$from (regenerate it: cd to the repo root, ksearch translate tasks/$task/templates/cuda/$from --to mlx --out tasks/$task/templates/mlx/$to)"
  fi
done <<'EOF'
softmax block_row.cu vec_row.cu
rmsnorm block_row.cu vec_row.cu
layernorm block_row.cu vec_row.cu
attention_prefill mma_flash.cu mma_flash.cu
decode_paged group_per_block.cu group_per_block.cu
gemm_bf16 mma_pipeline.cu mma_pipeline.cu
moe_routing fused_persistent.cu fused_persistent.cu
EOF
# decode's flash_decode: the same, with its one edit (MERGE pinned to 1: the
# merge inside the one kernel MLX launches; PDL and HEAD_WAIT to 0: no second
# launch; the TODO about fd_merge gone)
(cd "$root" && "$ks" translate tasks/decode_paged/templates/cuda/flash_decode.cu --to mlx --out "$t_tr" >/dev/null 2>&1)
sed -i -e '/^\/\/ KSEARCH-TODO(persistent_kernel)/d' -e 's|^// ksearch: param MERGE in 0,1$|// ksearch: param MERGE in 1|' \
  -e 's|^// ksearch: param PDL in 1,0$|// ksearch: param PDL in 0|' \
  -e 's|^// ksearch: param HEAD_WAIT in 0,1$|// ksearch: param HEAD_WAIT in 0|' \
  -e 's|^// ksearch: backend=mlx entry=fd_split |// ksearch: backend=mlx entry=decode_paged |' "$t_tr"
sed -e '/^\/\/ One edit after translate/,/never needed\.$/d' "$root/tasks/decode_paged/templates/mlx/flash_decode.cu" >"$t/fd_committed.cu"
if cmp -s "$t_tr" "$t/fd_committed.cu"; then
  ok "decode_paged mlx/flash_decode.cu is translate --to mlx of cuda/flash_decode.cu with MERGE pinned to 1, PDL and HEAD_WAIT to 0"
else
  bad "decode_paged mlx/flash_decode.cu differs from translate --to mlx of cuda/flash_decode.cu plus its edit (regenerate it)"
fi

# the launch grammar: arithmetic over axes and params, nothing else
if "$py" - "$root/mlx" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ksmlx
n = {"rows": 333, "TG": 256}
assert ksmlx.dims("rows*TG", n, "grid") == (85248, 1, 1)
assert ksmlx.dims("cdiv(rows, 4), 2", n, "grid") == (84, 2, 1)
assert ksmlx.eval_expr("max(rows, TG) % 7 + 2^3", n) == 333 % 7 + 8
for bad in ["__import__('os')", "rows.real", "[1][0]", "nope + 1", "0"]:
    try:
        ksmlx.dims(bad, n, "grid")
    except ksmlx.CandidateError:
        continue
    raise SystemExit(f"accepted {bad}")
PY
then ok "launch expressions"; else bad "launch expressions"; fi

# the executor's probe mode (the ceiling probe beside a GPU candidate), over
# the protocol, on MLX's CPU device
if out=$("$py" "$here/mlx_probe.py" "$root" 2>&1); then
  echo "$out"
else
  echo "$out"
  bad "mlx executor probe mode"
fi

[[ $fail -eq 0 ]] && echo "mlx: all passed" || echo "mlx: FAILED"
exit $fail
