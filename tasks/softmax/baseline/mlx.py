# ksearch: backend=mlx form=ops entry=softmax
# The MLX baseline of tasks/softmax: what an MLX user calls today
# (DESIGN.md: Evaluation, device baseline). Run by mlx/executor.py.
def softmax(x, **_):
    return mx.softmax(x, axis=-1, precise=True)
