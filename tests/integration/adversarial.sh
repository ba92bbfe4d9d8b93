#!/usr/bin/env bash
# Every kernel in tests/adversarial/ must be rejected with the status and the
# reason its header announces:
#   // adversarial: task=softmax expect=<status> reason=<substring>
# and ksearch itself must exit 1 (candidate failed), never crash.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
pass=0 fail=0
for f in "$here"/tests/adversarial/*.c; do
  hdr=$(grep -m1 '^// adversarial:' "$f")
  task=$(sed -n 's/.*task=\([^ ]*\).*/\1/p' <<<"$hdr")
  expect=$(sed -n 's/.*expect=\([^ ]*\).*/\1/p' <<<"$hdr")
  reason=$(sed -n 's/.*reason=\(.*\)$/\1/p' <<<"$hdr")
  # timing=1: the trick is about the timed repetitions; max_score=N: the
  # trick must not pay (status ok, score no higher than an honest kernel's)
  max_score=$(sed -n 's/.*max_score=\([^ ]*\).*/\1/p' <<<"$hdr")
  timing=(--no-timing --timeout 8)
  [[ $hdr == *timing=1* ]] && timing=(--min-reps 10 --timeout 120)
  out=$("$ks" eval "$task" "$f" --json "${timing[@]}" --no-spec-check -q 2>/tmp/ks-adv-err.$$)
  rc=$?
  status=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <<<"$out" 2>/dev/null)
  error=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["error"].lower())' <<<"$out" 2>/dev/null)
  score=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["score"])' <<<"$out" 2>/dev/null)
  name=$(basename "$f")
  want_rc=1
  [[ $expect == ok ]] && want_rc=0
  paid=0
  if [[ -n $max_score ]] && ! python3 -c "import sys; sys.exit(0 if float('$score' or 0) <= $max_score else 1)"; then
    paid=1
    error="score $score above the honest bound $max_score: the trick paid"
  fi
  if [[ $rc -eq $want_rc && $status == "$expect" && $error == *"$reason"* && $paid -eq 0 ]]; then
    echo "ok   $name: $status: $error${max_score:+ (score $score <= $max_score)}"
    pass=$((pass + 1))
  else
    echo "FAIL $name: exit $rc, status '$status' (want '$expect'), reason '$error' (want '*$reason*')"
    cat /tmp/ks-adv-err.$$
    fail=$((fail + 1))
  fi
done
# The OpenCL members (tests/adversarial/opencl/README.md), on the OpenCL
# backend; skipped with what to install where no OpenCL platform exists.
if devs=$("$ks" roofline --backend opencl --list 2>/tmp/ks-adv-err.$$); then
  for f in "$here"/tests/adversarial/opencl/*.cl; do
    name=opencl/$(basename "$f")
    hdr=$(grep -m1 '^// adversarial:' "$f")
    if [[ $name == */syscall_asm.cl && ($(uname -m) != x86_64 || $devs != *"Portable Computing Language"*) ]]; then
      echo "skip $name: needs PoCL on x86-64 (inline assembly)"
      continue
    fi
    task=$(sed -n 's/.*task=\([^ ]*\).*/\1/p' <<<"$hdr")
    expect=$(sed -n 's/.*expect=\([^ ]*\).*/\1/p' <<<"$hdr")
    reason=$(sed -n 's/.*reason=\(.*\)$/\1/p' <<<"$hdr")
    out=$("$ks" eval "$task" "$f" --backend opencl --json --no-timing --timeout 8 -q 2>/tmp/ks-adv-err.$$)
    rc=$?
    status=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <<<"$out" 2>/dev/null)
    error=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["error"].lower())' <<<"$out" 2>/dev/null)
    if [[ $rc -eq 1 && $status == "$expect" && $error == *"$reason"* ]]; then
      echo "ok   $name: $status: $error"
      pass=$((pass + 1))
    else
      echo "FAIL $name: exit $rc, status '$status' (want '$expect'), reason '$error' (want '*$reason*')"
      cat /tmp/ks-adv-err.$$
      fail=$((fail + 1))
    fi
  done
else
  echo "skip opencl/*.cl: $(cat /tmp/ks-adv-err.$$)"
fi
# The same tricks meet the spec check first when it is on (the default):
# process, thread and socket primitives never reach the compiler.
for f in fork system socket background_thread; do
  out=$("$ks" eval softmax "$here/tests/adversarial/$f.c" --json --no-timing -q 2>/dev/null)
  rc=$?
  error=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["error"])' <<<"$out" 2>/dev/null)
  if [[ $rc -eq 1 && $error == "rejected "*"spec check"* ]]; then
    echo "ok   spec check rejects $f.c before compiling"
    pass=$((pass + 1))
  else
    echo "FAIL spec check on $f.c: exit $rc, $error"
    fail=$((fail + 1))
  fi
done
rm -f /tmp/ks-adv-err.$$
echo "adversarial: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
