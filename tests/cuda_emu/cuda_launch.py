"""cuda_launch.py — a CUDA template's launch lines evaluated for one case of
the emulation (tests/cuda_emu/run.sh), so that a harness launches what the
template's lines say instead of a hand-written copy of them (a rule such as
flash_decode's `when=` for its merge pass was mirrored by hand, and a copy
cannot catch a line that disagrees with its kernel).

    python3 cuda_launch.py TASK.json FILE.cu [NAME=V ...]

NAME=V are the case's axes (the task's var axes; const and derived ones are
filled in) and parameter values; parameters not given take their first
declared value, and numeric `#define NAME V` lines of the source count as
names too, as in ksearch (backend/opencl/launch.h: ks_launch_names). Prints
one line of NAME=V macros for the harness: for launch line i (file order)
L<i>_GX/GY/GZ (blocks), L<i>_BX/BY/BZ (threads per block), L<i>_SMEM and
L<i>_RUN (0 where its when= is 0), then SCRATCH (bytes, the largest
scratch=). The grammar is mlx/ksmlx.py's, which is ksearch's (numbers,
names, + - * / % ^, min max cdiv ceil floor sqrt log2); a bad line exits 2.
"""

import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "mlx"))
import ksmlx  # noqa: E402


def names_for(task_path, src_path, text, given):
    """The launch expressions' names: numeric #defines, then the params
    (given, else their first value), then the case's axes."""
    names = ksmlx.numeric_defines(text)
    for n, raw in enumerate(text.split("\n")):
        s = raw.strip()
        if s.startswith("// ksearch: param "):
            p, vals = ksmlx.param_line(s[len("// ksearch:"):].strip(), src_path, n + 1)
            v = ksmlx.number(given.get(p, vals[0]))
            if v is None:
                raise ksmlx.CandidateError(f"param {p}: {given.get(p, vals[0])} is no number")
            names[p] = v
    names.update(ksmlx.Task(task_path).case_axes(given))
    return names


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    text = open(sys.argv[2]).read()
    given = dict(a.split("=", 1) for a in sys.argv[3:])
    try:
        names = names_for(sys.argv[1], sys.argv[2], text, given)
        out, scratch, i = [], 0, 0
        for n, raw in enumerate(text.split("\n")):
            s = raw.strip()
            if not s.startswith("// ksearch: launch "):
                continue
            rest = s[len("// ksearch: launch "):].strip()
            if rest.startswith("kernel="):  # the one bare token: the name
                rest = rest.split(" ", 1)[1] if " " in rest else ""
            kv = dict(ksmlx.split_launch(rest, sys.argv[2], n + 1))
            g = ksmlx.dims(kv["grid"], names, "grid")
            b = ksmlx.dims(kv["block"], names, "block")
            smem = int(ksmlx.eval_expr(kv["smem"], names)) if "smem" in kv else 0
            run = 1 if "when" not in kv or ksmlx.eval_expr(kv["when"], names) != 0 else 0
            if "scratch" in kv:
                scratch = max(scratch, int(math.ceil(ksmlx.eval_expr(kv["scratch"], names))))
            out += [f"L{i}_G{a}={v}" for a, v in zip("XYZ", g)]
            out += [f"L{i}_B{a}={v}" for a, v in zip("XYZ", b)]
            out += [f"L{i}_SMEM={smem}", f"L{i}_RUN={run}"]
            i += 1
        if i == 0:
            raise ksmlx.CandidateError("no launch line")
        print(" ".join(out + [f"SCRATCH={scratch}"]))
    except (ksmlx.CandidateError, KeyError, ValueError) as e:
        print(f"cuda_launch: {sys.argv[2]}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
