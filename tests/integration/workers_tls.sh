#!/usr/bin/env bash
# rediss:// (DESIGN.md: Workers, issue 18): a redis-server of its own with
# TLS only (127.0.0.1, a free --tls-port, a CA, server and client
# certificates made here with openssl, client certificates required, a
# password); a worker reached by host name (certificate name check + SNI)
# and a run reached by IP address (IP check) finish a budget through it,
# across a broker restart; an untrusted certificate, a missing client
# certificate, half a client certificate and a plain redis:// client on the
# TLS port are refused with exit codes and messages that say what to do.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
for tool in redis-server redis-cli openssl; do
  if ! command -v $tool >/dev/null; then
    echo "workers_tls: skipped: $tool is not installed (scripts/setup.sh installs it)"
    exit 0
  fi
done
tmp=$(mktemp -d /tmp/ksearch-tls-test.XXXXXX)
pass=0 fail=0
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pw=tls-s3cret
export KSEARCH_ROOFLINE_MIB=${KSEARCH_ROOFLINE_MIB:-16}

# certificates: a CA, the server's (names localhost and 127.0.0.1), a client's
c=$tmp/certs
mkdir -p "$c" "$tmp/redis"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
{
  openssl req -x509 "${ec[@]}" -keyout "$c/ca.key" -out "$c/ca.crt" -days 2 -subj /CN=ksearch-test-ca &&
    openssl req -x509 "${ec[@]}" -keyout "$c/other.key" -out "$c/other.crt" -days 2 -subj /CN=other-ca &&
    for who in server client; do
      openssl req "${ec[@]}" -keyout "$c/$who.key" -out "$c/$who.csr" -subj "/CN=ksearch-test-$who" &&
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$c/$who.ext" &&
        openssl x509 -req -in "$c/$who.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial \
          -out "$c/$who.crt" -days 2 -extfile "$c/$who.ext" || exit 1
    done
} >"$tmp/openssl.log" 2>&1 || { echo "FAIL openssl could not make the test certificates: $(tail -3 "$tmp/openssl.log")"; exit 1; }

cli() { redis-cli --tls --cacert "$c/ca.crt" --cert "$c/client.crt" --key "$c/client.key" -h 127.0.0.1 -p "$port" -a "$pw" --no-auth-warning "$@"; }
start_redis() {
  redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 --tls-cert-file "$c/server.crt" \
    --tls-key-file "$c/server.key" --tls-ca-cert-file "$c/ca.crt" --tls-auth-clients yes \
    --dir "$tmp/redis" --appendonly yes --appendfsync always --save '' --requirepass "$pw" \
    --daemonize yes --pidfile "$tmp/redis/redis.pid" --logfile "$tmp/redis/redis.log"
  for _ in $(seq 1 100); do
    cli ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  return 1
}
stop_redis() {
  cli shutdown >/dev/null 2>&1
  for _ in $(seq 1 100); do
    [[ -e $tmp/redis/redis.pid ]] && kill -0 "$(cat "$tmp/redis/redis.pid" 2>/dev/null)" 2>/dev/null || return 0
    sleep 0.1
  done
}
workers=()
cleanup() {
  for p in "${workers[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  stop_redis
  [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT
start_redis || { echo "FAIL redis-server did not start with TLS: $(tail -5 "$tmp/redis/redis.log")"; exit 1; }

ip_url="rediss://:$pw@127.0.0.1:$port"
name_url="rediss://:$pw@localhost:$port"
export KSEARCH_BROKER_CACERT=$c/ca.crt KSEARCH_BROKER_CERT=$c/client.crt KSEARCH_BROKER_KEY=$c/client.key

# refusals
err=$(KSEARCH_BROKER_CACERT=$c/other.crt "$ks" worker --broker "$ip_url" --threads 1 --max-jobs 1 2>&1); rc=$?
check "a broker certificate no given CA signed: exit 3 naming KSEARCH_BROKER_CACERT" "$([[ $rc == 3 && $err == *certificate* && $err == *KSEARCH_BROKER_CACERT* ]] && echo yes)" "exit $rc: $err"
err=$(KSEARCH_BROKER_CERT='' KSEARCH_BROKER_KEY='' "$ks" worker --broker "$ip_url" --threads 1 --max-jobs 1 2>&1); rc=$?
check "no client certificate for a broker that asks for one: exit 3 naming KSEARCH_BROKER_CERT" "$([[ $rc == 3 && $err == *KSEARCH_BROKER_CERT* ]] && echo yes)" "exit $rc: $err"
err=$(KSEARCH_BROKER_KEY='' "$ks" worker --broker "$ip_url" --threads 1 --max-jobs 1 2>&1); rc=$?
check "a client certificate without its key: exit 2" "$([[ $rc == 2 && $err == *KSEARCH_BROKER_KEY* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" worker --broker "rediss://:wrong-pw@127.0.0.1:$port" --threads 1 --max-jobs 1 2>&1); rc=$?
check "a wrong password over TLS: exit 2, never echoed" "$([[ $rc == 2 && $err == *password* && $err != *wrong-pw* ]] && echo yes)" "exit $rc: $err"
err=$(timeout 20 "$ks" worker --broker "redis://:$pw@127.0.0.1:$port" --threads 1 --max-jobs 1 2>&1); rc=$?
check "redis:// on the TLS port: a clean failure, not a hang" "$([[ $rc != 0 && $rc != 124 ]] && echo yes)" "exit $rc: $err"

# a worker by host name, a run by IP address, the broker restarted mid-run
"$ks" worker --broker "$name_url" --threads 1 --claim-after 2 >"$tmp/w1.log" 2>&1 &
workers+=($!)
run=$tmp/run
"$ks" run softmax --broker "$ip_url" --parallel 2 --budget 4 --min-time 0.05 --out "$run" --json -q >"$tmp/run.json" 2>"$tmp/run.err" &
rp=$!
for _ in $(seq 1 600); do
  n=$(db "$run/ksearch.db" "select count(*) from evaluations where status != 'running'")
  [[ ${n:-0} -ge 1 ]] && break
  sleep 0.1
done
stop_redis
sleep 1
start_redis
check "TLS broker restarted during the run (after ${n:-0} results)" "$([[ ${n:-0} -ge 1 ]] && echo yes)" "n=$n $(tail -3 "$tmp/w1.log")"
for _ in $(seq 1 1800); do kill -0 $rp 2>/dev/null || break; sleep 0.1; done
kill -0 $rp 2>/dev/null && kill $rp
wait $rp; rc=$?
out=$(cat "$tmp/run.json")
check "a run over rediss:// finishes its budget of 4" "$([[ $rc == 0 && $(field 'd["evaluations"]' "$out") == 4 ]] && echo yes)" "exit $rc: $out $(tail -5 "$tmp/run.err") $(tail -5 "$tmp/w1.log")"
R=$run/ksearch.db
check "every candidate recorded once, none running" "$([[ $(db "$R" "select count(*) - count(distinct candidate_id) from evaluations") == 0 && $(db "$R" "select count(*) from evaluations where status in ('running','interrupted')") == 0 ]] && echo yes)" "$(db "$R" "select group_concat(candidate_id||':'||status) from evaluations")"
check "the worker survived the restart" "$(kill -0 "${workers[0]}" 2>/dev/null && echo yes)" "$(tail -5 "$tmp/w1.log")"

echo "workers_tls: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
