"""mlx_probe.py — the MLX executor's probe mode (DESIGN.md: Ceiling probe),
driven over the executor protocol (src/eval/exec_proto.h) the way the judge
drives it beside a GPU candidate: job (mode probe, no candidate), ready,
load, probes, exit. The judge starts it only on a GPU; here it runs on
MLX's CPU device, which is enough to check the protocol and that a probe
moves the bytes it is asked to (a 64 MiB footprint takes far longer than a
64 KiB one). Prints "ok ..." / "FAIL ..." lines; exit 1 on a failure.
Usage: python3 mlx_probe.py ROOT"""
import json
import os
import select
import subprocess
import sys

root = sys.argv[1]
fails = 0


def check(what, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + detail))
    fails += 0 if cond else 1


KI, MI = 1 << 10, 1 << 20
# two workloads of rmsnorm's shape (x [rows, cols] in, y out; w [cols] in)
wls = []
off_in = off_out = 4096
# on a GPU the large one is 1 GiB each way: a call's fixed cost there
# (~0.05-0.13 ms on the H200 with MLX 0.32.4) exceeds moving 64 MiB
try:
    import mlx.core as _mx
    _gpu = _mx.cuda.is_available() or _mx.metal.is_available()
except Exception:
    _gpu = False
for rows, cols in ((16, 512), (32768, 8192) if _gpu else (2048, 8192)):
    xb, wb, yb = rows * cols * 4, cols * 4, rows * cols * 4
    wls.append({"axes": [rows, cols], "scalars": [1e-5],
                "in": [[off_in, xb], [off_in + xb + 4096, wb]],
                "out": [[off_out, yb]]})
    off_in += xb + wb + 8192
    off_out += yb + 4096
in_size, out_size = off_in + 4096, off_out + 4096
fin = os.memfd_create("ks-in")
os.ftruncate(fin, in_size)
fout = os.memfd_create("ks-out")
os.ftruncate(fout, out_size)
ev_r, ev_w = os.pipe()
cmd_r, cmd_w = os.pipe()
job = {"mode": "probe", "backend": "mlx", "artifact": "/nonexistent/artifact",
       "task": os.path.join(root, "tasks/rmsnorm/task.json"), "threads": 2,
       "mem_limit": 8 << 30, "cpu_limit": 600.0, "in_size": in_size,
       "out_size": out_size, "evict": "none", "landlock": False, "gpu": False,
       "workloads": wls}


# moved above 3..6 first, so that placing them there clobbers none
high = [os.dup2(fd, 20 + i) for i, fd in enumerate((ev_w, cmd_r, fin, fout))]


def child_fds():
    for i, fd in enumerate(high):
        os.dup2(fd, 3 + i)


p = subprocess.Popen([sys.executable, "-B", os.path.join(root, "mlx/executor.py")],
                     pass_fds=(3, 4, 5, 6), preexec_fn=child_fds,
                     stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
for fd in high + [ev_w, cmd_r]:
    os.close(fd)
buf = b""


def send(obj):
    os.write(cmd_w, (json.dumps(obj) + "\n").encode())


def event(timeout=120):
    global buf
    while b"\n" not in buf:
        r, _, _ = select.select([ev_r], [], [], timeout)
        if not r:
            return None
        chunk = os.read(ev_r, 65536)
        if not chunk:
            return None
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return json.loads(line)


send(job)
ev = event()
check("probe mode starts without a candidate and says ready", ev == {"ev": "ready"}, str(ev))
send({"cmd": "load"})
ev = event()
check("load in probe mode: loaded (nothing of the candidate is loaded)", ev == {"ev": "loaded"}, str(ev))
small, large = [], []
for i in range(6):
    w = i % 2
    send({"cmd": "probe", "id": 10 + i, "wl": w, "evict": True, "nt": False})
    ev = event()
    ok = isinstance(ev, dict) and ev.get("ev") == "probed" and ev.get("id") == 10 + i \
        and set(ev) == {"ev", "id", "ns"} and ev["ns"] > 0
    if not ok:
        check("probe %d answered with probed and its time" % i, False, str(ev))
        break
    (large if w else small).append(ev["ns"])
if len(small) == 3 and len(large) == 3:
    check("every probe answered with probed, its id and a time", True)
    # 64 MiB (1 GiB on a GPU) read and written against 32 KiB + 32 KiB
    check("a probe moves the footprint it is asked to (%d MiB: %.2f ms, 32 KiB: %.3f ms)"
          % (32768 * 8192 * 4 >> 20 if _gpu else 64, min(large) / 1e6, min(small) / 1e6),
          min(large) > (3 if _gpu else 10) * min(small),
          "%s %s" % (small, large))
send({"cmd": "call", "id": 20})
try:
    rc = p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    rc = None
check("a probe-mode executor refuses to run a candidate (exit 2)", rc == 2,
      "rc %s: %s" % (rc, p.stderr.read()[-500:].decode(errors="replace")))
sys.exit(1 if fails else 0)
