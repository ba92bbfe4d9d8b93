# ksearch: backend=mlx form=ops entry=gemm_bf16
# The MLX baseline of tasks/gemm_bf16: mx.matmul on bfloat16 (cuBLAS on an
# NVIDIA GPU), what an MLX user calls today (DESIGN.md: Evaluation, device
# baseline). Run by mlx/executor.py.
def gemm_bf16(a, b, **_):
    return a @ b
