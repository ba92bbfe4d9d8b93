# ksearch: backend=mlx form=ops entry=layernorm
# The MLX baseline of tasks/layernorm: mx.fast.layer_norm, what an MLX user
# calls today (DESIGN.md: Evaluation, device baseline). Run by
# mlx/executor.py.
def layernorm(x, w, b, eps, **_):
    return mx.fast.layer_norm(x, w, b, eps)
