#!/usr/bin/env bash
# Issue benchmark (DESIGN.md: Workers): evaluations per minute of
# `ksearch run --broker` with 1 and with 2 workers of one thread each, same
# task, planner, seed and budget, and the broker round trip of an empty job.
# Goals: 2 workers >= 1.7x one; round trip < 5 ms on loopback.
#
# The random planner's candidates depend only on (seed, iteration), so every
# run here evaluates the same candidates; a warm-up run with both workers
# builds them all (and gives each worker its evaluator) first, so neither
# measured run pays for compiling. Order: warm-up (2 workers), 2 workers,
# then one worker stopped and 1 worker. The machine's load average and CPU
# count are printed with the ratio: other processes on a 2-core machine take
# the second worker's core; the mean number of evaluations in flight (from
# the store's start and finish times) shows whether both workers were kept
# busy, independently of how fast the shared cores ran them.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
rt=${ROUNDTRIP:-$here/build/bench_broker_roundtrip}
task=${TASK:-softmax}
budget=${BUDGET:-16}
seed=${SEED:-5}
command -v redis-server >/dev/null || { echo "workers bench: redis-server not installed (scripts/setup.sh)"; exit 3; }
[[ -x $rt ]] || make -C "$here" build/bench_broker_roundtrip >/dev/null
tmp=$(mktemp -d /tmp/ksearch-bench-workers.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="redis://127.0.0.1:$port"
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-$tmp/cache}
redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp" --appendonly yes --save '' \
  --daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
for _ in $(seq 1 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
"$ks" worker --broker "$url" --threads 1 -q 2>"$tmp/wa.log" &
wa=$!
"$ks" worker --broker "$url" --threads 1 -q 2>"$tmp/wb.log" &
wb=$!
cleanup() {
  kill $wa $wb 2>/dev/null
  wait 2>/dev/null
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 1 600); do
  [[ $(redis-cli -p "$port" --scan --pattern 'ksearch:worker:*' | wc -l) -ge 2 ]] && break
  sleep 0.1
done
run() { # $1 out dir, $2 parallel: prints evaluations per minute
  local t0 t1
  t0=$(date +%s.%N)
  "$ks" run "$task" --broker "$url" --parallel "$2" --planner random --seed "$seed" \
    --budget "$budget" --stagnation 0 --threads 1 --out "$1" -q --json >"$1.json" || return 1
  t1=$(date +%s.%N)
  # evaluations per minute, and the mean number of evaluations in flight
  # (sum of their durations over the span from the first start to the last
  # end): the concurrency the workers reached, whatever the machine's load
  python3 - "$1" "$t0" "$t1" <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[1] + ".json"))
rows = sqlite3.connect(sys.argv[1] + "/ksearch.db").execute(
    "select started, finished from evaluations where finished is not null").fetchall()
span = max(f for _, f in rows) - min(s for s, _ in rows)
busy = sum(f - s for s, f in rows)
print("%.2f %d %.2f" % (60 * d["evaluations"] / (float(sys.argv[3]) - float(sys.argv[2])),
                        d["evaluations"], busy / span))
PY
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run "$tmp/warm" 2 >/dev/null || { echo "warm-up run failed"; exit 1; }
read -r two n2 c2 < <(run "$tmp/two" 2) || { echo "2-worker run failed"; exit 1; }
kill -TERM $wb
wait $wb 2>/dev/null
for _ in $(seq 1 100); do
  [[ $(redis-cli -p "$port" --scan --pattern 'ksearch:worker:*' | wc -l) -le 1 ]] && break
  sleep 0.1
done
read -r one n1 c1 < <(run "$tmp/one" 1) || { echo "1-worker run failed"; exit 1; }
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
trip=$("$rt" "$url" 200) || { echo "round trip failed"; exit 1; }
python3 - "$one" "$two" "$n1" "$n2" "$trip" "$load_before" "$load_after" "$(nproc)" "$task" "$budget" "$c1" "$c2" <<'PY'
import json, sys
one, two = float(sys.argv[1]), float(sys.argv[2])
c1, c2 = float(sys.argv[11]), float(sys.argv[12])
trip = json.loads(sys.argv[5])
print("task %s, budget %s, random planner, workers of 1 thread; %s CPUs, load average %s before, %s after"
      % (sys.argv[9], sys.argv[10], sys.argv[8], sys.argv[6], sys.argv[7]))
print("1 worker : %6.2f evaluations/min (%s evaluations), %.2f in flight on average" % (one, sys.argv[3], c1))
print("2 workers: %6.2f evaluations/min (%s evaluations), %.2f in flight on average" % (two, sys.argv[4], c2))
print("ratio 2/1: %.2fx (goal >= 1.7x)" % (two / one))
print("broker round trip of an empty job: median %.2f ms, p90 %.2f ms over %d jobs (goal < 5 ms)"
      % (trip["round_trip_ms_median"], trip["round_trip_ms_p90"], trip["jobs"]))
print(json.dumps({"evals_per_min_1": one, "evals_per_min_2": two, "ratio": two / one,
                  "in_flight_1": c1, "in_flight_2": c2, "round_trip": trip, "load_before": sys.argv[6], "load_after": sys.argv[7],
                  "cpus": int(sys.argv[8])}))
PY
