#!/usr/bin/env python3
"""anchors.py — the torch anchors of bench/gpu/run.sh, measured in the same
call as the searches: copy bandwidth over 1 GiB, softmax / rmsnorm /
layernorm fp32 and bf16 at 8192x8192, and PyTorch's per-step Mamba-1
selective_scan reference at b1 d1536 L1024. Times are CUDA-event medians
(triton.testing.do_bench when present: it flushes L2 between repetitions,
like ksearch's executor); prints one JSON object."""
import json
import sys

import torch
import torch.nn.functional as F

try:
    from triton.testing import do_bench
except Exception:  # pragma: no cover - fallback without triton
    do_bench = None


def bench_ms(fn, rep=200):
    if do_bench is not None:
        return float(do_bench(fn, warmup=25, rep=rep, return_mode="median"))
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    for _ in range(5):
        fn()
    ts = []
    for _ in range(20):
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def scan_ref(u, delta, A, B, C, D, z):
    """selective_scan_ref's math, one time step per iteration (PyTorch)."""
    delta = F.softplus(delta)
    b, d, L = u.shape
    h = torch.zeros(b, d, A.shape[1], device=u.device)
    dA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    dBu = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    ys = []
    for t in range(L):
        h = dA[:, :, t] * h + dBu[:, :, t]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, :, t]))
    y = torch.stack(ys, dim=2) + u * D[None, :, None]
    return y * F.silu(z)


def main():
    dev = "cuda"
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    n = 1 << 28  # floats: 1 GiB
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    ms = bench_ms(lambda: b.copy_(a))
    out["copy_gbps"] = 2 * 4 * n / (ms * 1e-3) / 1e9
    del a, b
    R = Cc = 8192
    for dt, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        x = torch.randn(R, Cc, device=dev, dtype=dt)
        w = torch.randn(Cc, device=dev, dtype=dt)
        bb = torch.randn(Cc, device=dev, dtype=dt)
        es = x.element_size()
        cases = {
            "softmax": (lambda: torch.softmax(x, -1), 2 * R * Cc * es),
            "rmsnorm": (lambda: F.rms_norm(x, (Cc,), w, 1e-6),
                        (2 * R * Cc + Cc) * es),
            "layernorm": (lambda: F.layer_norm(x, (Cc,), w, bb, 1e-5),
                          (2 * R * Cc + 2 * Cc) * es),
        }
        for k, (fn, by) in cases.items():
            t = bench_ms(fn)
            key = k if name == "fp32" else k + "_bf16"
            out[key] = {"ms": t, "gbps": by / (t * 1e-3) / 1e9,
                        "fraction_of_copy": by / (t * 1e-3) / 1e9
                        / out["copy_gbps"]}
        del x, w, bb
    torch.manual_seed(0)
    bsz, d, L, N = 1, 1536, 1024, 16
    u = torch.randn(bsz, d, L, device=dev)
    delta = torch.rand(bsz, d, L, device=dev) * 3 - 2.5
    A = -(torch.rand(d, N, device=dev) * 1.9 + 0.1)
    B = torch.randn(bsz, N, L, device=dev)
    C = torch.randn(bsz, N, L, device=dev)
    D = torch.randn(d, device=dev)
    z = torch.randn(bsz, d, L, device=dev)
    scan_ref(u, delta, A, B, C, D, z)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    ts = []
    for _ in range(3):
        s.record()
        scan_ref(u, delta, A, B, C, D, z)
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    out["selective_scan_b1_d1536_L1024_torch_per_step_ms"] = sorted(ts)[1]
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
