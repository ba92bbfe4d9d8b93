#!/usr/bin/env bash
# `ksearch run --planner llm` on the GPU-style backends (issue 22) against
# the scripted fake server (tests/fake_llm/server.py, 127.0.0.1 only):
#  - opencl (PoCL here): a whole rmsnorm search whose answers are OpenCL
#    kernels in ```opencl blocks; a CUDA intrinsic in OpenCL and a missing
#    launch line are rejected before the OpenCL compiler, the reasons go into
#    the next debug prompt; the prompts carry the target's launch-line facts
#    and the concepts' OpenCL forms; the run replays offline from
#    --llm-cache with the server stopped;
#  - --seed-cuda FILE.cu with --planner llm: the CUDA kernel's concepts and
#    source in the prompts; --seed-from RUN_DIR and its errors;
#  - cuda: the same loop with hand-written CUDA answers (forbidden host API,
#    broken header, OpenCL in CUDA, a compile error, a wrong kernel, three
#    correct variants). Without a GPU the run exits 3 saying so and the rest
#    is skipped with that reason (the unit test llm_target checks those
#    answers and compiles the accepted ones with nvcc);
#    bench/gpu/llm_session.sh runs it on the H200.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
tmp=$(mktemp -d /tmp/ksearch-llmb-test.XXXXXX)
pass=0 fail=0
cleanup() {
  cleanup_servers
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$here/tests/integration/fake_llm.sh"
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }

unset KSEARCH_API_KEY
common=(--planner llm --llm-model fake-model --attempts 2 --min-time 0.02 --seeds 1 --json)
# scripted_run NAME SCRIPT BACKEND BUDGET [RUN OPTIONS...]: one run of
# rmsnorm against the fake server playing tests/fake_llm/scripts/SCRIPT,
# the server stopped after it; sets log (the server's), run (the run
# folder), url, out (stdout) and rc; stderr in $tmp/NAME.stderr
scripted_run() {
  local name=$1 script=$2 backend=$3 budget=$4
  shift 4
  log=$tmp/$name.log run=$tmp/$name
  start_server "$script" "$log"
  url=http://127.0.0.1:$port/v1
  out=$("$ks" run rmsnorm --backend "$backend" "${common[@]}" --budget "$budget" --out "$run" \
    --llm-base-url "$url" "$@" 2>"$tmp/$name.stderr")
  rc=$?
  stop_server "$server_pid"
}

# ---- opencl
if ! "$ks" roofline --backend opencl --list >/dev/null 2>&1; then
  echo "skip: opencl: no OpenCL platform here"
else
  scripted_run ocl rmsnorm_opencl.json opencl 3 --llm-cache "$tmp/cache"
  statuses=$(db "$run/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
  check "opencl llm run: two correct OpenCL kernels, best correct" \
    "$([[ $rc == 0 && $statuses == ok,ok && $(field '"yes" if d["best"] and d["backend"] == "opencl" and d["best"]["score"] > 0 else "no"' "$out") == yes ]] && echo yes)" \
    "exit $rc: $statuses ${out:0:300} $(tail -3 "$tmp/ocl.stderr")"
  srcs=$(db "$run/ksearch.db" "select (select count(*) from candidates where source like '%backend=opencl%launch global=%') || ':' || (select count(*) from candidates where source like '%threadIdx%' or source like '%__syncthreads%')")
  check "the answers became opencl candidates with launch lines; the CUDA intrinsics never reached a compiler" \
    "$([[ $srcs == 2:0 ]] && echo yes)" "with launch:with CUDA = $srcs"
  rej=$(db "$run/ksearch.db" "select group_concat(json, ' ') from events where kind='precheck_rejected'")
  check "rejected before compiling: CUDA in OpenCL, then a missing launch line" \
    "$([[ $rej == *threadIdx*__syncthreads* && $rej == *'(header)'* ]] && echo yes)" "$rej"
  q=$(asked "$log" "debug#0")
  check "the debug prompt names each CUDA intrinsic with its OpenCL form" \
    "$([[ $q == *"(ksearch prompt: debug)"* && $q == *"threadIdx: get_local_id"* && $q == *"__syncthreads: barrier"* && $q == *'```opencl'* ]] && echo yes)" "${q:0:400}"
  q=$(asked "$log" "debug#1")
  check "the next debug prompt says the launch line is missing" \
    "$([[ $q == *"rejected before compiling"* && $q == *"launch global="* ]] && echo yes)" "${q:0:400}"
  q=$(asked "$log" "code#0")
  check "the code prompt carries the target's launch lines, arguments and OpenCL concept forms" \
    "$([[ $q == *"launch_lines.format"* && $q == *"__global const T *"* && $q == *"sub_group_reduce_add"* && $q == *'one ```opencl block'* ]] && echo yes)" "${q:0:400}"
  out2=$("$ks" run rmsnorm --backend opencl "${common[@]}" -q --budget 3 --out "$tmp/ocl-replay" \
    --llm-base-url "$url" --llm-cache "$tmp/cache" --llm-retries 0); rc=$?
  statuses2=$(db "$tmp/ocl-replay/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
  hits=$(db "$tmp/ocl-replay/ksearch.db" "select group_concat(distinct status) from llm_calls")
  check "opencl run replayed offline from --llm-cache (server stopped)" \
    "$([[ $rc == 0 && $statuses2 == "$statuses" && $hits == cache_hit ]] && echo yes)" "exit $rc: $statuses2 / $hits"

  # ---- --seed-cuda with the llm planner, --seed-from
  log=$tmp/seed.log
  start_server rmsnorm_opencl.json "$log"
  out=$("$ks" run rmsnorm --backend opencl "${common[@]}" -q --budget 1 --out "$tmp/seed" \
    --llm-base-url "http://127.0.0.1:$port/v1" --seed-cuda "$here/tests/cuda/softmax_warp.cu"); rc=$?
  q=$(asked "$log" "init#0")
  check "--seed-cuda with --planner llm: the CUDA kernel's concepts, their OpenCL form and its source in the prompts" \
    "$([[ $rc == 0 && $q == *"a CUDA kernel seeds this search"* && $q == *warp_shuffle_reduction* && $q == *"__shfl_xor_sync"* ]] && echo yes)" "exit $rc: ${q:0:300}"
  mkdir -p "$tmp/cudarun"
  printf '{"task": "rmsnorm", "backend": "cuda", "best": {"file": "%s"}}\n' \
    "$here/tests/fake_llm/kernels/cuda/warp_rows.cu" >"$tmp/cudarun/summary.json"
  out=$("$ks" run rmsnorm --backend opencl "${common[@]}" -q --budget 1 --out "$tmp/seed2" \
    --llm-base-url "http://127.0.0.1:$port/v1" --seed-from "$tmp/cudarun"); rc=$?
  q=$(grep '"init#' "$log" | tail -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['last_user'])")
  check "--seed-from RUN_DIR seeds with that run's best CUDA kernel" \
    "$([[ $rc == 0 && $q == *"warp_rows.cu"* && $q == *vector_loads_128* ]] && echo yes)" "exit $rc: ${q:0:300}"
  stop_server "$server_pid"
  err=$("$ks" run rmsnorm --backend opencl --planner llm --llm-model m --llm-base-url http://127.0.0.1:1/v1 --seed-from "$run" 2>&1); rc=$?
  check "--seed-from a non-CUDA run: exit 2 naming the backend" "$([[ $rc == 2 && $err == *"not cuda"* ]] && echo yes)" "exit $rc: $err"
  err=$("$ks" run rmsnorm --seed-from "$tmp/nothing" 2>&1); rc=$?
  check "--seed-from a folder without summary.json: exit 2" "$([[ $rc == 2 && $err == *summary.json* ]] && echo yes)" "exit $rc: $err"
fi

# ---- cuda
scripted_run cuda rmsnorm_cuda.json cuda 8
if [[ $rc == 3 ]] && grep -q "no CUDA driver/GPU" "$tmp/cuda.stderr"; then
  check "no GPU: run --backend cuda --planner llm exits 3 saying so" yes ""
  echo "skip: cuda llm session needs a GPU: $(grep -m1 'no CUDA driver/GPU' "$tmp/cuda.stderr")"
else
  statuses=$(db "$run/ksearch.db" "select group_concat(status) from (select status from evaluations order by id)")
  check "cuda llm run ends with a correct CUDA kernel" \
    "$([[ $rc == 0 && $(field '"yes" if d["best"] and d["best"]["score"] > 0 else "no"' "$out") == yes ]] && echo yes)" "exit $rc: ${out:0:300} $(tail -3 "$tmp/cuda.stderr")"
  check "judged: a compile error and a wrong kernel among correct ones ($statuses)" \
    "$([[ $statuses == *compile_error* && $statuses == *incorrect* && $statuses == *ok* ]] && echo yes)" "$statuses"
  rej=$(db "$run/ksearch.db" "select group_concat(json, ' ') from events where kind='precheck_rejected'")
  check "rejected before nvcc: host API and <<<>>>, a 2048-thread block, OpenCL in CUDA" \
    "$([[ $rej == *cudaMalloc* && $rej == *'<<<'* && $rej == *'(header)'* && $rej == *get_local_id* ]] && echo yes)" "$rej"
fi

# ---- mlx: the coder writes mx.fast.cuda_kernel bodies; on a CPU-only MLX
# the first body that passes the checks ends the run with exit 3 (MLX
# custom kernels need a GPU), after the wrong answers were refused before
# MLX saw them and their reasons went into the next prompt
scripted_run mlx rmsnorm_mlx.json mlx 4
rej=$(db "$run/ksearch.db" "select group_concat(json, ' ') from events where kind='precheck_rejected'" 2>/dev/null)
if grep -q "ksmlx.py probe\|no MLX\|scripts/setup.sh" "$tmp/mlx.stderr" && [[ $rc == 3 && -z $rej ]]; then
  echo "skip: mlx llm session: no MLX here ($(head -c 200 "$tmp/mlx.stderr"))"
elif [[ $rc == 3 ]]; then
  check "mlx without an MLX GPU: exit 3 once a body passes the checks" \
    "$(grep -q "run only on a GPU" "$tmp/mlx.stderr" && echo yes)" "$(tail -3 "$tmp/mlx.stderr")"
  check "mlx: refused before MLX: host API in a body, a whole __global__ kernel without a body line" \
    "$([[ $rej == *cudaMalloc* && ($rej == *'"__global__"'* || $rej == *'// ksearch: body'*) ]] && echo yes)" "$rej"
  check "mlx: the reasons reach the next prompt" \
    "$(grep -q 'cudaMalloc' "$log" && grep -q '__global__' "$log" && echo yes)" "$(tail -c 300 "$log")"
else
  check "mlx llm run ends with a correct MLX kernel" \
    "$([[ $rc == 0 && $(field '"yes" if d["best"] and d["best"]["score"] > 0 else "no"' "$out") == yes ]] && echo yes)" "exit $rc: ${out:0:300} $(tail -3 "$tmp/mlx.stderr")"
fi

echo "llm_backends: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
