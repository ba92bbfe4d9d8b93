"""mlx_block.py: mlx-lm's Mamba-1 block prefill with a ksearch kernel in place
of its SSM loop, against mlx-lm as it is (issue 15, headline (a); run by
bench/gpu/mlx.sh on the H200, one process, both timed alternately).

    python3 mlx_block.py OUT.json [--kernels kernels.py] [--candidate FILE[:K=V,K=V]]...
                         [--T 256,1024,4096] [--reps N] [--profile]

The block has mamba-370m's shapes (hidden 1024, intermediate 2048, state
16, conv 4, dt rank 64), random weights, batch 1, float32. The fast block
runs mlx-lm's own modules for everything but the scan (in_proj, conv1d,
x_proj, dt_proj, out_proj, swiglu: the same calls as
MambaBlock._process_sequence) and the kernel for the scan, whose inputs are
exactly tasks/mamba_mlx's. Each output is checked against mlx-lm's before
it is timed. Timing: a warm-up, then REPS rounds of mlx-lm's block, one
untimed fast call, and each fast block, every call one mx.eval +
mx.synchronize; the minimum counts. Each fast block is also timed under
mx.compile (what an MLX user does with a model; `ms_compiled`), and each
scan alone, QUEUE calls queued behind one synchronize (`scan_queued_ms`,
the kernel's own time without MLX's per-call cost: how to rank scan
variants). The anchor is mlx-lm's block as it is (uncompiled); at T <= 1024
mlx-lm's block under mx.compile is timed too (`mlx_lm_compiled_ms`) and
`speedup_compiled_vs_best_mlx_lm` divides the faster of the two.
"""

import argparse
import json
import os
import sys
import time

import mlx.core as mx
import mlx.nn as nn
from mlx_lm.models.activations import swiglu
from mlx_lm.models.mamba import MambaBlock, ModelArgs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "mlx"))
import ksmlx  # noqa: E402


def block_args():
    return ModelArgs(model_type="mamba", vocab_size=50280, hidden_size=1024,
                     intermediate_size=2048, state_size=16, num_hidden_layers=48,
                     conv_kernel=4, use_bias=False, use_conv_bias=True,
                     time_step_rank=64)


def fast_block(block, scan):
    """MambaBlock.__call__(x, None) with scan(x, delta, A, B, C, D) for the
    per-token loop; the rest is mlx-lm's own modules, in its order."""
    def run(x):
        xz = block.in_proj(x)
        xs, z = xz.split(indices_or_sections=2, axis=-1)
        K = block.conv_kernel_size
        xs = nn.silu(block.conv1d(mx.pad(xs, [(0, 0), (K - 1, 0), (0, 0)])))
        A = -mx.exp(block.A_log)
        r, n = block.time_step_rank, block.ssm_state_size
        delta, B, C = mx.split(block.x_proj(xs), [r, r + n], axis=-1)
        delta = nn.softplus(block.dt_proj(delta))
        y = scan(xs, delta, A, B, C, block.D)
        return block.out_proj(swiglu(z, y))
    return run


def timed(f, x):
    mx.synchronize()
    t0 = time.perf_counter()
    mx.eval(f(x))
    mx.synchronize()
    return time.perf_counter() - t0


def stage_inputs(block, x):
    """The fast block's intermediate arrays up to the scan, evaluated: the
    scan's inputs (xs, delta, A, B, C, D) and what the profile's stages
    read (xs0, z, dl)."""
    K = block.conv_kernel_size
    r, n = block.time_step_rank, block.ssm_state_size
    xs0, z = block.in_proj(x).split(indices_or_sections=2, axis=-1)
    xs = nn.silu(block.conv1d(mx.pad(xs0, [(0, 0), (K - 1, 0), (0, 0)])))
    A = -mx.exp(block.A_log)
    dl, B, C = mx.split(block.x_proj(xs), [r, r + n], axis=-1)
    delta = nn.softplus(block.dt_proj(dl))
    v = dict(xs0=xs0, z=z, xs=xs, A=A, dl=dl, B=B, C=C, delta=delta)
    mx.eval(list(v.values()))
    return v


def scan_queued(scan, block, x, n):
    """The scan alone on the block's own inputs, n calls queued behind one
    synchronize, per call (best of 3)."""
    v = stage_inputs(block, x)
    args = [mx.contiguous(a) for a in (v["xs"], v["delta"], v["A"], v["B"], v["C"], block.D)]
    mx.eval(args)
    mx.eval(scan(*args))
    best = None
    for _ in range(3):
        mx.synchronize()
        t0 = time.perf_counter()
        mx.eval([scan(*args) for _ in range(n)])
        mx.synchronize()
        t = (time.perf_counter() - t0) / n
        best = t if best is None else min(best, t)
    return best


def candidate_scan(path, values):
    task = ksmlx.Task(os.path.join(ROOT, "tasks", "mamba_mlx", "task.json"))
    cand = ksmlx.load(path, task, values)
    fn = ksmlx.build(cand, mx)

    def scan(x, delta, A, B, C, D):
        b, t, d = x.shape
        axes = {"batch": b, "seqlen": t, "dim": d, "dstate": 16}
        return fn([x, delta, A, B, C, D], axes, {})[0]
    return scan


def profile(block, scan, x, reps):
    """Each stage of fast_block alone (inputs evaluated beforehand), and the
    whole fast block under mx.compile: which part keeps the block from
    going faster once the scan is fast."""
    K = block.conv_kernel_size
    v = stage_inputs(block, x)
    xs0, z, xs, A, dl, B, C, delta = (v[k] for k in ("xs0", "z", "xs", "A", "dl", "B", "C", "delta"))
    y = scan(xs, delta, A, B, C, block.D)
    mx.eval(y)
    stages = {
        "in_proj": lambda v: block.in_proj(v),
        "conv1d_silu": lambda v: nn.silu(block.conv1d(mx.pad(xs0, [(0, 0), (K - 1, 0), (0, 0)]))),
        "x_proj": lambda v: block.x_proj(xs),
        "dt_proj_softplus": lambda v: nn.softplus(block.dt_proj(dl)),
        "scan": lambda v: scan(xs, delta, A, B, C, block.D),
        "swiglu_out_proj": lambda v: block.out_proj(swiglu(z, y)),
        "fast_block": fast_block(block, scan),
        "fast_block_compiled": mx.compile(fast_block(block, scan)),
    }
    if x.shape[1] <= 1024:  # tracing mlx-lm's per-token loop grows with T
        stages["mlx_lm_compiled"] = mx.compile(lambda v: block(v, None))
    out = {}
    for name, f in stages.items():
        timed(f, x)
        out[name + "_ms"] = min(timed(f, x) for _ in range(reps)) * 1e3
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--kernels", help="a module from `ksearch export --to mlx`")
    ap.add_argument("--candidate", action="append", default=[],
                    help="an MLX candidate file of tasks/mamba_mlx, its defaults or "
                         "FILE:K=V,K=V (parameter values)")
    ap.add_argument("--T", default="256,1024,4096")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--queue", type=int, default=20,
                    help="calls queued per synchronize for scan_queued_ms")
    ap.add_argument("--profile", action="store_true",
                    help="also time each stage of the fast block alone and the "
                         "fast block under mx.compile (where the time goes)")
    a = ap.parse_args()
    mx.random.seed(0)
    block = MambaBlock(block_args())
    # A_log and D as a trained model has them would differ; the shapes and
    # the work do not
    mx.eval(block.parameters())
    scans = []
    if a.kernels:
        sys.path.insert(0, os.path.dirname(os.path.abspath(a.kernels)))
        mod = __import__(os.path.splitext(os.path.basename(a.kernels))[0])
        scans.append(("exported:" + os.path.basename(a.kernels), mod.mamba_mlx))
    for p in a.candidate:
        path, _, kv = p.partition(":")
        values = dict(x.split("=", 1) for x in kv.split(",") if x) or None
        label = os.path.basename(path) + (f"[{kv}]" if kv else "")
        scans.append(("template:" + label, candidate_scan(path, values)))
    res = {"device": str(mx.default_device()), "mlx": mx.__version__,
           "shapes": "mamba-370m: hidden 1024, intermediate 2048, state 16, conv 4, "
                     "dt rank 64; batch 1; float32",
           "reps": a.reps, "results": []}
    for T in [int(t) for t in a.T.split(",")]:
        x = mx.random.normal((1, T, 1024)) * 0.5
        mx.eval(x)
        ref = block(x, None)
        mx.eval(ref)
        row = {"T": T, "kernels": []}
        fasts = []
        for label, scan in scans:
            f = fast_block(block, scan)
            try:
                got = f(x)
                mx.eval(got)
                err = mx.max(mx.abs(got - ref)).item()
                scale = mx.max(mx.abs(ref)).item()
                ok = err <= 1e-3 * max(scale, 1.0)
            except Exception as e:  # a kernel that does not compile or launch
                row["kernels"].append({"kernel": label, "error": f"{type(e).__name__}: {e}"[:500]})
                continue
            fasts.append((label, f, err, ok))
        compiled = {label: mx.compile(f) for label, f, _, _ in fasts}
        mlx_lm_t, mlx_lm_c_t = [], []
        mlx_lm_c = mx.compile(lambda v: block(v, None)) if T <= 1024 else None
        fast_t = {label: [] for label, _, _, _ in fasts}
        fast_ct = {label: [] for label, _, _, _ in fasts}
        timed(lambda v: block(v, None), x)  # warm-up
        if mlx_lm_c is not None:
            timed(mlx_lm_c, x)
        for label, f, _, _ in fasts:
            timed(f, x)
            timed(compiled[label], x)
        for _ in range(a.reps):
            mlx_lm_t.append(timed(lambda v: block(v, None), x))
            # one untimed fast call first: whichever kernel came right after
            # mlx-lm's ~1000 small ops ran slow (H200, 2026-12-04: the same
            # configuration 1.21 ms first in one call, 0.79 ms fourth in
            # another)
            if fasts:
                timed(fasts[0][1], x)
            for label, f, _, _ in fasts:
                fast_t[label].append(timed(f, x))
                fast_ct[label].append(timed(compiled[label], x))
            if mlx_lm_c is not None:
                mlx_lm_c_t.append(timed(mlx_lm_c, x))
        row["mlx_lm_ms"] = min(mlx_lm_t) * 1e3
        best_lm = row["mlx_lm_ms"]
        if mlx_lm_c_t:
            row["mlx_lm_compiled_ms"] = min(mlx_lm_c_t) * 1e3
            best_lm = min(best_lm, row["mlx_lm_compiled_ms"])
        scan_of = dict(scans)
        for label, f, err, ok in fasts:
            best = min(fast_t[label]) * 1e3
            bc = min(fast_ct[label]) * 1e3
            try:
                sq = scan_queued(scan_of[label], block, x, a.queue) * 1e3
            except Exception as e:  # extra figure: never lose the row
                sq = f"{type(e).__name__}: {e}"[:200]
            row["kernels"].append({"kernel": label, "ms": best, "max_abs_err": err,
                                   "matches_mlx_lm": ok,
                                   "speedup_vs_mlx_lm": row["mlx_lm_ms"] / best,
                                   "ms_compiled": bc,
                                   "speedup_compiled_vs_mlx_lm": row["mlx_lm_ms"] / bc,
                                   "speedup_compiled_vs_best_mlx_lm": best_lm / bc,
                                   "scan_queued_ms": sq})
        if a.profile and fasts:
            try:
                row["profile"] = profile(block, scans[0][1], x, a.reps)
            except Exception as e:  # a profile is extra: never lose the row
                row["profile"] = {"error": f"{type(e).__name__}: {e}"[:300]}
        res["results"].append(row)
        print(json.dumps(row), flush=True)
        with open(a.out, "w") as fo:
            json.dump(res, fo, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
