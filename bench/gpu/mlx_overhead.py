"""mlx_overhead.py: where an MLX custom kernel's time goes, outside ksearch's
executor (issue 15: on the H200, 2026-12-04, `eval --backend mlx` timed the
vec_row softmax at 0.53 ms where mx.softmax took 0.35 ms, while the same
CUDA template takes ~0.14 ms on --backend cuda).

    python3 bench/gpu/mlx_overhead.py [--rows 8192 --cols 8192 --reps 20]

For softmax and rmsnorm: MLX's own op and the MLX templates (ksmlx.build,
defaults), each (a) called and synchronized one at a time, as the executor
times them (min over reps), and (b) REPS calls queued, one synchronize at
the end (per-call mean: the launch overhead hidden), plus (c) the Python
side alone (the call without mx.eval). Prints one JSON line per kernel.
Besides the templates: a one-thread cuda_kernel (the fixed cost of a
custom kernel: launch, graph commit, synchronize), a float4 copy as a
cuda_kernel, and mx.abs (MLX's own elementwise op over the same bytes), so
that the fixed cost and the bandwidth of the custom-kernel path can be told
apart. Run it again with MLX_USE_CUDA_GRAPHS=0 to see what MLX's graph
capture (cudaGraphExecUpdate or instantiate per commit) adds.
"""

import argparse
import json
import os
import sys
import time

import mlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "mlx"))
import ksmlx  # noqa: E402


def template(task, name):
    t = ksmlx.Task(os.path.join(ROOT, "tasks", task, "task.json"))
    c = ksmlx.load(os.path.join(ROOT, "tasks", task, "templates", "mlx", name + ".cu"), t, None)
    return ksmlx.build(c, mx)


def time_calls(call, reps):
    """(fastest synchronized call, per-call mean of REPS queued calls, per
    call of Python alone) in seconds, after one warm-up call."""
    mx.eval(call())
    mx.synchronize()
    one = []
    for _ in range(reps):
        mx.synchronize()
        t0 = time.perf_counter()
        mx.eval(call())
        mx.synchronize()
        one.append(time.perf_counter() - t0)
    mx.synchronize()
    t0 = time.perf_counter()
    outs = [call() for _ in range(reps)]
    mx.eval(outs)
    mx.synchronize()
    queued = (time.perf_counter() - t0) / reps
    del outs
    t0 = time.perf_counter()
    for _ in range(reps):
        call()
    py = (time.perf_counter() - t0) / reps
    mx.synchronize()
    return min(one), queued, py


def measure(label, call, reps, nbytes):
    one, queued, py = time_calls(call, reps)
    r = {"kernel": label, "one_ms": one * 1e3, "queued_ms": queued * 1e3,
         "python_us": py * 1e6, "gbps_queued": nbytes / queued / 1e9}
    print(json.dumps(r), flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    x = mx.random.normal((a.rows, a.cols))
    w = mx.random.normal((a.cols,))
    mx.eval(x, w)
    print(json.dumps({"rows": a.rows, "cols": a.cols, "mlx": mx.__version__,
                      "cuda_graphs": os.environ.get("MLX_USE_CUDA_GRAPHS", "default")}), flush=True)
    axes = {"rows": a.rows, "cols": a.cols}
    nbytes = 2 * a.rows * a.cols * 4
    empty = mx.fast.cuda_kernel(
        name="ks_empty", input_names=["inp"], output_names=["out"],
        source="if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = inp[0];")
    measure("cuda_kernel one thread", lambda: empty(
        inputs=[x], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(1,)],
        output_dtypes=[mx.float32])[0], a.reps, 8)
    n4 = a.rows * a.cols // 4
    copy = mx.fast.cuda_kernel(
        name="ks_copy4", input_names=["inp"], output_names=["out"],
        source="size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
               "if (i < N4) ((float4 *)out)[i] = ((const float4 *)inp)[i];")
    measure("cuda_kernel float4 copy", lambda: copy(
        inputs=[x], template=[("N4", n4)], grid=(n4, 1, 1), threadgroup=(256, 1, 1),
        output_shapes=[x.shape], output_dtypes=[mx.float32])[0], a.reps, nbytes)
    measure("mx.abs", lambda: mx.abs(x), a.reps, nbytes)
    for name in ("vec_row", "block_row"):
        f = template("softmax", name)
        measure("softmax " + name, lambda f=f: f([x], axes, {})[0], a.reps, nbytes)
    measure("mx.softmax", lambda: mx.softmax(x, axis=-1), a.reps, nbytes)
    for name in ("vec_row", "block_row"):
        f = template("rmsnorm", name)
        measure("rmsnorm " + name, lambda f=f: f([x, w], axes, {"eps": 1e-5})[0], a.reps, nbytes)
    measure("mx.fast.rms_norm", lambda: mx.fast.rms_norm(x, w, 1e-5), a.reps, nbytes)


if __name__ == "__main__":
    main()
