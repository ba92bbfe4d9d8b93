#!/usr/bin/env bash
# Runs each libFuzzer target named on the command line (built by `make
# fuzz-build` into $FUZZ_DIR) for $FUZZ_SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/<name>/; new inputs stay in $FUZZ_DIR/corpus, out of the
# tree). Prints one line per target: executions, corpus growth, and what it
# found; exits 1 if any target found a crash, a leak, a timeout or UB (the
# input is in $FUZZ_DIR/findings/ and should go into the corpus with a unit
# test, see DESIGN.md: Tests and CI).
set -u
cd "$(dirname "$0")/../.."
dir=${FUZZ_DIR:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
failed=0 passed=0
mkdir -p "$dir/findings" "$dir/logs"
for name in "$@"; do
  bin="$dir/fuzz_$name"
  seeds="tests/fuzz/corpus/$name"
  work="$dir/corpus/$name"
  [[ -x $bin ]] || { echo "FAIL fuzz $name: $bin is missing (make fuzz-build)"; failed=$((failed + 1)); continue; }
  [[ -d $seeds ]] || { echo "FAIL fuzz $name: no seed corpus $seeds"; failed=$((failed + 1)); continue; }
  mkdir -p "$work"
  log="$dir/logs/$name.log"
  # -timeout: an input slower than this is a finding (quadratic paths);
  # -rss_limit_mb: a memory blow-up too. UBSan stops on the first report.
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/$name-" \
    "$work" "$seeds" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  newc=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  if [[ $rc == 0 ]]; then
    echo "ok   fuzz $name: ${execs:-?} executions in ${secs} s, ${newc:-0} new inputs, no finding"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    what=$(grep -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY" "$log")
    echo "FAIL fuzz $name: exit $rc after ${execs:-?} executions: ${what:-see $log}"
    ls "$dir/findings/$name-"* 2>/dev/null | sed 's/^/     input: /'
    tail -30 "$log" | sed 's/^/     | /'
  fi
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed == 0 ]]
