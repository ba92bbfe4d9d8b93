#!/usr/bin/env python3
"""torch16.py — torch's side of bench/gpu/kernels16.sh (issue 16): for every
GPU workload of the four issue-16 tasks (read from tasks/<t>/task.json), the
time of torch's best composition of the same work, in this one process:
attention_prefill: F.scaled_dot_product_attention(causal, GQA); decode_paged:
the page gather + SDPA with a length mask, and SDPA on an already contiguous
cache (the ceiling the issue quotes); moe_routing: softmax, topk,
renormalize, stable argsort and bincount + cumsum; gemm_bf16: torch.matmul
(cuBLAS). Like ksearch's timing, L2 is flushed (a 2x-L2 write) before each
repetition and CUDA events time the op alone; the minimum and median of REPS.
Usage: torch16.py REPO_ROOT > torch16.json"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

REPS = int(os.environ.get("REPS", "15"))
root = sys.argv[1] if len(sys.argv) > 1 else "."
dev = torch.device("cuda")
flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device=dev)  # > 2x the H200's 50 MB L2


def timeit(fn):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(REPS):
        flush.zero_()
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e6)  # ns
    ts.sort()
    return {"time_ns_min": ts[0], "time_ns_median": ts[len(ts) // 2], "reps": REPS}


def gpu_workloads(task):
    with open(os.path.join(root, "tasks", task, "task.json")) as f:
        t = json.load(f)
    return [{k: v for k, v in w.items() if k != "device"} for w in t["workloads"]
            if w.get("device") == "gpu"]


def attention(w):
    B, Hq, Hk, S, D = w["batch"], w["heads_q"], w["heads_kv"], w["seqlen"], w["head_dim"]
    q = torch.randn(B, Hq, S, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16)
    v = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16)
    r = timeit(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
    r["flops"] = 2.0 * B * Hq * D * S * (S + 1)
    r["tflops"] = r["flops"] / r["time_ns_min"] / 1e3
    return {"sdpa": r}


def decode(w):
    B, Hq, Hk, D, P, MP = (w["batch"], w["heads_q"], w["heads_kv"], w["head_dim"],
                           w["num_pages"], w["max_pages"])
    L = MP * 16
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    kc = torch.randn(P, 16, Hk, D, device=dev, dtype=torch.bfloat16)
    vc = torch.randn(P, 16, Hk, D, device=dev, dtype=torch.bfloat16)
    pt = torch.randperm(P, device=dev, dtype=torch.int32)[: B * MP].reshape(B, MP)
    lens = torch.randint(L - 15, L + 1, (B,), device=dev)
    mask = (torch.arange(L, device=dev)[None, :] < lens[:, None])[:, None, None, :]

    def gather_sdpa():
        k = kc[pt.long()].reshape(B, L, Hk, D).transpose(1, 2)
        v = vc[pt.long()].reshape(B, L, Hk, D).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)

    kcont = torch.randn(B, Hk, L, D, device=dev, dtype=torch.bfloat16)
    vcont = torch.randn(B, Hk, L, D, device=dev, dtype=torch.bfloat16)
    kv_bytes = 2.0 * 2 * B * (L - 15) * Hk * D  # the KV the cost model counts
    out = {}
    for name, fn in (("gather_sdpa", gather_sdpa),
                     ("contiguous_sdpa", lambda: F.scaled_dot_product_attention(
                         q, kcont, vcont, enable_gqa=True))):
        r = timeit(fn)
        r["kv_gbps"] = kv_bytes / r["time_ns_min"]
        out[name] = r
    return out


def routing(w):
    T, E, K = w["tokens"], w["experts"], w["topk"]
    logits = torch.randint(-12, 13, (T, E), device=dev).float()

    def compose():
        p = torch.softmax(logits, -1)
        wv, ids = torch.topk(p, K, dim=-1)
        wv = wv / wv.sum(-1, keepdim=True)
        flat = ids.flatten()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=E)
        offsets = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
        return wv, ids, offsets, order

    return {"composition": timeit(compose)}


def gemm(w):
    m, n, k = w["m"], w["n"], w["k"]
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    r = timeit(lambda: torch.matmul(a, b))
    r["tflops"] = 2.0 * m * n * k / r["time_ns_min"] / 1e3
    return {"matmul_cublas": r}


def main():
    res = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "tasks": {}}
    for task, fn in (("attention_prefill", attention), ("decode_paged", decode),
                     ("moe_routing", routing), ("gemm_bf16", gemm)):
        rows = []
        for w in gpu_workloads(task):
            t0 = time.time()
            try:
                rows.append({"axes": w, **fn(w)})
            except Exception as e:  # one failure must not stop the rest
                rows.append({"axes": w, "error": repr(e)[:300]})
            print(f"{task} {w}: {time.time() - t0:.1f} s", file=sys.stderr)
            torch.cuda.empty_cache()
        res["tasks"][task] = rows
    json.dump(res, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
