"""ksmlx.py: MLX candidates for ksearch (DESIGN.md: Backend interface, mlx).

What it owns: reading an MLX candidate file (its `// ksearch:` or
`# ksearch:` header), evaluating its launch expressions, and turning it into
one Python callable `fn(inputs, axes, scalars) -> outputs` over mlx arrays.
The executor (executor.py) and the export (`ksearch export --to mlx`) use
this one reader, so an exported kernel launches exactly as it was measured.

Two forms:
  kernel  the body of an `mx.fast.cuda_kernel` (Linux, CUDA) or
          `mx.fast.metal_kernel` (Apple); header lines give the geometry:
            // ksearch: backend=mlx entry=NAME [kernel=cuda|metal]
            // ksearch: param TG in 256,128
            // ksearch: launch grid=(rows*TG) threadgroup=(TG) [smem=(E)]
          grid counts threads, as MLX does (1..3 dims, threadgroup the
          same count). Every declared param is a macro (`#define TG 256`
          at the top of the header, as -DNAME=V elsewhere) and every axis a
          template argument (`constexpr int cols = ...` in the body). Inputs are the task's input tensors by name, then one
          1-element array per scalar (named after it); outputs the task's
          outputs by name. A line `// ksearch: body` splits the file: text
          before it is the kernel's `header` (helpers), text after it the body.
  ops     Python over mlx ops (`# ksearch: backend=mlx form=ops entry=NAME`):
          a function NAME(**named) taking the task's inputs (mlx arrays),
          axes and scalars by name and returning the outputs (one array or a
          tuple, in the task's order). This is how the MLX baselines (what an
          MLX user calls today) are written.
"""

import ast
import json
import math
import os

DTYPES = {  # task dtype -> (numpy dtype name, mlx dtype name, bytes)
    "float32": ("float32", "float32", 4),
    "float16": ("uint16", "float16", 2),
    "bfloat16": ("uint16", "bfloat16", 2),
    "int32": ("int32", "int32", 4),
    "int64": ("int64", "int64", 8),
    "uint8": ("uint8", "uint8", 1),
}


class CandidateError(Exception):
    """The candidate's fault: a bad header, expression or output."""


class Task:
    """The parts of a task.json the executor needs: names, shapes, dtypes."""

    def __init__(self, path, t=None):
        if t is None:
            with open(path) as f:
                t = json.load(f)
        self.path = path
        self.const_axes = {k: int(v["value"]) for k, v in t["axes"].items()
                           if v.get("type") == "const"}
        self.name = t["name"]
        self.axes = list(t["axes"].keys())
        self.axis_kind = {k: v.get("type", "var") for k, v in t["axes"].items()}
        self.derived = {k: v["value"] for k, v in t["axes"].items()
                        if v.get("type") == "derived"}
        self.scalars = [(k, v["dtype"], v["value"]) for k, v in t.get("scalars", {}).items()]
        self.inputs = [(k, v["shape"], v["dtype"]) for k, v in t["inputs"].items()]
        self.outputs = [(k, v["shape"], v["dtype"]) for k, v in t["outputs"].items()]

    @classmethod
    def from_dict(cls, t):
        return cls(t.get("name", "task"), t)

    def with_derived(self, axes):
        """axes plus the derived ones (moe_routing's experts + 1), computed
        from the others as the judge computes them."""
        out = dict(axes)
        for k, e in self.derived.items():
            out[k] = int(eval_expr(e, out))
        return out

    def case_axes(self, given, defaults=None):
        """Every axis of one case: var ones from given (NAME -> value), else
        from defaults (the task's first workload, say); const ones as the
        task has them unless given; derived ones computed."""
        axes = {}
        for k in self.axes:
            kind = self.axis_kind[k]
            if kind == "derived":
                continue
            if k in given:
                axes[k] = int(given[k])
            elif kind == "const":
                axes[k] = self.const_axes[k]
            elif defaults is not None and k in defaults:
                axes[k] = int(defaults[k])
            else:
                raise CandidateError(f"axis {k} not given")
        return self.with_derived(axes)

    def shape(self, names, axes):
        return tuple(int(axes[n]) for n in names)


def parse_header(text, path):
    """Header keys, params (name -> values) and launch pairs of a candidate."""
    keys, params, launch = {}, {}, None
    body_at = None
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        s = raw.strip()
        if s.startswith("// ksearch:"):
            rest = s[len("// ksearch:"):].strip()
        elif s.startswith("# ksearch:"):
            rest = s[len("# ksearch:"):].strip()
        else:
            continue
        if rest == "body":
            body_at = i
        elif rest.startswith("param "):
            name, vals = param_line(rest, path, i + 1)
            params[name] = vals
        elif rest.startswith("launch "):
            launch = {}
            for part in split_launch(rest[len("launch "):], path, i + 1):
                k, v = part
                launch[k] = v
        else:
            for w in rest.split():
                if "=" in w:
                    k, v = w.split("=", 1)
                    keys[k] = v
    if body_at is None:
        header, body = "", text
    else:
        header, body = "\n".join(lines[:body_at]), "\n".join(lines[body_at + 1:])
    return keys, params, launch, header, body


def param_line(rest, path, line):
    """`param NAME in V1,V2,...` (after `ksearch:`) -> (NAME, [V1, ...])."""
    words = rest.split()
    if len(words) < 4 or words[2] != "in":
        raise CandidateError(f"{path}:{line}: param line must read "
                             "`param NAME in V1,V2,...`")
    return words[1], words[3].split(",")


def number(v):
    """A parameter or #define value as the launch expressions see it: int,
    else float; None when it is no number."""
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return None


def numeric_defines(text):
    """Numeric `#define NAME V` lines of a source (a best/ file has its
    parameters baked in that way): names for the launch expressions."""
    d = {}
    for line in text.split("\n"):
        w = line.split()
        if len(w) == 3 and w[0] == "#define" and number(w[2]) is not None:
            d[w[1]] = number(w[2])
    return d


def split_launch(s, path, line):
    """`grid=(a*b, c) threadgroup=(256)` -> [("grid", "a*b, c"), ...]."""
    out, i = [], 0
    while i < len(s):
        while i < len(s) and s[i] == " ":
            i += 1
        if i >= len(s):
            break
        j = s.find("=", i)
        if j < 0 or j + 1 >= len(s) or s[j + 1] != "(":
            raise CandidateError(f"{path}:{line}: launch: expected KEY=(EXPR), "
                                 f"at `{s[i:]}`")
        key, depth, k = s[i:j], 0, j + 1
        while k < len(s):
            depth += s[k] == "("
            depth -= s[k] == ")"
            if depth == 0:
                break
            k += 1
        if depth:
            raise CandidateError(f"{path}:{line}: launch: unbalanced ( in {key}")
        out.append((key, s[j + 2:k]))
        i = k + 1
    return out


_FUNCS = {"min": min, "max": max, "cdiv": lambda a, b: -(-a // b),
          "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt,
          "log2": math.log2}


def _parse(text, expr):
    try:
        return ast.parse(text.replace("^", "**"), mode="eval").body
    except SyntaxError as e:
        raise CandidateError(f"`{expr}`: not an expression ({e.msg})")


def eval_expr(expr, names, node=None):
    """A launch expression over axes and params: numbers, names, + - * / %
    ^ and the cost grammar's functions; nothing else is evaluated."""
    tree = _parse(expr, expr) if node is None else node

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in names:
                raise CandidateError(f"unknown name `{n.id}` in `{expr}`")
            return names[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b,
                   ast.Mult: lambda: a * b, ast.Div: lambda: a / b,
                   ast.Mod: lambda: a % b, ast.Pow: lambda: a ** b,
                   ast.FloorDiv: lambda: a // b}
            if type(n.op) in ops:
                try:
                    return ops[type(n.op)]()
                except (ZeroDivisionError, OverflowError) as e:
                    raise CandidateError(f"`{expr}`: {e}")
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id in _FUNCS and not n.keywords):
            return _FUNCS[n.func.id](*[ev(a) for a in n.args])
        raise CandidateError(f"`{expr}`: only numbers, names, + - * / % ^ and "
                             "min max cdiv ceil floor sqrt log2")

    return ev(tree)


def dims(expr, names, what):
    """A 1..3-dim launch tuple, each a positive integer (rounded up)."""
    tup = _parse("(" + expr + ",)", expr)
    if not isinstance(tup, ast.Tuple) or not 1 <= len(tup.elts) <= 3:
        raise CandidateError(f"{what}=({expr}): 1 to 3 dimensions")
    vals = []
    for node in tup.elts:
        v = int(math.ceil(eval_expr(expr, names, node)))
        if v < 1:
            raise CandidateError(f"{what}=({expr}) is {v} for {names}; "
                                 "each dimension must be at least 1")
        vals.append(v)
    return tuple(vals + [1] * (3 - len(vals)))


class Candidate:
    """One MLX candidate with its parameter values fixed."""

    def __init__(self, text, path, task, values=None):
        self.path, self.task = path, task
        keys, params, launch, header, body = parse_header(text, path)
        if keys.get("backend", "c") != "mlx":
            raise CandidateError(f"{path}: backend={keys.get('backend', 'c')}; "
                                 "an MLX candidate says `backend=mlx`")
        self.entry = keys.get("entry", task.name)
        self.form = keys.get("form", "kernel")
        self.kernel = keys.get("kernel", "cuda")
        if self.form not in ("kernel", "ops"):
            raise CandidateError(f"{path}: form={self.form}; use kernel or ops")
        if self.kernel not in ("cuda", "metal"):
            raise CandidateError(f"{path}: kernel={self.kernel}; use cuda or metal")
        self.values = {}
        for name, vals in params.items():
            self.values[name] = vals[0]
        for name, v in (values or {}).items():
            self.values[name] = v
        self.launch, self.header, self.body, self.text = launch, header, body, text
        if self.form == "kernel":
            if not launch or "grid" not in launch or "threadgroup" not in launch:
                raise CandidateError(f"{path}: no launch line; add `// ksearch: "
                                     "launch grid=(THREADS) threadgroup=(TG)`")
            for k in launch:
                if k not in ("grid", "threadgroup", "smem", "scratch"):
                    raise CandidateError(f"{path}: launch: unknown key {k} "
                                         "(grid, threadgroup, smem, scratch)")

    def kernel_name(self):
        """The entry plus the parameter values: MLX caches a compiled kernel
        by name (and template arguments), and the params are macros."""
        tail = "".join(f"_{k}{v}" for k, v in sorted(self.values.items()))
        return "".join(ch if ch.isalnum() or ch == "_" else "_"
                       for ch in self.entry + tail)

    def full_header(self):
        """Parameters reach the kernel as macros, as `-DNAME=V` does on the
        other backends, so that header and body (and #if) see them. KS_ARGS
        is the task's C calling convention (arrays, var axes, scalar values)
        for a body that calls a CUDA kernel kept as a __device__ function
        (`ksearch translate --to mlx`); each array goes through ks_mlx_ptr,
        which converts to the kernel's own pointer type (bfloat16 arrays
        reach a kernel that takes unsigned short bits)."""
        defs = "".join(f"#define {k} {v}\n" for k, v in sorted(self.values.items()))
        t = self.task
        args = [f"ks_mlx_ptr{{{n}}}" for n, _, _ in t.inputs + t.outputs]
        args += [a for a in t.axes if t.axis_kind[a] == "var"]
        args += [f"{n}[0]" for n, _, _ in t.scalars]
        if self.has_scratch():
            args.append("ks_mlx_ptr{ks_scratch}")
        defs += ("struct ks_mlx_ptr {\n  const void *p;\n"
                 "  template <class T> __device__ operator T *() const "
                 "{ return (T *)p; }\n};\n"
                 f"#define KS_ARGS {', '.join(args)}\n")
        # MLX appends `namespace mlx::core::cu {` right after the header,
        # on the same line when the header ends without a newline: a header
        # ending in a // comment would swallow it (the H200 run's "expected a
        # declaration" on every mamba template)
        return defs + self.header + "\n"

    def has_scratch(self):
        """A launch line's scratch=(E): E bytes the kernel gets after the
        scalars, as the cuda executor appends its scratch; in MLX one more
        output, ks_scratch (int32), filled with 0xFF bytes (init_value -1)
        as the cuda executor fills its scratch, and dropped from the
        results."""
        return bool(self.launch) and "scratch" in self.launch

    def names(self, axes):
        d = numeric_defines(self.text)
        for k, v in self.values.items():
            if number(v) is not None:
                d[k] = number(v)
        d.update({k: int(v) for k, v in axes.items()})
        return d

    def geometry(self, axes):
        n = self.names(axes)
        grid = dims(self.launch["grid"], n, "grid")
        tg = dims(self.launch["threadgroup"], n, "threadgroup")
        if tg[0] * tg[1] * tg[2] > 1024:
            raise CandidateError(f"threadgroup={tg}: at most 1024 threads")
        smem = int(eval_expr(self.launch["smem"], n)) if "smem" in self.launch else 0
        return grid, tg, smem

    def scratch_words(self, axes):
        """The scratch buffer in int32 words (0: none)."""
        if not self.has_scratch():
            return 0
        b = int(eval_expr(self.launch["scratch"], self.names(axes)))
        if b < 1:
            raise CandidateError(f"scratch=({self.launch['scratch']}) is {b} bytes; "
                                 "a scratch buffer has at least 1")
        return (b + 3) // 4


def build(cand, mx):
    """The callable fn(inputs: list, axes: dict, scalars: dict) -> list."""
    task = cand.task
    if cand.form == "ops":
        ns = {"mx": mx, "__name__": "ksearch_candidate"}
        exec(compile(cand.text, cand.path, "exec"), ns)
        f = ns.get(cand.entry)
        if not callable(f):
            raise CandidateError(f"{cand.path}: no function {cand.entry}")

        def run_ops(inputs, axes, scalars):
            named = dict(axes)
            named.update(scalars)
            named.update({t[0]: a for t, a in zip(task.inputs, inputs)})
            out = f(**named)
            return list(out) if isinstance(out, (tuple, list)) else [out]

        return run_ops
    in_names = [t[0] for t in task.inputs] + [s[0] for s in task.scalars]
    out_names = [t[0] for t in task.outputs]
    scratch = cand.has_scratch()
    if scratch:
        out_names.append("ks_scratch")
    kernels = {}

    def kernel_for(smem):
        if smem not in kernels:
            if cand.kernel == "cuda":
                kernels[smem] = mx.fast.cuda_kernel(
                    name=cand.kernel_name(), input_names=in_names,
                    output_names=out_names, source=cand.body,
                    header=cand.full_header(), shared_memory=smem)
            else:
                kernels[smem] = mx.fast.metal_kernel(
                    name=cand.kernel_name(), input_names=in_names,
                    output_names=out_names, source=cand.body,
                    header=cand.full_header())
        return kernels[smem]

    sdt = {"float32": mx.float32, "int32": mx.int32, "int64": mx.int64}
    odt = [getattr(mx, DTYPES[t[2]][1]) for t in task.outputs]
    if scratch:
        odt.append(mx.int32)
    # what a call needs besides its arrays, per (axes, scalars): evaluating
    # the launch expressions took ~100 us of Python per call, inside the
    # timed call (and inside every call of an exported kernel)
    plans = {}

    def plan(axes, scalars):
        key = (tuple(sorted(axes.items())), tuple(sorted(scalars.items())))
        p = plans.get(key)
        if p is None:
            grid, tg, smem = cand.geometry(axes)
            sc = [mx.array([scalars[s[0]]], dtype=sdt[s[1]]) for s in task.scalars]
            mx.eval(sc)
            # the axes (ints) as template arguments: constexpr in the body
            tmpl = [(k, int(v)) for k, v in axes.items()]
            shapes = [task.shape(t[1], axes) for t in task.outputs]
            if scratch:
                shapes.append((cand.scratch_words(axes),))
            p = plans[key] = (kernel_for(smem), grid, tg, sc, tmpl, shapes)
        return p

    # with a scratch: MLX fills every output with init_value (the task's
    # outputs are written anyway), and the scratch is not the task's
    fill = {"init_value": -1} if scratch else {}
    n_out = len(task.outputs)

    def run_kernel(inputs, axes, scalars):
        k, grid, tg, sc, tmpl, shapes = plan(axes, scalars)
        return k(inputs=list(inputs) + sc, template=tmpl, grid=grid, threadgroup=tg,
                 output_shapes=shapes, output_dtypes=odt, **fill)[:n_out]

    return run_kernel


def cuda_source(cand, axes):
    """The CUDA source MLX would compile for cand at these axes (its
    build_kernel: default header, header, signature, template constants,
    body), with MLX's own device header replaced by the two things a body
    may use from it; so that nvcc can check a template where no MLX GPU is
    (tests/integration/mlx.sh). No `inf`: MLX 0.32.4's default header
    (read off its libmlx.so) defines none, and a body using it failed to
    compile on the H200."""
    t = cand.task
    sig = [f"    const {CUDA_T[d]}* {n}" for n, _, d in t.inputs]
    sig += [f"    const {CUDA_T[d]}* {n}" for n, d, _ in t.scalars]
    sig += [f"    {CUDA_T[d]}* {n}" for n, _, d in t.outputs]
    if cand.has_scratch():
        sig.append("    int32_t* ks_scratch")
    consts = "".join(f"  constexpr int {k} = {int(v)};\n" for k, v in axes.items())
    return ("#include <cooperative_groups.h>\n#include <cuda/std/limits>\n"
            "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
            + cand.full_header() + "namespace mlx::core::cu {\n"
            "namespace cg = cooperative_groups;\n"
            f"__global__ void custom_kernel_{cand.kernel_name()}(\n"
            + ",\n".join(sig) + ") {\n" + consts + cand.body
            + "\n}\n} // namespace mlx::core::cu\n")


CUDA_T = {"float32": "float", "float16": "__half", "bfloat16": "__nv_bfloat16",
          "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t"}


def load(path, task, values=None):
    with open(path) as f:
        return Candidate(f.read(), path, task, values)


def device_kind(mx):
    """cuda, metal or cpu: what MLX computes on here."""
    if hasattr(mx, "cuda") and mx.cuda.is_available():
        return "cuda"
    if hasattr(mx, "metal") and mx.metal.is_available():
        return "metal"
    return "cpu"


if __name__ == "__main__":
    # `python3 ksmlx.py probe`: one JSON line saying what MLX runs on.
    import sys
    if sys.argv[1:] == ["probe"]:
        try:
            import mlx.core as mx
        except Exception as e:  # not installed: the parent says what to do
            print(json.dumps({"ok": False, "error": str(e)}))
            sys.exit(0)
        kind = device_kind(mx)
        info = {"ok": True, "version": mx.__version__, "device": kind}
        try:
            import mlx_lm  # noqa: F401
            info["mlx_lm"] = True
        except Exception:
            info["mlx_lm"] = False
        if kind != "cpu":
            try:
                info["name"] = mx.device_info().get("device_name", kind)
            except Exception:
                info["name"] = kind
        print(json.dumps(info))
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] in ("source", "geometry"):
        # `ksmlx.py source TASK.json FILE [NAME=V...]`: what MLX compiles,
        # for the first workload of the task (or NAME=V axes and params)
        task = Task(sys.argv[2])
        kv = dict(a.split("=", 1) for a in sys.argv[4:])
        with open(task.path) as f:
            axes = task.case_axes(kv, json.load(f)["workloads"][0])
        cand = load(sys.argv[3], task, {k: v for k, v in kv.items() if k not in axes})
        if sys.argv[1] == "geometry":
            # `ksmlx.py geometry ...`: the launch as CUDA sees it (blocks,
            # threads per block, dynamic shared memory bytes, scratch
            # words), as NAME=V macros for the emulation (tests/cuda_emu)
            grid, tg, smem = cand.geometry(axes)
            blocks = [(g + b - 1) // b for g, b in zip(grid, tg)]
            print(" ".join(f"MLX_G{a}={v}" for a, v in zip("XYZ", blocks)) + " " +
                  " ".join(f"MLX_T{a}={v}" for a, v in zip("XYZ", tg)) +
                  f" MLX_SMEM={smem} MLX_SCRATCH={cand.scratch_words(axes)}")
            sys.exit(0)
        sys.stdout.write(cuda_source(cand, axes))
        sys.exit(0)
    sys.exit(2)
