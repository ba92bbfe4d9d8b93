#!/usr/bin/env bash
# `ksearch run`: on each built-in task a small search finds a correct kernel
# faster than the reference, and its best/ file stands alone; a run killed
# with SIGKILL in the middle of an evaluation (its executors' folders swept
# by the next run) resumes without repeating or
# losing an evaluation; bad run folders and templates get clear errors.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
tmp=$(mktemp -d /tmp/ksearch-search-test.XXXXXX)
pass=0 fail=0
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
db() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$1" "$2" 2>/dev/null; }

for t in softmax rmsnorm layernorm selective_scan; do
  out=$("$ks" run "$t" --budget 4 --out "$tmp/$t" --json -q --min-time 0.02); rc=$?
  ok=$(field '"yes" if d["best"] and d["best"]["score"] > 1 and d["evaluations"] == 4 and d["stopped_because"] == "budget" else "no"' "$out")
  check "$t: run --budget 4 finds a correct kernel faster than the reference ($(field 'round(d["best"]["score"],2)' "$out")x)" "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $out"
  best=$(field 'd["best"]["file"]' "$out")
  e=$("$ks" eval "$t" "$best" --json -q --no-timing); rc=$?
  check "$t: best/$t.c builds and passes on its own" "$([[ $rc == 0 ]] && echo yes)" "exit $rc: $e"
done
out=$("$ks" show "$tmp/softmax"); rc=$?
check "show prints the analysis, the tree and the best plan" "$([[ $rc == 0 && $out == *"bound"* && $out == *"algorithm:"* && $out == *"best plan"* ]] && echo yes)" "exit $rc: $out"

# show --retime: the final tournament over a finished run's leaders, now;
# no new evaluation, and summary.json names the winner and its margin
n0=$(db "$tmp/rmsnorm/ksearch.db" "select count(*) from evaluations")
out=$("$ks" show "$tmp/rmsnorm" --retime --finalists 2 --rounds 2 --min-time 0.02 -q 2>&1); rc=$?
n1=$(db "$tmp/rmsnorm/ksearch.db" "select count(*) from evaluations")
note=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tournament']; print(len(t['finalists']), t['note'])" "$tmp/rmsnorm/summary.json" 2>&1)
check "show --retime re-times the leaders and updates summary.json ($note)" "$([[ $rc == 0 && $n0 == "$n1" && $note == "2 "* ]] && echo yes)" "exit $rc, evaluations $n0 -> $n1, $note: $out"
# the paired tournament: 4 finalists, at most 3 rounds, each timed beside
# the yardstick (the search's best, finalists[0], beside itself too); those
# not eliminated play every round (3, then at most 2 tie-break rounds), the
# winner has the best median ratio, or the second best and leads the best
# in their own paired rounds
c=$(db "$tmp/softmax/ksearch.db" "select count(*) from evaluations where status = 'ok'")
out=$("$ks" show "$tmp/softmax" --retime --finalists 4 --rounds 3 --tie-rounds 2 --min-time 0.02 -q 2>&1); rc=$?
paired=$(python3 - "$tmp/softmax/summary.json" <<'PY' 2>&1
import json, sys
t = json.load(open(sys.argv[1]))["tournament"]
f = t["finalists"]
played = t["rounds"]
ok = t["yardstick"] == f[0]["candidate_id"] and 1 <= played <= 5
ok = ok and t["tie_rounds"] == max(0, played - 3)
for x in f:
    n = len(x["ratios"])
    ok = ok and n <= played and (x["failed"] or x["eliminated_after"] or n == played)
live = [x for x in f if not x["failed"] and not x["eliminated_after"]]
win = [x for x in f if x["candidate_id"] == t["winner"]]
top = max(live, key=lambda x: x["median_ratio"])
def leads(a, b):  # the median of a's paired ratios over b's, rounds both played
    q = sorted(x / y for x, y in zip(a["ratios"], b["ratios"]) if x > 0 and y > 0)
    return q and (q[len(q) // 2] if len(q) % 2 else (q[len(q) // 2 - 1] + q[len(q) // 2]) / 2) >= 1
ok = ok and win and (win[0] is top or (leads(win[0], top) and
    win[0]["median_ratio"] == max(x["median_ratio"] for x in live if x is not top)))
ok = ok and 0.5 < f[0]["median_ratio"] < 2  # the yardstick beside itself
print(played, [len(x["ratios"]) for x in f], "yes" if ok else "no")
PY
)
if [[ $c -ge 4 ]]; then
  check "retime with 4 finalists: each beside the yardstick, the best median ratio wins ($paired)" "$([[ $rc == 0 && $paired == *yes ]] && echo yes)" "exit $rc: $paired $out"
else
  echo "skip the paired tournament: the softmax run has $c correct candidates"
fi
out=$("$ks" show "$tmp/rmsnorm" --retime --budget 3 2>&1); rc=$?
check "show --retime refuses --budget (exit 2)" "$([[ $rc == 2 && $out == *"--budget"* ]] && echo yes)" "exit $rc: $out"

# kill -9 in the middle of an evaluation, then resume
run=$tmp/killed
"$ks" run softmax --budget 6 --out "$run" -q --min-time 0.02 &
pid=$!
for _ in $(seq 1 600); do
  n=$(db "$run/ksearch.db" "select count(*) from evaluations where status != 'running'")
  r=$(db "$run/ksearch.db" "select count(*) from evaluations where status = 'running'")
  [[ ${n:-0} -ge 2 && ${r:-0} -ge 1 ]] && break
  sleep 0.1
done
kill -9 $pid; wait $pid 2>/dev/null
before=$(db "$run/ksearch.db" "select group_concat(id||':'||candidate_id||':'||status||':'||score, ',') from (select * from evaluations where status not in ('running','interrupted') order by id)")
nb=$(db "$run/ksearch.db" "select count(*) from evaluations where status not in ('running','interrupted')")
check "killed mid-evaluation ($nb finished, one in flight)" "$([[ ${nb:-0} -ge 2 && ${r:-0} -ge 1 ]] && echo yes)" "finished=$nb running=$r"
out=$("$ks" run --resume "$run" --budget 6 --json -q --min-time 0.02); rc=$?
after=$(db "$run/ksearch.db" "select group_concat(id||':'||candidate_id||':'||status||':'||score, ',') from (select * from evaluations where status not in ('running','interrupted') order by id)")
finished=$(db "$run/ksearch.db" "select count(*) from evaluations where status not in ('running','interrupted')")
dups=$(db "$run/ksearch.db" "select count(*) - count(distinct candidate_id) from evaluations where status not in ('running','interrupted')")
check "resume finishes the budget (6 evaluations)" "$([[ $rc == 0 && $finished == 6 ]] && echo yes)" "exit $rc finished=$finished $out"
check "no finished evaluation lost: the first $nb are unchanged" "$([[ $after == "$before"* ]] && echo yes)" "before=$before after=$after"
check "no candidate evaluated twice" "$([[ $dups == 0 ]] && echo yes)" "dups=$dups"
left=$(ls -d /tmp/ksearch-run-"$pid"-* 2>/dev/null | wc -l)
check "the killed run's executor folders were swept by the resumed one" "$([[ $left == 0 ]] && echo yes)" "$left left: $(ls -d /tmp/ksearch-run-"$pid"-* 2>/dev/null | head -3)"

# issue 13: damaged stores. A result without workloads resumes cleanly (it
# leaked a JSON array before); dropped tables or dangling ids are refused
# untouched, naming the damage
dmg() { rm -rf "$tmp/dmg" && cp -r "$run" "$tmp/dmg" && rm -f "$tmp/dmg/ksearch.db.lock" &&
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$tmp/dmg/ksearch.db" "$1"; }
dmg "UPDATE evaluations SET result_json='{}'"
out=$("$ks" run --resume "$tmp/dmg" --budget 6 --json -q); rc=$?
check "result without workloads: resume ends clean, best.workloads []" "$([[ $rc == 0 && $(field 'd["best"]["workloads"] == [] and d["evaluations"] == 6' "$out") == True ]] && echo yes)" "exit $rc: $out"
for sql in "DROP TABLE llm_calls" "PRAGMA foreign_keys=OFF; DROP TABLE runs" "PRAGMA foreign_keys=OFF; DROP TABLE candidates" "PRAGMA foreign_keys=OFF; UPDATE evaluations SET candidate_id = 9999 WHERE id = 1"; do
  dmg "$sql"
  sum=$(md5sum <"$tmp/dmg/ksearch.db")
  err=$("$ks" run --resume "$tmp/dmg" --budget 8 -q 2>&1); rc=$?
  check "damaged store ($sql): exit 2, untouched" "$([[ $rc == 2 && $err == *damaged* && $(md5sum <"$tmp/dmg/ksearch.db") == "$sum" ]] && echo yes)" "exit $rc: $err"
done

# bad input
err=$("$ks" run rmsnorm --resume "$tmp/softmax" --budget 5 2>&1); rc=$?
check "run folder from another task: exit 2 naming both" "$([[ $rc == 2 && $err == *softmax* && $err == *rmsnorm* ]] && echo yes)" "exit $rc: $err"
err=$("$ks" run softmax --out "$tmp/softmax" 2>&1); rc=$?
check "existing run folder without --resume: exit 2" "$([[ $rc == 2 && $err == *--resume* ]] && echo yes)" "exit $rc: $err"
flock "$tmp/softmax/ksearch.db.lock" sleep 30 &
locker=$!
sleep 0.5
err=$("$ks" run --resume "$tmp/softmax" --budget 5 2>&1); rc=$?
kill $locker 2>/dev/null; wait $locker 2>/dev/null
check "run folder locked by another ksearch: exit 2 saying so" "$([[ $rc == 2 && $err == *"another ksearch"* ]] && echo yes)" "exit $rc: $err"
mkdir -p "$tmp/corrupt" && echo "not a database" >"$tmp/corrupt/ksearch.db"
err=$("$ks" run softmax --resume "$tmp/corrupt" 2>&1); rc=$?
check "corrupt database: exit 2, file untouched" "$([[ $rc == 2 && $(cat "$tmp/corrupt/ksearch.db") == "not a database" ]] && echo yes)" "exit $rc: $err"
mkdir -p "$tmp/notpl" && cp "$here"/tasks/softmax/task.json "$here"/tasks/softmax/reference.c "$tmp/notpl/"
err=$("$ks" run "$tmp/notpl" --out "$tmp/notpl-run" 2>&1); rc=$?
check "task without templates: exit 2, nothing to search" "$([[ $rc == 2 && $err == *"nothing to search"* ]] && echo yes)" "exit $rc: $err"
mkdir -p "$tmp/notpl/templates/c" && printf '// ksearch: backend=c entry=softmax\n// ksearch: param VEC in\n' >"$tmp/notpl/templates/c/bad.c"
err=$("$ks" run "$tmp/notpl" --out "$tmp/notpl-run2" 2>&1); rc=$?
check "template with an empty parameter range: exit 2 naming it" "$([[ $rc == 2 && $err == *bad.c* && $err == *VEC* ]] && echo yes)" "exit $rc: $err"
printf '// ksearch: backend=c entry=softmax\n// ksearch: param VEC in 4,8\n// ksearch: param VEC in 16\n' >"$tmp/notpl/templates/c/bad.c"
err=$("$ks" run "$tmp/notpl" --out "$tmp/notpl-run3" 2>&1); rc=$?
check "template declaring a parameter twice: exit 2" "$([[ $rc == 2 && $err == *twice* ]] && echo yes)" "exit $rc: $err"
err=$(env -u KSEARCH_LLM_BASE_URL "$ks" run softmax --planner llm 2>&1); rc=$?
check "--planner llm without an endpoint: exit 2 saying what to set" "$([[ $rc == 2 && $err == *--llm-base-url* ]] && echo yes)" "exit $rc: $err"
# a near tie that decides the next step is settled: the two candidates timed
# beside each other both ways round, two evaluations of the budget, a fifth
# of the budget at most, a "retime" event each; here every candidate is the
# same kernel (three parameters the code never reads), so a settlement reads
# about 1; a resumed run counts what it already spent
tt=$tmp/tietask
mkdir -p "$tt/templates/c"
cp "$here/tasks/softmax/task.json" "$here/tasks/softmax/reference.c" "$tt/"
{
  echo "// ksearch: backend=c entry=softmax"
  echo "// ksearch: family=same_kernel"
  echo "// ksearch: param PAD in 1,2,3,4"
  echo "// ksearch: param PAD2 in 1,2,3,4"
  echo "// ksearch: param PAD3 in 1,2,3,4"
  sed 1,8d "$here/tasks/softmax/templates/c/online_two_pass.c" # defaults: #ifndef
} >"$tt/templates/c/same.c"
# Whether a step is a tie depends on the noise of the moment (identical
# kernels' unpaired scores drift by more than the tolerance now and then),
# so the run is tried up to 4 times for one that met a tie; the accounting
# is asserted on every try.
acct_ok=yes
for try in 1 2 3 4; do
  rm -rf "$tmp/tie"
  out=$("$ks" run "$tt" --budget 20 --finalists 0 --workloads 1,4 --out "$tmp/tie" --json -q --min-time 0.02 2>"$tmp/tie.err"); rc=$?
  ev=$(python3 - "$tmp/tie/ksearch.db" "$out" <<'PY' 2>&1
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = [json.loads(r[0]) for r in c.execute("select json from events where kind = 'retime'")]
d = json.loads(sys.argv[2])
acct = d["tie_settlements"] == len(rows) and d["evaluations"] + 2 * len(rows) == 20 and len(rows) <= 2
print(len(rows), acct, all(r["candidate"] != r["other"] and r["cost"] == 2 and 0.75 < r["ratio"] < 1.33 for r in rows))
PY
)
  read -r n acct near <<<"$ev"
  [[ $rc == 0 && $acct == True ]] || acct_ok="try $try: exit $rc, $ev: $out $(tail -3 "$tmp/tie.err")"
  [[ ${n:-0} -ge 1 ]] && break
done
check "settlements cost 2 evaluations each, at most a fifth of the budget, one retime event each (every try)" "$acct_ok" "$acct_ok"
check "a tie near the best is settled; the same kernel reads within 0.75-1.33 of itself both ways round (small workloads, a loaded CI machine) ($n settlements, try $try)" "$([[ ${n:-0} -ge 1 && $near == True ]] && echo yes)" "$ev"
out=$("$ks" run "$tt" --resume "$tmp/tie" --budget 22 --finalists 0 --workloads 1,4 --json -q --min-time 0.02 2>&1); rc=$?
n2=$(db "$tmp/tie/ksearch.db" "select count(*) from events where kind = 'retime'")
check "resume counts the settlements already paid ($n2 in all): evaluations + 2 x settlements = 22" "$([[ $rc == 0 && $(field "d['tie_settlements'] == $n2 and d['evaluations'] + 2 * $n2 == 22" "$out") == True ]] && echo yes)" "exit $rc: $out"

rm -rf "$tmp"
echo "search: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
