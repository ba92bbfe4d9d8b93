"""mlx_attn_gap.py: where the MLX copy of mma_flash loses to MLX's SDPA
(issue 15), outside ksearch's executor. On an H100 (2026-12-05) the MLX copy
took 879-989 us per synchronized call through `eval --backend mlx` at
b1 S 4096 d128, where the CUDA build of the same template takes 611 us of
device time; MLX's per-call cost (about 30 us, mlx_gap.py) does not explain
the difference.

    python3 bench/gpu/mlx_attn_gap.py [--reps 20] [--params KU=1,WM=1:BQ=64]

Per attention GPU shape (b1 S 1024 / 4096, b2 S 1000, b1 S 4096 d64; GQA
32/8): MLX's SDPA with the causal mask and the mma_flash template
(ksmlx.build, defaults and each --params set), each (a) called and
synchronized one at a time (min over reps: what the executor times), and
(b) REPS calls queued behind one synchronize (per-call mean: the kernel's
own time with the launch overhead hidden). One JSON line per (shape,
kernel), with TFLOP/s of the causal flops for both.
"""

import argparse
import json
import os
import sys

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "mlx"))
import ksmlx  # noqa: E402
from mlx_overhead import time_calls  # noqa: E402

SHAPES = [(1, 1024, 128), (1, 4096, 128), (2, 1000, 128), (1, 4096, 64)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--params", default="", help="sets separated by ',', K=V pairs by ':'")
    a = ap.parse_args()
    task = ksmlx.Task(os.path.join(ROOT, "tasks", "attention_prefill", "task.json"))
    path = os.path.join(ROOT, "tasks", "attention_prefill", "templates", "mlx", "mma_flash.cu")
    sets = [{}] + [dict(kv.split("=") for kv in s.split(":")) for s in a.params.split(",") if s]
    kernels = [(("mma_flash " + " ".join(f"{k}={v}" for k, v in s.items())).strip(),
                ksmlx.build(ksmlx.load(path, task, {k: int(v) for k, v in s.items()}), mx))
               for s in sets]
    print(json.dumps({"mlx": mx.__version__, "device": str(mx.default_device())}), flush=True)
    for b, s, d in SHAPES:
        hq, hk = 32, 8
        q = mx.random.normal((b, hq, s, d)).astype(mx.bfloat16)
        k = mx.random.normal((b, hk, s, d)).astype(mx.bfloat16)
        v = mx.random.normal((b, hk, s, d)).astype(mx.bfloat16)
        mx.eval(q, k, v)
        axes = {"batch": b, "heads_q": hq, "heads_kv": hk, "seqlen": s, "head_dim": d}
        flops = 2 * b * hq * s * (s + 1) * d
        ref = mx.fast.scaled_dot_product_attention(q, k, v, scale=d**-0.5, mask="causal")
        rows = [("mx.fast.scaled_dot_product_attention",
                 lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=d**-0.5,
                                                              mask="causal"))]
        rows += [(name, (lambda f=f: f([q, k, v], axes, {})[0])) for name, f in kernels]
        for name, call in rows:
            err = float(mx.max(mx.abs(call().astype(mx.float32) - ref.astype(mx.float32))))
            one, queued, _ = time_calls(call, a.reps)
            print(json.dumps({"shape": f"b{b} S{s} d{d}", "kernel": name, "max_err_vs_sdpa": err,
                              "one_us": one * 1e6, "queued_us": queued * 1e6,
                              "tflops_one": flops / one / 1e12,
                              "tflops_queued": flops / queued / 1e12}), flush=True)


if __name__ == "__main__":
    main()
