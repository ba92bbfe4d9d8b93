#!/usr/bin/env python3
"""summarize16.py — bench/gpu/kernels16.sh's one JSON (issue 16). For each
task and GPU workload: the device baseline, every CUDA template at its
defaults and the search's best (device time, correct or not), torch's time
from the same call (torch16.json), and the ratios the issue's goals are in:
speedup over the baseline (ksearch's own baseline_speedup), over torch
(torch time / ours), TFLOP/s for attention and GEMM, KV GB/s and fraction of
ksearch's copy bandwidth for decode. Usage: summarize16.py OUTDIR"""
import glob
import json
import os
import sys

TORCH_KEY = {"attention_prefill": "sdpa", "decode_paged": "gather_sdpa",
             "moe_routing": "composition", "gemm_bf16": "matmul_cublas"}


def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None


def key(axes):
    return json.dumps({k: v for k, v in sorted(axes.items())})


def dev_ns(w):
    return w.get("device_time_ns_min") or w.get("time_ns_min") or 0


def work(task, a):
    """(flops, bytes the issue measures against) of a workload"""
    if task == "attention_prefill":
        return 2.0 * a["batch"] * a["heads_q"] * a["head_dim"] * a["seqlen"] * (a["seqlen"] + 1), 0
    if task == "gemm_bf16":
        return 2.0 * a["m"] * a["n"] * a["k"], 0
    if task == "decode_paged":
        return 0, 2.0 * 2 * a["batch"] * (a["max_pages"] * 16 - 15) * a["heads_kv"] * a["head_dim"]
    return 0, 0


def main():
    d = sys.argv[1]
    roof = load(os.path.join(d, "roofline.json")) or {}
    torch = load(os.path.join(d, "torch16.json")) or {}
    copy = roof.get("copy_gbps", 0)
    commit = ""
    try:
        commit = open(os.path.join(d, "commit.txt")).read().strip()
    except Exception:
        pass
    res = {"commit": commit, "command": os.environ.get("KS_COMMAND", ""),
           "roofline": {k: roof.get(k) for k in ("copy_gbps", "read_gbps", "l2_gbps",
                                                 "tc_bf16_gflops", "sm_clock_mhz")},
           "torch": torch.get("torch"), "tasks": {}}
    tasks = sorted({os.path.basename(p).split(".")[0]
                    for p in glob.glob(os.path.join(d, "evals", "*.json"))} |
                   set(torch.get("tasks", {}).keys()))
    for t in tasks:
        rows = {}
        tr = {key(r["axes"]): r for r in torch.get("tasks", {}).get(t, [])}
        kernels = {}
        for p in sorted(glob.glob(os.path.join(d, "evals", t + ".*.json"))):
            name = os.path.basename(p)[len(t) + 1:-5]
            kernels[name] = load(p)
        run = load(os.path.join(d, "runs", t + ".json"))
        if run and run.get("best"):
            kernels["search_best"] = {"status": "ok", "workloads": run["best"].get("workloads", []),
                                      "file": run["best"].get("file"),
                                      "params": run["best"].get("params"),
                                      "evaluations": run.get("evaluations")}
        summary = {}
        for name, e in kernels.items():
            if not e:
                summary[name] = {"status": "no result"}
                continue
            summary[name] = {"status": e.get("status"), "error": (e.get("error") or "")[:300]}
            for w in e.get("workloads", []):
                a = w["axes"]
                r = rows.setdefault(key(a), {"axes": a})
                ns = dev_ns(w)
                ent = {"correct": w.get("correct"), "device_ns_min": ns,
                       "max_abs_err": w.get("max_abs_err")}
                if w.get("baseline_speedup"):
                    ent["vs_baseline"] = w["baseline_speedup"]
                fl, by = work(t, a)
                if fl and ns:
                    ent["tflops"] = fl / ns / 1e3
                if by and ns:
                    ent["kv_gbps"] = by / ns
                    if copy:
                        ent["fraction_of_copy"] = by / ns / copy
                tw = tr.get(key(a), {}).get(TORCH_KEY.get(t, ""), {})
                if tw.get("time_ns_min") and ns:
                    ent["vs_torch"] = tw["time_ns_min"] / ns
                r.setdefault("kernels", {})[name] = ent
        for k, r in rows.items():
            if k in tr:
                r["torch"] = {n: v for n, v in tr[k].items() if n != "axes"}
        res["tasks"][t] = {"kernels": summary, "workloads": list(rows.values())}
    json.dump(res, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
