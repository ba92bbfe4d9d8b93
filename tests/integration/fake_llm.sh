# fake_llm.sh — sourced by the suites that talk to the scripted fake chat
# server (tests/fake_llm/server.py, 127.0.0.1 only): llm.sh,
# llm_backends.sh, workers.sh. Needs $here (the repository) and $tmp;
# cleanup_servers stops what start_server started.
servers=()
# start_server SCRIPT LOG [--script-dir DIR]: sets $port and $server_pid.
# SCRIPT is a file in tests/fake_llm/scripts/, or a path when it has a slash.
start_server() {
  local script=$1
  [[ $script == */* ]] || script=$here/tests/fake_llm/scripts/$script
  python3 "$here/tests/fake_llm/server.py" --script "$script" \
    --log "$2" --root "$here" >"$2.port" 2>"$2.err" &
  server_pid=$!
  servers+=("$server_pid")
  port=
  for _ in $(seq 1 100); do
    port=$(head -1 "$2.port" 2>/dev/null)
    [[ -n $port ]] && break
    sleep 0.05
  done
}
stop_server() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
cleanup_servers() { for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; }
# asked LOG ENTRY: the last user message of the first request answered by
# that script entry
asked() { python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["entry"] == sys.argv[2]:
        print(d["last_user"]); break
PY
}
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_API_KEY \
  KSEARCH_LLM_BASE_URL KSEARCH_LLM_MODEL
