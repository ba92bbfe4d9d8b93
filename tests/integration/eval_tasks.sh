#!/usr/bin/env bash
# `ksearch eval` on every built-in task: the reference as the candidate is
# correct with a score near 1; the hand-written kernel in tests/kernels/ is
# correct and faster (score above 1). Plus the command line's error paths.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
pass=0 fail=0
check() { # name, condition-result
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }

# the row-reduction and scan tasks; the issue-16 tasks (attention, routing,
# GEMM: other axes, no hand-written kernel) have their own suite,
# kernel_tasks.sh
legacy="layernorm rmsnorm selective_scan softmax"
for t in $legacy; do
  dir=$here/tasks/$t/
  out=$("$ks" eval "$t" "$dir/reference.c" --json -q --min-time 0.05); rc=$?
  s=$(field 'd["score"]' "$out")
  ok=$(field '"yes" if d["status"]=="ok" and d["correct"] and all(w["correct"] for w in d["workloads"]) and 0.6 < d["score"] < 1.67 else "no"' "$out")
  check "$t: reference as candidate is correct, score $s near 1" "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $out"
  # the bf16 tasks are GPU tasks: CUDA templates only (tests/integration/cuda.sh)
  [[ -e $here/tests/kernels/${t}_fast.c ]] || continue
  out=$("$ks" eval "$t" "$here/tests/kernels/${t}_fast.c" --json -q --min-time 0.05); rc=$?
  s=$(field 'd["score"]' "$out")
  ok=$(field '"yes" if d["status"]=="ok" and d["score"] > 1.0 and all(w["roofline_fraction"] > 0 for w in d["workloads"]) else "no"' "$out")
  check "$t: hand-written kernel is correct and faster, score $s" "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $out"
done

# every built-in template, at its defaults and at each value of VEC, on
# awkward shapes the task's own workloads do not have (single elements, odd
# tails, sequences shorter than a vector): as test-backend-ops checks every
# backend against the reference over many shapes
odd=$(mktemp -d)
for t in $legacy; do
  dir=$here/tasks/$t
  mkdir -p "$odd/$t"
  cp "$dir/reference.c" "$odd/$t/"
  python3 - "$dir/task.json" "$odd/$t/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
if "seqlen" in t["axes"]:
    shapes = [(1, 1, 1), (1, 3, 3), (2, 9, 7), (1, 17, 9), (2, 5, 33), (1, 1, 2500)]
    t["workloads"] = [{"batch": b, "dim": d, "seqlen": L} for b, d, L in shapes]
else:
    t["workloads"] = [{"rows": r, "cols": c} for r, c in [(1, 1), (3, 7), (5, 17), (2, 33), (17, 100), (1, 1031)]]
json.dump(t, open(sys.argv[2], "w"))
PY
  for tpl in "$dir"/templates/c/*.c; do
    name=$(basename "$tpl" .c)
    extra=(); grep -q "param TSPLIT" "$tpl" && extra=(TSPLIT=1) # the time split
    # AVX-512's exp (its tails pad with -inf: exp must give 0 there)
    grep -q "param EXP" "$tpl" && extra+=(EXP=1,VEC=16 EXP=1,VEC=8)
    for vec in default 4 16 "${extra[@]}"; do
      p=(); [[ $vec == TSPLIT=1 ]] && p=(--param "$vec")
      [[ $vec == EXP=1,* ]] && p=(--param EXP=1 --param "${vec#*,}")
      [[ $vec == 4 || $vec == 16 ]] && p=(--param "VEC=$vec")
      out=$("$ks" eval "$odd/$t" "$tpl" "${p[@]}" --no-timing --json -q); rc=$?
      check "$t/$name (${p[*]:-defaults}) is correct on odd shapes" "$([[ $rc == 0 && $(field 'd["status"]' "$out") == ok ]] && echo yes)" "exit $rc: $(field 'd["error"]' "$out")"
    done
  done
done
rm -rf "$odd"

# STORE=1 (streaming stores) takes its streamed path only on outputs of at
# least 8 MiB with aligned rows: shapes that stream (leftover rows, one row
# block, an unaligned row length that must fall back) at VEC 4, 8 and 16
big=$(mktemp -d)
for t in rmsnorm layernorm; do
  dir=$here/tasks/$t
  mkdir -p "$big/$t"
  cp "$dir/reference.c" "$big/$t/"
  python3 - "$dir/task.json" "$big/$t/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["workloads"] = [{"rows": r, "cols": c} for r, c in [(1027, 2048), (3, 1048584), (1001, 2056), (999, 2101)]]
json.dump(t, open(sys.argv[2], "w"))
PY
  for tpl in "$dir"/templates/c/*.c; do
    grep -q "param STORE" "$tpl" || continue
    for vec in 4 8 16; do # SSE, AVX and AVX-512 streams where the ISA has them
      out=$("$ks" eval "$big/$t" "$tpl" --param STORE=1 --param "VEC=$vec" --no-timing --seeds 1 --json -q); rc=$?
      check "$t/$(basename "$tpl" .c) STORE=1 VEC=$vec is correct on streamed shapes" "$([[ $rc == 0 && $(field 'd["status"]' "$out") == ok ]] && echo yes)" "exit $rc: $(field 'd["error"]' "$out")"
    done
  done
done
rm -rf "$big"

# error paths: exit codes and messages
tmp=$(mktemp -d)
printf '// ksearch: backend=c entry=softmax\nvoid softmax(const float *x, float *y, long rows) { this is not C }\n' >"$tmp/bad.c"
out=$("$ks" eval softmax "$tmp/bad.c" --json -q); rc=$?
check "compile error is status compile_error, exit 1" "$([[ $rc == 1 && $(field 'd["status"]' "$out") == compile_error ]] && echo yes)" "exit $rc: $out"
err=$("$ks" eval no_such_task "$tmp/bad.c" 2>&1 >/dev/null); rc=$?
check "unknown task: exit 2 naming it" "$([[ $rc == 2 && $err == *no_such_task* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" eval softmax "$tmp/missing.c" 2>&1 >/dev/null); rc=$?
check "missing kernel file: exit 2 naming it" "$([[ $rc == 2 && $err == *missing.c* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --backend cobol 2>&1 >/dev/null); rc=$?
check "unknown backend: exit 2" "$([[ $rc == 2 && $err == *cobol* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --param 'A B=1' 2>&1 >/dev/null); rc=$?
check "bad --param: exit 2" "$([[ $rc == 2 ]] && echo yes)" "exit $rc: $err"
err=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --frobnicate 2>&1 >/dev/null); rc=$?
check "unknown option: exit 2" "$([[ $rc == 2 ]] && echo yes)" "exit $rc: $err"
out=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --json -q --no-timing 2>/dev/null); rc=$?
check "--json prints exactly one JSON object" "$(python3 -c 'import json,sys; json.loads(sys.stdin.read()); print("yes")' <<<"$out" 2>/dev/null)" "$out"
err=$("$ks" report /tmp 2>&1); rc=$?
check "report on a folder that is no run: exit 2 naming it" "$([[ $rc == 2 && $err == *"/tmp"* && $err == *"ksearch.db"* ]] && echo yes)" "exit $rc: $err"
out=$("$ks" tasks --json); rc=$?
check "tasks --json lists the twelve built-ins" "$(field '"yes" if sorted(t["name"] for t in d["tasks"]) == ["attention_prefill","decode_paged","gemm_bf16","layernorm","layernorm_bf16","mamba_mlx","moe_routing","rmsnorm","rmsnorm_bf16","selective_scan","softmax","softmax_bf16"] else "no"' "$out")" "$out"
# issue 13: extra arguments, header values that would reach the compiler
out=$("$ks" tasks junk 2>&1); rc=$?
check "tasks with an extra argument: exit 2 naming it" "$([[ $rc == 2 && $out == *junk* && $out != *softmax* ]] && echo yes)" "exit $rc: $out"
printf '// ksearch: backend=c entry=softmax\n// ksearch: param P in $(id)\n' >"$tmp/inj.c"
cat "$here/tasks/softmax/reference.c" >>"$tmp/inj.c"
out=$("$ks" eval softmax "$tmp/inj.c" --no-timing 2>&1); rc=$?
check "header param value \$(id): exit 2 before any build" "$([[ $rc == 2 && $out == *inj.c:2* && $out == *'short tokens'* ]] && echo yes)" "exit $rc: $out"
printf '// ksearch: backend=c entry=softmax\n' >"$tmp/nul.c"
printf 'void softmax(void) {}\n\0junk\n' >>"$tmp/nul.c"
out=$("$ks" eval softmax "$tmp/nul.c" --no-timing 2>&1); rc=$?
check "NUL byte in a candidate (line 3): exit 2 naming the line" "$([[ $rc == 2 && $out == *nul.c:3* && $out == *NUL* ]] && echo yes)" "exit $rc: $out"
mkdir -p "$tmp/stdin_ref" && sed 's#"reference": *"reference.c"#"reference": "/dev/stdin"#' "$here/tasks/softmax/task.json" >"$tmp/stdin_ref/task.json"
out=$("$ks" eval "$tmp/stdin_ref" "$here/tasks/softmax/reference.c" --no-timing </dev/null 2>&1); rc=$?
check "reference /dev/stdin: exit 2, not a regular file" "$([[ $rc == 2 && $out == *"not a regular file"* ]] && echo yes)" "exit $rc: $out"
# --workloads: indices and AXIS=V+AXIS=V select, the rest is never run;
# run_s and its phases come with the JSON
out=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --workloads 1,rows=7+cols=3 --json -q --seeds 1 --min-time 0.01); rc=$?
check "--workloads 1,rows=7+cols=3: those two workloads, phases summed within run_s" "$(field '"yes" if [w["axes"] for w in d["workloads"]] == [{"rows":333,"cols":1000},{"rows":7,"cols":3}] and set(d["phases_s"]) == {"start","inputs","calls","compare","beside"} and 0 < sum(d["phases_s"].values()) <= d["run_s"] + 1e-3 else "no"' "$out")" "exit $rc: $out"
for bad in "99:workloads 0..7" "nope=1:no axis nope" "rows=5:matches no workload" "rows=x:must be an integer"; do
  out=$("$ks" eval softmax "$here/tasks/softmax/reference.c" --workloads "${bad%%:*}" -q 2>&1); rc=$?
  check "--workloads ${bad%%:*}: exit 2 saying ${bad#*:}" "$([[ $rc == 2 && $out == *"${bad#*:}"* ]] && echo yes)" "exit $rc: $out"
done
out=$("$ks" run softmax --workloads 0 --broker redis://127.0.0.1:1 --budget 1 -q 2>&1); rc=$?
check "run --workloads with --broker: exit 3 saying so" "$([[ $rc == 3 && $out == *"not built yet"* ]] && echo yes)" "exit $rc: $out"
rm -rf "$tmp"
echo "eval tasks: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
