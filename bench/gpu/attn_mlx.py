"""attn_mlx.py: MLX's own attention (mx.fast.scaled_dot_product_attention,
causal, GQA, bfloat16) at the GPU workloads of tasks/attention_prefill, the
anchor of issue 16's "at least 1.0x MLX's SDPA on every shape" (run by
bench/gpu/attn_vs_mlx.sh on the H200, in the same call as ksearch's eval).

    python3 bench/gpu/attn_mlx.py [--reps 15] [--skip-seqlen 16384 | --seqlen 16384]

Per shape, two figures, and the anchor is the faster (the one that favours
MLX): "one", each call evaluated and synchronized on its own after a read of
a 256 MiB buffer (the L2 flushed, as ksearch times), minimum over reps;
"queued", reps calls evaluated together and one synchronize (MLX's per-call
overhead of ~30-50 us hidden), mean per call. Prints one JSON object.
"""

import argparse
import json
import math
import os
import time

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--skip-seqlen", type=int, default=0)
    ap.add_argument("--seqlen", type=int, default=0, help="only this seqlen")
    a = ap.parse_args()
    t = json.load(open(os.path.join(ROOT, "tasks", "attention_prefill", "task.json")))
    flush = mx.zeros((64 << 20,), dtype=mx.float32)
    mx.eval(flush)
    res = {"mlx": mx.__version__, "device": str(mx.default_device()), "shapes": {}}
    for w in t["workloads"]:
        if w.get("device") != "gpu" or w["seqlen"] == a.skip_seqlen or \
                (a.seqlen and w["seqlen"] != a.seqlen):
            continue
        B, Hq, Hk, S, D = w["batch"], w["heads_q"], w["heads_kv"], w["seqlen"], w["head_dim"]
        q = mx.random.normal((B, Hq, S, D)).astype(mx.bfloat16)
        k = mx.random.normal((B, Hk, S, D)).astype(mx.bfloat16)
        v = mx.random.normal((B, Hk, S, D)).astype(mx.bfloat16)
        mx.eval(q, k, v)

        def f():
            return mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0 / math.sqrt(D),
                                                        mask="causal")
        mx.eval(f())
        mx.synchronize()
        one = []
        for _ in range(a.reps):
            mx.eval(mx.sum(flush))
            mx.synchronize()
            t0 = time.perf_counter_ns()
            mx.eval(f())
            mx.synchronize()
            one.append(time.perf_counter_ns() - t0)
        mx.synchronize()
        t0 = time.perf_counter_ns()
        outs = [f() for _ in range(a.reps)]
        mx.eval(outs)
        mx.synchronize()
        queued = (time.perf_counter_ns() - t0) / a.reps
        del outs
        fl = 2.0 * B * Hq * D * S * (S + 1)
        best = min(min(one), queued)
        res["shapes"]["%d,%d,%d,%d,%d" % (B, Hq, Hk, S, D)] = {
            "one_ns": min(one), "queued_ns": queued, "anchor_ns": best,
            "tflops": fl / best / 1e3}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
