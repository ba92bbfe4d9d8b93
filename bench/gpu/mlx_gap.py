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

Then (plain regime, both shapes) where a call's time goes, each step's
minimum over reps: `call_us` (the Python call that builds the graph),
`eval_us` (mx.eval: MLX encodes and launches, asynchronously), `sync_us`
(mx.synchronize: the GPU finishing); for the vec_row kernel, MLX's op, a
trivial custom kernel (one element per thread, y = -x) against mx.negative,
and two vec_row calls in one eval (whether the cost is per kernel or per
eval). This says whether the ~60 us is host work in the custom-kernel path
(call or eval) or time on the device.
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

    neg = mx.fast.cuda_kernel(name="ks_neg", input_names=["x"], output_names=["y"],
                              source="unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                     "if (i < N) y[i] = -x[i];\n") \
        if mx.default_device().type != mx.cpu and hasattr(mx.fast, "cuda_kernel") else None

    def split():
        for s in SHAPES:
            make(s)
            x, w = state[s]
            n = s[0] * s[1]
            f = forms(s)
            cases = {"kernel": f["kernel"], "op": f["op"],
                     "kernel_x2": lambda: [f["kernel"](), f["kernel"]()],
                     "negative_op": lambda: mx.negative(x)}
            if neg is not None:
                cases["negative_kernel"] = lambda: neg(
                    inputs=[x], template=[("N", n)], grid=(n, 1, 1), threadgroup=(256, 1, 1),
                    output_shapes=[x.shape], output_dtypes=[x.dtype])[0]
            row = {"split": list(s)}
            for name, g in cases.items():
                try:  # one case that fails to build is a row entry, not the end
                    mx.eval(g())
                    mx.synchronize()
                except Exception as e:
                    row[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
                    continue
                best = [None, None, None]
                for _ in range(a.reps):
                    mx.synchronize()
                    t0 = time.monotonic_ns()
                    out = g()
                    t1 = time.monotonic_ns()
                    mx.eval(out)
                    t2 = time.monotonic_ns()
                    mx.synchronize()
                    t3 = time.monotonic_ns()
                    for i, d in enumerate((t1 - t0, t2 - t1, t3 - t2)):
                        best[i] = d if best[i] is None else min(best[i], d)
                    del out
                row[name] = {"call_us": best[0] / 1e3, "eval_us": best[1] / 1e3,
                             "sync_us": best[2] / 1e3}
            print(json.dumps(row), flush=True)

    print(json.dumps({"mlx": mx.__version__, "device": str(mx.default_device()),
                      "cuda_graphs": os.environ.get("MLX_USE_CUDA_GRAPHS", "default")}), flush=True)
    for regime in ("plain", "flush", "prep"):
        run(regime)
    split()
    why = sandbox.close(0, 0, mx.default_device().type != mx.cpu)
    if why:
        print(json.dumps({"sandbox": why}), flush=True)
        return
    run("sandbox")


if __name__ == "__main__":
    main()
