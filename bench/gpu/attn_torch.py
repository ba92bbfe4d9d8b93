"""attn_torch.py: torch's SDPA (causal, GQA, bfloat16) at the GPU workloads
of tasks/attention_prefill, timed as ksearch times a kernel (L2 flushed
before each call, CUDA events, minimum of 15): the anchor of
bench/gpu/attn16.sh and bench/gpu/attn_vs_mlx.sh.

    python3 bench/gpu/attn_torch.py [--seqlen N] [--skip-seqlen N]

Prints one JSON object: "batch,heads_q,heads_kv,seqlen,head_dim" -> ns.
"""

import argparse
import json
import os

import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqlen", type=int, default=0, help="only this seqlen")
    ap.add_argument("--skip-seqlen", type=int, default=0)
    a = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    res = {}
    for w in json.load(open(os.path.join(ROOT, "tasks/attention_prefill/task.json")))["workloads"]:
        S = w["seqlen"]
        if w.get("device") != "gpu" or S == a.skip_seqlen or (a.seqlen and S != a.seqlen):
            continue
        B, Hq, Hk, D = w["batch"], w["heads_q"], w["heads_kv"], w["head_dim"]
        q = torch.randn(B, Hq, S, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16)

        def f():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        f()
        torch.cuda.synchronize()
        ts = []
        for _ in range(15):
            flush.zero_()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            f()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1) * 1e6)
        res["%d,%d,%d,%d,%d" % (B, Hq, Hk, S, D)] = min(ts)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
