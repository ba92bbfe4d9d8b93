"""executor.py: the MLX executor (DESIGN.md: Evaluation; protocol in
src/eval/exec_proto.h; backend in src/backend/mlx/).

The judge (ksearch) starts this program in place of ksearch-runner for
`--backend mlx`, with the same descriptors: 3 events (to the judge), 4
commands (from it), 5 the input memfd (mapped read-only), 6 the output memfd.
It runs one MLX candidate (ksmlx.py) on the inputs it is handed and answers
with its own timings; it holds no reference output and decides nothing.

Order: read the job, load the task, map the memfds, import MLX and set up
the device (streams, worker threads, a warm-up of the ops the baselines use,
the flush buffer), build a kernel-form candidate and take every step of a
call once per workload (MLX compiles kernels at their first use, with files
and threads; a kernel-form candidate is device code, which makes no system
call), then close the sandbox (sandbox.py), say ready, and only then load an
ops-form candidate (Python: host code, so it runs confined, as a C artifact
does). The one exception is the task's own baseline, which the parent marks
trusted: it is loaded and warmed before the sandbox too, so that the MLX ops
it calls are compiled and loaded while files can still be opened.

Probe mode (DESIGN.md: Ceiling probe): started beside a GPU candidate, the
same program runs no candidate at all; for each `probe` command it moves the
workload's bytes through device memory with MLX's own fastest copy (read
every input byte, write every output byte: an elementwise xor, plus a
reduction over what is read but not written, or a fill of what is written
but not read), after the same flush, timed like a call.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ksmlx  # noqa: E402
import sandbox  # noqa: E402

EV_FD, CMD_FD, IN_FD, OUT_FD = 3, 4, 5, 6
MAX_LINE, MAX_JOB = 4096, 1 << 20
ERR_CANDIDATE, ERR_ENV, ERR_INTERNAL = 1, 3, 7


def say(obj):
    line = json.dumps(obj, separators=(",", ":"))
    if len(line) > MAX_LINE - 2:  # a message is cut, never the protocol
        if "message" in obj:
            obj["message"] = obj["message"][:1500]
        if "fail" in obj:
            obj["fail"] = obj["fail"][:1500]
        line = json.dumps(obj, separators=(",", ":"))
    data = (line + "\n").encode()
    while data:
        n = os.write(EV_FD, data)
        data = data[n:]


def die(code, msg):
    say({"ev": "error", "code": code, "message": msg})
    os._exit(2)


class Lines:
    """Lines from the command socket, each at most `limit` bytes."""

    def __init__(self):
        self.buf = b""

    def next(self, limit):
        while b"\n" not in self.buf:
            if len(self.buf) > limit:
                return None
            chunk = os.read(CMD_FD, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line if len(line) <= limit else None


class Executor:
    def __init__(self, job, mx, np):
        self.job, self.mx, self.np = job, mx, np
        self.task = ksmlx.Task(job["task"])
        self.wls = job["workloads"]
        self.inputs = None  # mlx arrays of the prepped workload
        self.outs = None
        self.cur = -1
        self.fn = None
        self.flush = None
        self.device = ksmlx.device_kind(mx)
        import mmap
        self.in_map = mmap.mmap(IN_FD, max(job["in_size"], 4096), mmap.MAP_SHARED,
                                mmap.PROT_READ)
        self.out_map = mmap.mmap(OUT_FD, max(job["out_size"], 4096), mmap.MAP_SHARED,
                                 mmap.PROT_READ | mmap.PROT_WRITE)
        self.probe_mode = job.get("mode") == "probe"
        self.pbuf = {}  # probe mode: a device source per input size
        if self.probe_mode:  # no candidate: trusted code only
            self.trusted, self.cand = True, None
            return
        with open(job["artifact"]) as f:
            art = json.load(f)
        # the parent marks the task's own baseline (tasks/<t>/baseline/
        # mlx.py of the data folder), which runs before the sandbox closes
        self.trusted = bool(art.get("trusted_baseline"))
        self.cand = ksmlx.Candidate(art["source"], art["path"], self.task,
                                    art.get("params", {}))

    def axes(self, w):
        return {n: int(v) for n, v in zip(self.task.axes, self.wls[w]["axes"])}

    def scalars(self, w):
        return {s[0]: v for s, v in zip(self.task.scalars, self.wls[w]["scalars"])}

    def applies(self, w):
        return any(b for _, b in self.wls[w]["out"])

    def host_view(self, m, off, shape, dtype):
        npdt = self.np.dtype(ksmlx.DTYPES[dtype][0])
        n = 1
        for d in shape:
            n *= d
        return self.np.frombuffer(m, dtype=npdt, count=n, offset=off).reshape(shape)

    def to_mx(self, host, dtype):
        """An mlx array holding host's bytes, made on the device: MLX on
        CUDA keeps arrays in managed memory, and one made from a numpy
        array stays in host pages until a kernel touches it, so the first
        timed call paid the migration (32 ms for softmax at 8192x8192, in
        the candidate and the baseline alike: the H200 run of 2026-12-03).
        An exact bit copy on the device (xor 0 on the same-width unsigned
        view) leaves the array in device memory with the same bytes."""
        mx = self.mx
        width = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}[host.dtype.itemsize]
        a = mx.array(host.view(self.np.dtype(width)))
        if self.device != "cpu":
            a = mx.bitwise_xor(a, mx.array(0, dtype=a.dtype))
        return a.view(getattr(mx, ksmlx.DTYPES[dtype][1]))

    def setup_device(self):
        """What MLX starts lazily, started now: streams, worker threads, the
        allocator's first pages, the ops the baselines call."""
        mx = self.mx
        x = mx.random.normal((64, 64))
        w = mx.ones((64,))
        warm = [mx.softmax(x, axis=-1), mx.fast.rms_norm(x, w, 1e-5),
                mx.fast.layer_norm(x, w, w, 1e-5), x @ x, mx.exp(x), mx.cumsum(x, 1),
                mx.fast.scaled_dot_product_attention(
                    x.reshape(1, 1, 64, 64), x.reshape(1, 1, 64, 64),
                    x.reshape(1, 1, 64, 64), scale=0.125)]
        mx.eval(warm)
        if self.device != "cpu":
            # twice the largest L2 in sight (H200: 60 MiB); read before each
            # timed call so no kernel starts with its inputs in cache
            self.flush = mx.zeros((64 << 20,), dtype=mx.float32)
            mx.eval(self.flush)
        else:
            self.flush = self.np.ones(16 << 20, dtype=self.np.float32)
        if hasattr(mx, "synchronize"):
            mx.synchronize()

    def warm(self, run):
        """Every step of a call, once per workload, before the sandbox: MLX
        compiles kernels (its own JIT ones and a cuda_kernel) at their first
        use, with files and threads, and its allocator and libraries
        (cuBLAS) start then. run: whether the candidate itself runs (device
        code, or a trusted baseline); otherwise only prep and the copies."""
        for w in range(len(self.wls)):
            if not self.applies(w):
                continue
            self.prep(w, True)
            if run:
                self.call()
                self.collect()
            else:
                for a in self.inputs:
                    self.np.array(a.view(self.mx.uint8) if a.dtype in (
                        self.mx.float16, self.mx.bfloat16) else a)
        self.cur, self.inputs, self.outs = -1, None, None
        if self.device != "cpu":
            self.mx.synchronize()

    def build_kernel(self):
        """Kernel form: built before the sandbox; warm() runs it."""
        mx = self.mx
        if self.device == "cpu":
            die(ERR_ENV, "MLX custom kernels (mx.fast.cuda_kernel / metal_kernel) "
                "run only on a GPU, and this machine's MLX has only the CPU; run "
                "on a machine with an MLX GPU (mlx[cuda] on Linux, Apple silicon)")
        want = "cuda" if self.device == "cuda" else "metal"
        if self.cand.kernel != want:
            die(ERR_CANDIDATE, f"{self.cand.path}: kernel={self.cand.kernel}, but "
                f"MLX here runs {want} kernels")
        self.fn = ksmlx.build(self.cand, mx)

    def load_ops(self):
        self.fn = ksmlx.build(self.cand, self.mx)

    def prep(self, w, evict):
        mx = self.mx
        self.cur = w
        wl = self.wls[w]
        axes = self.axes(w)
        # MLX's CUDA allocator reuses a cached buffer of the right size
        # whatever memory it lives in, and a buffer the host has read (the
        # last call's outputs, the numpy staging of the inputs) has moved
        # to managed memory for good: an output landing in one is written
        # through page migration (~10 GB/s; 24 ms for softmax at 8192x8192
        # on the H200, candidate and baseline alike). So the cache is
        # emptied before the inputs are made and again before the call,
        # and the call's outputs come fresh from the device pool.
        self.inputs, self.outs = None, None
        gpu = self.device != "cpu"
        if gpu:
            mx.clear_cache()
        self.inputs = []
        for (name, shape, dt), (off, _) in zip(self.task.inputs, wl["in"]):
            host = self.host_view(self.in_map, off, self.task.shape(shape, axes), dt)
            self.inputs.append(self.to_mx(host, dt))
        mx.eval(self.inputs)
        if gpu:
            mx.synchronize()
            mx.clear_cache()
            # a fresh buffer from the device pool still costs its mapping
            # (both sides ran at ~585 GB/s at 8192x8192 on the H200 with the
            # cache emptied and nothing else): one device-made buffer per
            # output, made, touched and freed here, is what the call's
            # outputs reuse from the cache (same size, device memory)
            pre = [mx.zeros((nbytes,), dtype=mx.uint8) for _, (_, nbytes) in
                   zip(self.task.outputs, wl["out"]) if nbytes > 0]
            mx.eval(pre)
            mx.synchronize()
            del pre
        if evict:
            if self.device != "cpu":
                mx.eval(mx.sum(self.flush))
            else:
                self.flush += 1.0
        if self.device != "cpu":
            mx.synchronize()

    def probe(self, w, evict):
        """MLX's fastest copy of workload w's footprint: reads the input
        bytes, writes the output bytes, on the device; wall time like a
        call (eval + synchronize), after the flush when evict."""
        mx = self.mx
        wl = self.wls[w]
        ib = sum(n for _, n in wl["in"]) // 4
        ob = sum(n for _, n in wl["out"]) // 4
        src = self.pbuf.get(ib)
        if src is None:
            self.pbuf.clear()  # one workload's source at a time
            src = mx.zeros((max(ib, 1),), dtype=mx.uint32)
            mx.eval(src)
            self.pbuf[ib] = src
        if evict:
            if self.device != "cpu":
                mx.eval(mx.sum(self.flush))
            else:
                self.flush += 1.0
        if self.device != "cpu":
            mx.synchronize()
        one = mx.array(1, dtype=mx.uint32)
        t0 = time.monotonic_ns()
        if ob <= ib:
            outs = [mx.bitwise_xor(src[:ob], one)] if ob else []
            if ib > ob:
                outs.append(mx.max(src[ob:]))
        else:
            outs = [mx.bitwise_xor(src[:ib], one), mx.zeros((ob - ib,), dtype=mx.uint32)]
        mx.eval(outs)
        if self.device != "cpu":
            mx.synchronize()
        t1 = time.monotonic_ns()
        del outs  # back to the allocator's cache: the next probe reuses them
        return t1 - t0

    def warm_probe(self):
        """Every workload's probe once before the sandbox: MLX compiles its
        kernels and maps its buffers at first use."""
        for w in range(len(self.wls)):
            if self.applies(w):
                self.probe(w, True)
        self.pbuf.clear()

    def call(self):
        mx = self.mx
        t0 = time.monotonic_ns()
        outs = self.fn(self.inputs, self.axes(self.cur), self.scalars(self.cur))
        mx.eval(outs)
        if self.device != "cpu":
            mx.synchronize()
        t1 = time.monotonic_ns()
        self.outs = outs
        return t1 - t0

    def collect(self):
        """Outputs into the output memfd; inputs checked unchanged."""
        mx, np = self.mx, self.np
        wl, axes = self.wls[self.cur], self.axes(self.cur)
        outs = self.outs
        if not isinstance(outs, list) or len(outs) != len(self.task.outputs):
            return (f"returned {len(outs) if isinstance(outs, list) else 'no list of'} "
                    f"outputs; the task has {len(self.task.outputs)}")
        for (name, shape, dt), (off, nbytes), a in zip(self.task.outputs, wl["out"], outs):
            want = self.task.shape(shape, axes)
            if not isinstance(a, mx.array):
                return f"output {name} is not an mlx array"
            if tuple(a.shape) != want or a.dtype != getattr(mx, ksmlx.DTYPES[dt][1]):
                return (f"output {name} is {a.dtype} {tuple(a.shape)}; the task "
                        f"says {dt} {want}")
            if dt in ("float16", "bfloat16"):
                a = a.view(mx.uint16)
            host = np.ascontiguousarray(np.array(a)).tobytes()
            if len(host) != nbytes:
                return f"output {name}: {len(host)} bytes, expected {nbytes}"
            self.out_map[off:off + nbytes] = host
        for (name, shape, dt), (off, nbytes), a in zip(self.task.inputs, wl["in"],
                                                       self.inputs):
            if dt in ("float16", "bfloat16"):
                a = a.view(mx.uint16)
            if np.array(a).tobytes() != self.in_map[off:off + nbytes]:
                return f"modified input {name} (inputs are read-only)"
        return None


def serve(x, lines):
    while True:
        raw = lines.next(MAX_LINE)
        if raw is None:
            return 0
        c = json.loads(raw)
        cmd, cid = c.get("cmd"), c.get("id", 0)
        if cmd == "ping":
            say({"ev": "pong", "id": cid})
        elif cmd == "probe" and x.probe_mode:
            w = c.get("wl", -1)
            if not 0 <= w < len(x.wls):
                return 2
            say({"ev": "probed", "id": cid, "ns": x.probe(w, bool(c.get("evict")))})
        elif cmd == "load" and x.probe_mode:
            say({"ev": "loaded"})
        elif cmd == "load":
            if x.fn is None:
                try:
                    x.load_ops()
                except Exception as e:  # the candidate's own code
                    die(ERR_CANDIDATE, f"{x.cand.path}: {type(e).__name__}: {e}")
            say({"ev": "loaded"})
        elif cmd == "prep":
            w = c.get("wl", -1)
            if not 0 <= w < len(x.wls):
                return 2
            x.prep(w, bool(c.get("evict")))
            say({"ev": "prepped", "id": cid})
        elif cmd == "call" and x.cur >= 0 and x.fn is not None:
            ns = x.call()
            say({"ev": "ret", "id": cid, "ns": ns})
        elif cmd == "collect" and x.cur >= 0:
            try:
                fail = x.collect()
            except Exception as e:  # a candidate's odd return value
                fail = f"outputs could not be read: {type(e).__name__}: {e}"
            ev = {"ev": "collected", "id": cid}
            if fail:
                ev["fail"] = fail
            say(ev)
        elif cmd == "exit":
            return 0
        else:
            return 2  # the judge sends nothing else


def main():
    lines = Lines()
    raw = lines.next(MAX_JOB)
    if raw is None:
        die(ERR_INTERNAL, "no job on the command pipe")
    try:
        job = json.loads(raw)
    except ValueError:
        die(ERR_INTERNAL, "job is not JSON")
    if job.get("mode") not in ("candidate", "probe") or job.get("backend") != "mlx":
        die(ERR_INTERNAL, f"the MLX executor runs mlx candidates and the probe "
            f"only, not {job.get('mode')} on {job.get('backend')}")
    try:
        import numpy as np
        import mlx.core as mx
    except Exception as e:
        die(ERR_ENV, f"cannot import mlx ({e}); run scripts/setup.sh "
            "(pip install 'mlx[cpu]' mlx-lm, or mlx[cuda] on a GPU)")
    try:
        x = Executor(job, mx, np)
    except ksmlx.CandidateError as e:
        die(ERR_CANDIDATE, str(e))
    except (OSError, KeyError, ValueError) as e:
        die(ERR_INTERNAL, f"bad job: {type(e).__name__}: {e}")
    if x.cand and x.cand.form == "ops" and "mlx_lm" in x.cand.text:
        try:  # imports need files: done now, found in sys.modules later
            import mlx.nn  # noqa: F401
            import mlx_lm.models.mamba  # noqa: F401
        except Exception as e:
            die(ERR_ENV, f"cannot import mlx_lm ({e}); pip install mlx-lm")
    try:
        x.setup_device()
        if x.probe_mode:
            x.warm_probe()
        elif x.cand.form == "kernel":
            x.build_kernel()
        elif x.trusted:
            x.load_ops()
        if not x.probe_mode:
            x.warm(run=x.fn is not None)
    except ksmlx.CandidateError as e:
        die(ERR_CANDIDATE, str(e))
    except Exception as e:  # MLX's compile errors, launch refusals (ValueError)
        die(ERR_CANDIDATE, f"{x.cand.path}: {type(e).__name__}: {e}")
    err = sandbox.close(mem_limit=job["mem_limit"], cpu_limit=job["cpu_limit"],
                        gpu=x.device != "cpu")
    if err:
        die(ERR_ENV, err)
    say({"ev": "ready"})
    try:
        rc = serve(x, lines)
    except Exception as e:  # after ready: the candidate's code failed
        sys.stderr.write(f"executor: {type(e).__name__}: {e}\n")
        sys.stderr.flush()
        os._exit(1)
    os._exit(rc)  # no atexit handlers of untrusted code


if __name__ == "__main__":
    main()
