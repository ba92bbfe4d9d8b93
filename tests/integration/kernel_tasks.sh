#!/usr/bin/env bash
# The issue-16 tasks (attention_prefill, decode_paged, moe_routing,
# gemm_bf16): each reference is correct as a candidate; every C template, at
# its defaults and at the parameter values that change its structure (VEC=8,
# split counts above the page count, the other selection, tiny tiles), is
# correct on awkward shapes the task's own workloads do not have (one
# element, odd head_dim, more splits than pages, topk = experts, m = 1;
# SMALL=0 and 16: attention's blocked and direct paths on the short ones;
# head_dim 300 in attention and decode: past the templates' private and
# stack buffers of 256);
# the OpenCL templates are correct on the same shapes where OpenCL exists;
# the blocked attention and the register-tiled GEMM are faster than the
# reference on the task's workloads; `run moe_routing --budget 3` works.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSEARCH:-$here/build/ksearch}
pass=0 fail=0
check() {
  if [[ $2 == yes ]]; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$2" 2>/dev/null; }
tasks="attention_prefill decode_paged moe_routing gemm_bf16"
have_cl=no
"$ks" roofline --backend opencl --list >/dev/null 2>&1 && have_cl=yes
[[ $have_cl == yes ]] || echo "note: no OpenCL platform; the OpenCL templates are not checked here"

odd=$(mktemp -d)
# the attention reference's two loops (plain for the CPU workloads, blocked
# on all cores for the GPU-sized ones) agree bit for bit
if cc -O3 -march=native -fopenmp -std=gnu11 -o "$odd/attn_paths" "$here/tests/integration/attention_ref_paths.c" \
  "$here/tasks/attention_prefill/reference.c" -lm 2>"$odd/attn_paths.log"; then
  out=$("$odd/attn_paths"); rc=$?
  check "attention_prefill reference: plain and blocked loops give the same bits" "$([[ $rc == 0 ]] && echo yes)" "$out"
else
  check "attention_prefill reference: the path check builds" no "$(tail -c 400 "$odd/attn_paths.log")"
fi
for t in $tasks; do
  dir=$here/tasks/$t
  out=$("$ks" eval "$t" "$dir/reference.c" --no-timing --json -q); rc=$?
  check "$t: reference as candidate is correct" "$([[ $rc == 0 && $(field 'd["status"]' "$out") == ok ]] && echo yes)" "exit $rc: $out"
  mkdir -p "$odd/$t"
  cp "$dir/reference.c" "$odd/$t/"
  python3 - "$dir/task.json" "$odd/$t/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
name = t["name"]
if name == "attention_prefill":
    s = [(1, 1, 1, 1, 1), (1, 2, 1, 17, 3), (2, 4, 2, 65, 24), (1, 3, 3, 130, 16), (1, 2, 2, 7, 129), (1, 2, 1, 3, 300)]
    t["workloads"] = [dict(zip(["batch", "heads_q", "heads_kv", "seqlen", "head_dim"], w)) for w in s]
elif name == "decode_paged":
    s = [(1, 1, 1, 1, 1), (2, 4, 2, 5, 3), (3, 6, 3, 17, 2), (1, 8, 1, 129, 4), (5, 2, 2, 8, 1), (1, 2, 1, 300, 2)]
    t["workloads"] = [{"batch": b, "heads_q": hq, "heads_kv": hk, "head_dim": d, "max_pages": p,
                       "num_pages": b * p} for b, hq, hk, d, p in s]
elif name == "moe_routing":
    s = [(1, 1, 1), (5, 3, 2), (17, 33, 5), (300, 16, 16), (64, 257, 7), (3, 4, 4)]
    t["workloads"] = [dict(zip(["tokens", "experts", "topk"], w)) for w in s]
else:
    s = [(1, 1, 1), (3, 5, 7), (17, 33, 65), (100, 31, 1), (1, 257, 3), (64, 64, 64), (31, 47, 300)]
    t["workloads"] = [dict(zip(["m", "n", "k"], w)) for w in s]
json.dump(t, open(sys.argv[2], "w"))
PY
  for tpl in "$dir"/templates/c/*.c; do
    name=$(basename "$tpl" .c)
    variants=(default VEC=8)
    grep -q "param NSPLIT" "$tpl" && variants+=(NSPLIT=16 NSPLIT=1)
    grep -q "param SELECT" "$tpl" && variants+=(SELECT=1)
    grep -q "param MINTOK" "$tpl" && variants+=(MINTOK=64)
    grep -q "param BQ" "$tpl" && variants+=(BQ=8)
    grep -q "param QR" "$tpl" && variants+=(QR=1 QR=2)
    grep -q "param SMALL" "$tpl" && variants+=(SMALL=0 SMALL=16)
    grep -q "param TOKENS" "$tpl" && variants+=(TOKENS=64)
    grep -q "param MR" "$tpl" && variants+=(MR=6)
    grep -q "param ROWS" "$tpl" && variants+=(ROWS=4)
    for v in "${variants[@]}"; do
      p=(); [[ $v != default ]] && p=(--param "$v")
      grep -q "param VEC" "$tpl" || [[ $v != VEC=8 ]] || continue
      out=$("$ks" eval "$odd/$t" "$tpl" "${p[@]}" --no-timing --json -q); rc=$?
      check "$t/$name (${p[*]:-defaults}) is correct on odd shapes" "$([[ $rc == 0 && $(field 'd["status"]' "$out") == ok ]] && echo yes)" "exit $rc: $(field 'd["error"]' "$out")"
    done
  done
  # OpenCL templates (PoCL here) on the same odd shapes, where OpenCL exists
  if [[ $have_cl == yes ]]; then
    for tpl in "$dir"/templates/opencl/*.cl; do
      out=$("$ks" eval "$odd/$t" "$tpl" --backend opencl --no-timing --json -q); rc=$?
      check "$t/$(basename "$tpl") (opencl) is correct on odd shapes" "$([[ $rc == 0 && $(field 'd["status"]' "$out") == ok ]] && echo yes)" "exit $rc: $(field 'd["error"]' "$out")"
    done
  fi
done
rm -rf "$odd"

# faster than the reference where the work is large enough to time (the
# odd-sized and tiny workloads are there for correctness)
for pair in attention_prefill/flash_blocked gemm_bf16/register_tiled; do
  t=${pair%%/*}
  out=$("$ks" eval "$t" "$here/tasks/${t}/templates/c/${pair#*/}.c" --json -q --min-reps 3); rc=$?
  ok=$(field '"yes" if d["status"]=="ok" and max(w["speedup"] for w in d["workloads"]) > 2 and all(w["roofline_fraction"] > 0 for w in d["workloads"]) else "no"' "$out")
  check "$pair: correct, over 2x the reference on its largest workloads" "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $(field 'd["error"] or [(w["axes"], w["speedup"]) for w in d["workloads"]]' "$out")"
done
# the built-in planner on the routing class spec: a short search finds a
# correct kernel and its plan starts with a family
runs=$(mktemp -d)
out=$("$ks" run moe_routing --budget 3 --out "$runs/r" --json -q); rc=$?
ok=$(field '"yes" if d["best"]["score"] > 0 and d["best"]["plan"][0].startswith("algorithm: ") else "no"' "$out")
check "run moe_routing --budget 3 finds a correct kernel" "$([[ $rc == 0 ]] && echo "$ok")" "exit $rc: $out"
rm -rf "$runs"
echo "kernel tasks: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
