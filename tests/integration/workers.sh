#!/usr/bin/env bash
# `ksearch worker` and `ksearch run --broker` on loopback (DESIGN.md:
# Workers): a redis-server of its own (127.0.0.1, a free port, append-only
# log in a temp folder, a password), three workers with --threads 1; one
# worker killed with SIGKILL in the middle of an evaluation, the broker
# restarted during the run, a template whose candidate crashes the executor,
# a wrong password, a job whose worker dies every time (--max-tries 1), and
# kill -9 of the run itself + --resume. Every candidate is recorded once,
# none is lost, the runs finish.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
if ! command -v redis-server >/dev/null; then
  echo "workers: skipped: redis-server is not installed (scripts/setup.sh installs it)"
  exit 0
fi
tmp=$(mktemp -d /tmp/ksearch-workers-test.XXXXXX)
pass=0 fail=0
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pw=s3cret-pw
url="redis://:$pw@127.0.0.1:$port"
export KSEARCH_ROOFLINE_MIB=${KSEARCH_ROOFLINE_MIB:-16}
mkdir -p "$tmp/redis"
start_redis() {
  redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis" --appendonly yes \
    --appendfsync always --save '' --requirepass "$pw" --daemonize yes \
    --pidfile "$tmp/redis/redis.pid" --logfile "$tmp/redis/redis.log"
  for _ in $(seq 1 100); do
    redis-cli -p "$port" -a "$pw" --no-auth-warning ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  return 1
}
stop_redis() {
  redis-cli -p "$port" -a "$pw" --no-auth-warning shutdown >/dev/null 2>&1
  for _ in $(seq 1 100); do
    [[ -e $tmp/redis/redis.pid ]] && kill -0 "$(cat "$tmp/redis/redis.pid" 2>/dev/null)" 2>/dev/null || return 0
    sleep 0.1
  done
}
workers=()
start_worker() { # $1: log name; extra options after
  local log=$tmp/$1.log
  shift
  "$ks" worker --broker "$url" --threads 1 --claim-after 2 "$@" >"$log" 2>&1 &
  workers+=($!)
}
cleanup() {
  cleanup_servers
  for p in "${workers[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  stop_redis
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$here/tests/integration/fake_llm.sh"
start_redis || { echo "FAIL redis-server did not start: $(cat "$tmp/redis/redis.log")"; exit 1; }

# a task whose templates include one that crashes the executor (SIGSEGV)
task=$tmp/task
mkdir -p "$task/templates/c"
cp "$here/tasks/softmax/task.json" "$here/tasks/softmax/reference.c" "$task/"
cp "$here/tasks/softmax/templates/c/online_two_pass.c" "$task/templates/c/"
{
  echo "// ksearch: backend=c entry=softmax"
  echo "// ksearch: family=crash"
  echo "// ksearch: param DUMMY in 1,2"
  sed 1,2d "$here/tests/adversarial/segfault.c"
} >"$task/templates/c/crash.c"

# wrong password: a clear error, exit 2, the password never echoed
err=$("$ks" worker --broker "redis://:wrong-pw@127.0.0.1:$port" --threads 1 2>&1); rc=$?
check "worker with a wrong password: exit 2 saying so" "$([[ $rc == 2 && $err == *password* && $err != *wrong-pw* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run "$task" --broker "redis://127.0.0.1:$port" --out "$tmp/nopw" 2>&1); rc=$?
check "run without the password the broker needs: exit 2" "$([[ $rc == 2 && $err == *password* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run "$task" --parallel 2 --out "$tmp/nobroker" 2>&1); rc=$?
check "--parallel without --broker: exit 2" "$([[ $rc == 2 && $err == *--broker* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" worker --broker "rediss://127.0.0.1:$port" --threads 1 2>&1); rc=$?
check "rediss:// to a plain redis:// port: exit 3 naming TLS" "$([[ $rc == 3 && $err == *TLS* ]] && echo yes)" "exit $rc: $err"

for i in 1 2 3; do start_worker "w$i"; done

# run A: 3 workers, one killed mid-evaluation, the broker restarted
runA=$tmp/runA
"$ks" run "$task" --broker "$url" --parallel 3 --budget 9 --min-time 0.2 --out "$runA" --json -q >"$tmp/runA.json" 2>"$tmp/runA.err" &
run=$!
# The victim is a worker in the middle of a job that takes a while: not the
# crash family (its executor dies within milliseconds, so the worker would
# have answered before the kill) and not one it has already answered.
victim="" vjob=""
for _ in $(seq 1 600); do
  for i in 1 2 3; do
    for j in $(grep -o 'job [^ ]*: evaluating' "$tmp/w$i.log" 2>/dev/null | cut -d' ' -f2 | tr -d :); do
      grep -q "job $j: answered" "$tmp/w$i.log" && continue
      fam=$(db "$runA/ksearch.db" "select c.source like '%family=crash%' from evaluations e join candidates c on c.id = e.candidate_id where e.job_id = '$j'")
      [[ $fam == 0 ]] || continue
      kill -9 "${workers[$((i - 1))]}"
      victim=$i vjob=$j
      break 3
    done
  done
  sleep 0.05
done
vname=$(grep -o 'worker [^ ]*:' "$tmp/w$victim.log" | head -1 | cut -d' ' -f2 | tr -d :)
check "a worker is killed with SIGKILL while evaluating job $vjob" "$([[ -n $victim && -n $vname ]] && ! grep -q "job $vjob: answered" "$tmp/w$victim.log" && echo yes)" "no worker was caught mid-job: $(cat "$tmp"/w[123].log | tail -20)"
for _ in $(seq 1 600); do
  n=$(db "$runA/ksearch.db" "select count(*) from evaluations where status != 'running'")
  [[ ${n:-0} -ge 3 ]] && break
  sleep 0.1
done
# a result that names a job in flight but cannot be read ends that job
bjob=$(db "$runA/ksearch.db" "select job_id from evaluations where status = 'running' and job_id != '$vjob' order by id desc limit 1")
if [[ -n $bjob && $bjob != None ]]; then
  redis-cli -p "$port" -a "$pw" --no-auth-warning xadd "ksearch:results:${bjob%-*}" '*' j "{\"job_id\":\"$bjob\",\"result\":7}" >/dev/null
fi
stop_redis
sleep 1
start_redis
check "broker restarted during the run (after ${n:-0} results)" "$([[ ${n:-0} -ge 3 ]] && echo yes)" "n=$n"
for _ in $(seq 1 1800); do kill -0 $run 2>/dev/null || break; sleep 0.1; done
kill -0 $run 2>/dev/null && kill $run
wait $run; rc=$?
out=$(cat "$tmp/runA.json")
check "run A finishes its budget of 9" "$([[ $rc == 0 && $(field 'd["evaluations"]' "$out") == 9 && $(field 'd["stopped_because"]' "$out") == budget ]] && echo yes)" "exit $rc: $out $(tail -5 "$tmp/runA.err")"
A=$runA/ksearch.db
check "every candidate recorded once, none left running" "$([[ $(db "$A" "select count(*) - count(distinct candidate_id) from evaluations") == 0 && $(db "$A" "select count(*) from evaluations where status in ('running','interrupted')") == 0 ]] && echo yes)" "$(db "$A" "select group_concat(candidate_id||':'||status) from evaluations")"
check "every evaluation has its own job id" "$([[ $(db "$A" "select count(distinct job_id) from evaluations") == 9 ]] && echo yes)" "$(db "$A" "select group_concat(job_id) from evaluations")"
who=$(db "$A" "select json_extract(result_json, '\$.machine.worker') from evaluations where job_id = '$vjob'")
check "the killed worker's job was claimed and measured by another worker ($who)" "$([[ -n $who && $who != None && $who != "$vname" ]] && echo yes)" "job $vjob by '$who' (killed: $vname)"
st=$(db "$A" "select status || ': ' || json_extract(result_json, '\$.error') from evaluations where job_id = '$bjob'")
check "an unreadable result for job $bjob ends it as crash, recorded once" "$([[ $st == crash:*"could not be read"* ]] && echo yes)" "$st"
crash=$(db "$A" "select count(*) from evaluations e join candidates c on c.id = e.candidate_id where e.status = 'crash' and c.source like '%family=crash%'")
check "the candidate that crashes its executor is recorded as crash" "$([[ ${crash:-0} -ge 1 ]] && echo yes)" "crash=$crash"
alive=0
for i in 1 2 3; do [[ $i != "$victim" ]] && kill -0 "${workers[$((i - 1))]}" 2>/dev/null && alive=$((alive + 1)); done
check "the other workers survived the crash and the broker restart" "$([[ $alive == 2 ]] && echo yes)" "alive=$alive"
m=$(db "$A" "select count(*) from evaluations where json_extract(result_json, '\$.machine.target') is not null and json_extract(result_json, '\$.machine.host') is not null and job_id != '$bjob'")
check "each result keeps the machine it was measured on" "$([[ $m == 8 ]] && echo yes)" "m=$m"

# run C: kill -9 of the run with jobs in flight, then --resume
start_worker w4
runC=$tmp/runC
"$ks" run "$task" --broker "$url" --parallel 2 --budget 5 --min-time 0.2 --out "$runC" -q &
run=$!
for _ in $(seq 1 600); do
  n=$(db "$runC/ksearch.db" "select count(*) from evaluations where status != 'running'")
  r=$(db "$runC/ksearch.db" "select count(*) from evaluations where status = 'running'")
  [[ ${n:-0} -ge 1 && ${r:-0} -ge 1 ]] && break
  sleep 0.1
done
kill -9 $run; wait $run 2>/dev/null
C=$runC/ksearch.db
flight=$(db "$C" "select group_concat(job_id) from evaluations where status = 'running'")
check "run killed with SIGKILL while jobs are in flight ($flight)" "$([[ -n $flight && $flight != None ]] && echo yes)" "n=$n r=$r"
out=$("$ks" run "$task" --resume "$runC" --broker "$url" --parallel 2 --budget 5 --min-time 0.2 --json -q 2>"$tmp/runC.err"); rc=$?
check "resume finishes the budget of 5" "$([[ $rc == 0 && $(field 'd["evaluations"]' "$out") == 5 ]] && echo yes)" "exit $rc: $out $(tail -3 "$tmp/runC.err")"
left=0
for j in ${flight//,/ }; do
  [[ $(db "$C" "select status from evaluations where job_id = '$j'") == running ]] && left=$((left + 1))
done
check "the jobs in flight were sent again and recorded under their ids" "$([[ $left == 0 ]] && echo yes)" "left=$left"
check "resumed run: every candidate once, nothing running" "$([[ $(db "$C" "select count(*) - count(distinct candidate_id) from evaluations") == 0 && $(db "$C" "select count(*) from evaluations where status = 'running'") == 0 ]] && echo yes)" "$(db "$C" "select group_concat(candidate_id||':'||status) from evaluations")"

# --parallel 1: the rounds of a local run (the random planner's candidates
# depend on seed and iteration only, so the two sequences must be equal)
"$ks" run "$task" --planner random --seed 3 --budget 4 --stagnation 0 --min-time 0.02 --out "$tmp/localR" -q; rc1=$?
"$ks" run "$task" --broker "$url" --parallel 1 --planner random --seed 3 --budget 4 --stagnation 0 --min-time 0.02 --out "$tmp/brokerR" -q; rc2=$?
seq_of() { db "$1/ksearch.db" "select group_concat(x, ' ') from (select c.hash || c.params_json as x from evaluations e join candidates c on c.id = e.candidate_id order by e.id)"; }
l=$(seq_of "$tmp/localR") r=$(seq_of "$tmp/brokerR")
check "--parallel 1 evaluates the candidates of a local run, in its order" "$([[ $rc1 == 0 && $rc2 == 0 && -n $l && $l == "$r" ]] && echo yes)" "local=$l broker=$r"

# run B: --max-tries 1 and the worker evaluating the only job killed: the job
# ends as crash instead of circling
for p in "${workers[@]}"; do kill "$p" 2>/dev/null; done
wait "${workers[@]}" 2>/dev/null
workers=()
start_worker w5
runB=$tmp/runB
"$ks" run "$task" --broker "$url" --parallel 1 --budget 1 --max-tries 1 --min-time 0.5 --out "$runB" --json -q >"$tmp/runB.json" 2>&1 &
run=$!
for _ in $(seq 1 600); do grep -q 'evaluating' "$tmp/w5.log" && break; sleep 0.1; done
kill -9 "${workers[0]}"
start_worker w6
for _ in $(seq 1 600); do kill -0 $run 2>/dev/null || break; sleep 0.1; done
kill -0 $run 2>/dev/null && kill $run
wait $run; rc=$?
B=$runB/ksearch.db
st=$(db "$B" "select status || ': ' || json_extract(result_json, '\$.error') from evaluations")
check "a job whose worker dies every time ends as crash after --max-tries" "$([[ $rc == 0 && $st == crash:* && $st == *"given up"* ]] && echo yes)" "exit $rc: $st"

# the LLM coder through the broker: with --parallel 2 and
# --llm-max-inflight 2 the code of two open plans is asked for at once (two
# code requests in flight, each answered after 1 s); with
# --llm-max-inflight 1 the same requests queue
start_worker w7
python3 - "$here/tests/fake_llm/scripts/softmax_short.json" "$tmp/slow_code.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# two different kernels, so the two plans make two evaluations
d["kinds"]["code"] = [{"code_file": "tests/fake_llm/kernels/single.c", "sleep": 1},
                      {"code_file": "tests/kernels/softmax_fast.c", "sleep": 1}]
d["defaults"] = {"code": {"code_file": "tests/kernels/softmax_fast.c"}}
json.dump(d, open(sys.argv[2], "w"))
PY
overlap() { # log: the smallest gap (s) between the starts of two code requests
  python3 - "$1" <<'PY'
import json, sys
t = sorted(json.loads(l)["t"] for l in open(sys.argv[1]) if json.loads(l)["kind"] == "code")
print("%.2f" % min((b - a for a, b in zip(t, t[1:])), default=99))
PY
}
for inflight in 2 1; do
  start_server "$tmp/slow_code.json" "$tmp/llm$inflight.log"
  "$ks" run softmax --broker "$url" --parallel 2 --planner llm --llm-model fake \
    --llm-base-url "http://127.0.0.1:$port/v1" --llm-max-inflight "$inflight" --budget 2 \
    --min-time 0.02 --seeds 1 --out "$tmp/llmrun$inflight" --json -q >"$tmp/llmrun$inflight.json" 2>"$tmp/llmrun$inflight.err"
  rcl[$inflight]=$?
  stop_server "$server_pid"
  gap[$inflight]=$(overlap "$tmp/llm$inflight.log")
done
check "--planner llm --parallel 2: two code requests in flight at once (${gap[2]} s apart)" \
  "$([[ ${rcl[2]} == 0 ]] && python3 -c "import sys; sys.exit(0 if ${gap[2]} < 0.5 else 1)" && echo yes)" "exit ${rcl[2]}: $(tail -3 "$tmp/llmrun2.err")"
check "--llm-max-inflight 1 queues them (${gap[1]} s apart)" \
  "$([[ ${rcl[1]} == 0 ]] && python3 -c "import sys; sys.exit(0 if ${gap[1]} >= 0.95 else 1)" && echo yes)" "exit ${rcl[1]}: $(tail -3 "$tmp/llmrun1.err")"

echo "workers: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
