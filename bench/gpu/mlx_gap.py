"""mlx_gap.py: which step of the MLX executor's call path costs a kernel-form
candidate ~40-60 us that MLX's own op does not pay (issue 15; H200
2026-12-04: `eval --backend mlx` scored the rmsnorm vec_row kernel 0.60 /
0.82 of mx.fast.rms_norm at 256x2048 / 8192x8192 while outside the executor,
mlx_overhead.py, the two were within 10%).

    python3 bench/gpu/mlx_gap.py [--reps 30]

One process, no ksearch: rmsnorm's vec_row template (ksmlx.build, as the
executor builds it) and mx.fast.rms_norm, at both shapes, timed like the
executor (wall clock around call + eval + synchronize, minimum over reps)
under cumulative regimes:
  plain     inputs made once, nothing between calls;
  flush     the executor's L2 flush (sum of 256 MiB) before each call;
  prep      the executor's whole prep before each call: clear_cache, inputs
            rebuilt from host bytes on the device (xor 0), a device-made
            buffer per output freed, the flush, synchronize;
  sandbox   prep again after mlx/sandbox.py closed the executor's sandbox in
            this process (seccomp, rlimits), as the executor does.
One JSON line per (regime, shape): both times and their ratio (op / kernel:
above 1 means the kernel is faster). The regime where the ratio drops is the
step that costs the kernel form.
"""

import argparse
import json
import os
import sys
import time

import mlx.core as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "mlx"))
import ksmlx  # noqa: E402
import sandbox  # noqa: E402

SHAPES = [(256, 2048), (8192, 8192)]


def device_copy(host):
    """the executor's to_mx: host bytes, made into a device array"""
    a = mx.array(host.view(np.uint32))
    return mx.bitwise_xor(a, mx.array(0, dtype=mx.uint32)).view(mx.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    t = ksmlx.Task(os.path.join(ROOT, "tasks", "rmsnorm", "task.json"))
    cand = ksmlx.load(os.path.join(ROOT, "tasks", "rmsnorm", "templates", "mlx", "vec_row.cu"), t, None)
    kern = ksmlx.build(cand, mx)
    flush = mx.zeros((64 << 20,), dtype=mx.float32)
    mx.eval(flush)
    rng = np.random.default_rng(1)
    host = {s: (rng.standard_normal(s, dtype=np.float32), rng.standard_normal(s[1], dtype=np.float32))
            for s in SHAPES}
    state = {}

    def make(s):
        x, w = device_copy(host[s][0]), device_copy(host[s][1])
        mx.eval(x, w)
        state[s] = (x, w)

    def forms(s):
        x, w = state[s]
        axes = {"rows": s[0], "cols": s[1]}
        return {"kernel": lambda: kern([x, w], axes, {"eps": 1e-5})[0],
                "op": lambda: mx.fast.rms_norm(x, w, 1e-5)}

    def before(regime, s):
        if regime in ("prep", "sandbox"):
            mx.clear_cache()
            make(s)
            mx.synchronize()
            mx.clear_cache()
            pre = mx.zeros((4 * s[0] * s[1],), dtype=mx.uint8)
            mx.eval(pre)
            mx.synchronize()
            del pre
        if regime != "plain":
            mx.eval(mx.sum(flush))
        mx.synchronize()

    def run(regime):
        for s in SHAPES:
            make(s)
            best = {}
            for name in ("kernel", "op"):
                mx.eval(forms(s)[name]())  # compile, first use
                ts = []
                for _ in range(a.reps):
                    before(regime, s)
                    f = forms(s)[name]
                    t0 = time.monotonic_ns()
                    out = f()
                    mx.eval(out)
                    mx.synchronize()
                    ts.append(time.monotonic_ns() - t0)
                    del out
                best[name] = min(ts)
            print(json.dumps({"regime": regime, "shape": list(s), "kernel_us": best["kernel"] / 1e3,
                              "op_us": best["op"] / 1e3, "op_over_kernel": best["op"] / best["kernel"]}),
                  flush=True)

    print(json.dumps({"mlx": mx.__version__, "device": str(mx.default_device()),
                      "cuda_graphs": os.environ.get("MLX_USE_CUDA_GRAPHS", "default")}), flush=True)
    for regime in ("plain", "flush", "prep"):
        run(regime)
    why = sandbox.close(0, 0, mx.default_device().type != mx.cpu)
    if why:
        print(json.dumps({"sandbox": why}), flush=True)
        return
    run("sandbox")


if __name__ == "__main__":
    main()
