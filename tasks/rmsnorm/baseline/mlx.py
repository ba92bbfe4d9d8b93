# ksearch: backend=mlx form=ops entry=rmsnorm
# The MLX baseline of tasks/rmsnorm: mx.fast.rms_norm, what an MLX user calls
# today (DESIGN.md: Evaluation, device baseline). Run by mlx/executor.py.
def rmsnorm(x, w, eps, **_):
    return mx.fast.rms_norm(x, w, eps)
