#!/usr/bin/env python3
"""summarize.py — bench/gpu/run.sh's one JSON: for each task, the searched
best (summary.json of its run) on the goal workloads, as a fraction of the
copy bandwidth measured by ksearch's roofline and by torch in the same call,
against torch's time and the device baseline (the plain kernel in the task
folder, timed in the same executor). Usage: summarize.py OUTDIR > result.json
"""
import json
import os
import sys

GOALS = {  # task: (goal workloads as axis dicts, goal)
    "softmax": [{"rows": 8192, "cols": 8192}],
    "rmsnorm": [{"rows": 8192, "cols": 8192}],
    "layernorm": [{"rows": 8192, "cols": 8192}],
    "softmax_bf16": [{"rows": 8192, "cols": 8192}],
    "rmsnorm_bf16": [{"rows": 8192, "cols": 8192}],
    "layernorm_bf16": [{"rows": 8192, "cols": 8192}],
    "selective_scan": [{"batch": 1, "dim": 1536, "seqlen": 1024},
                       {"batch": 8, "dim": 2048, "seqlen": 2048}],
}


def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None


def main():
    d = sys.argv[1]
    roof = load(os.path.join(d, "roofline.json")) or {}
    anchors = load(os.path.join(d, "anchors.json")) or {}
    res = {"commit": os.environ.get("KS_COMMIT", ""),
           "command": os.environ.get("KS_COMMAND", ""),
           "sandbox_extra_calls_allowed": os.environ.get("KS_ALLOWED", ""),
           "roofline": roof, "anchors": anchors, "tasks": {}}
    copy = roof.get("copy_gbps", 0)
    tcopy = anchors.get("copy_gbps", 0)
    for t, goals in GOALS.items():
        s = load(os.path.join(d, "runs", t, "summary.json"))
        if not s or not s.get("best"):
            res["tasks"][t] = {"error": "no run or no correct candidate"}
            continue
        best = s["best"]
        entry = {"best_score_over_baseline": best.get("score"),
                 "params": best.get("params"), "plan": best.get("plan"),
                 "evaluations": s.get("evaluations", s.get("n_evaluated")),
                 "workloads": []}
        for w in best.get("workloads", []):
            if w.get("axes") not in goals:
                continue
            tns = w.get("device_time_ns_min") or w.get("time_ns_min")
            e = {"axes": w["axes"], "device_time_us": tns / 1e3,
                 "gbps": w.get("gbps"),
                 "baseline_speedup": w.get("baseline_speedup"),
                 "fraction_of_ksearch_copy": w.get("gbps", 0) / copy
                 if copy else None,
                 "fraction_of_torch_copy": w.get("gbps", 0) / tcopy
                 if tcopy else None}
            a = anchors.get(t)
            if isinstance(a, dict) and tns:
                e["torch_us"] = a["ms"] * 1e3
                e["speedup_over_torch"] = a["ms"] * 1e6 / tns
                e["torch_fraction_of_torch_copy"] = a["fraction_of_copy"]
            if t == "selective_scan" and w["axes"]["dim"] == 1536:
                ref = anchors.get(
                    "selective_scan_b1_d1536_L1024_torch_per_step_ms")
                if ref and tns:
                    e["speedup_over_torch_per_step"] = ref * 1e6 / tns
            entry["workloads"].append(e)
        res["tasks"][t] = entry
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
