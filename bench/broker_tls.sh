#!/usr/bin/env bash
# Benchmark (DESIGN.md: Workers, TLS): the broker round trip of an empty job
# over rediss:// against redis:// on one redis-server that has both ports,
# in one sitting, alternating plain, TLS, plain, TLS (the worker and the
# client both on the port measured). Prints each median and the ratio of
# TLS to plain; the issue's goal for the plain round trip is < 5 ms.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
rt=${ROUNDTRIP:-$here/build/bench_broker_roundtrip}
n=${JOBS:-200}
for tool in redis-server redis-cli openssl; do
  command -v $tool >/dev/null || { echo "broker_tls bench: $tool not installed (scripts/setup.sh)"; exit 3; }
done
[[ -x $rt ]] || make -C "$here" build/bench_broker_roundtrip >/dev/null
tmp=$(mktemp -d /tmp/ksearch-bench-tls.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port) tport=$(free_port)
export KSEARCH_CACHE_DIR=${KSEARCH_CACHE_DIR:-$tmp/cache}
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
{
  openssl req -x509 "${ec[@]}" -keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days 1 -subj /CN=bench-ca &&
    openssl req "${ec[@]}" -keyout "$tmp/s.key" -out "$tmp/s.csr" -subj /CN=bench-server &&
    printf 'subjectAltName=IP:127.0.0.1\n' >"$tmp/s.ext" &&
    openssl x509 -req -in "$tmp/s.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
      -out "$tmp/s.crt" -days 1 -extfile "$tmp/s.ext"
} >"$tmp/openssl.log" 2>&1 || { echo "openssl failed: $(tail -3 "$tmp/openssl.log")"; exit 1; }
redis-server --port "$port" --tls-port "$tport" --bind 127.0.0.1 --tls-cert-file "$tmp/s.crt" \
  --tls-key-file "$tmp/s.key" --tls-ca-cert-file "$tmp/ca.crt" --tls-auth-clients no \
  --dir "$tmp" --save '' --daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
for _ in $(seq 1 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
export KSEARCH_BROKER_CACERT=$tmp/ca.crt
w=""
cleanup() {
  [[ -n $w ]] && kill "$w" 2>/dev/null
  wait 2>/dev/null
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
results=()
for mode in plain tls plain tls; do
  if [[ $mode == plain ]]; then url="redis://127.0.0.1:$port"; else url="rediss://127.0.0.1:$tport"; fi
  : >"$tmp/w.log"
  "$ks" worker --broker "$url" --threads 1 >"$tmp/w.log" 2>&1 &
  w=$!
  for _ in $(seq 1 600); do grep -q 'jobs from' "$tmp/w.log" && break; sleep 0.1; done
  out=$("$rt" "$url" "$n") || { echo "round trip over $mode failed: $out $(tail -3 "$tmp/w.log")"; exit 1; }
  results+=("$mode $out")
  kill "$w"
  wait "$w" 2>/dev/null
  w=""
done
printf '%s\n' "${results[@]}" | python3 -c '
import json, sys
rows = [(l.split(" ", 1)[0], json.loads(l.split(" ", 1)[1])) for l in sys.stdin if l.strip()]
med = {m: [d["round_trip_ms_median"] for k, d in rows if k == m] for m in ("plain", "tls")}
p = sum(med["plain"]) / len(med["plain"]); t = sum(med["tls"]) / len(med["tls"])
print(json.dumps({"jobs_per_sitting": rows[0][1]["jobs"], "plain_ms_median": med["plain"],
                  "tls_ms_median": med["tls"], "tls_over_plain": round(t / p, 3),
                  "plain_under_5ms": p < 5, "tls_under_5ms": t < 5}))'
