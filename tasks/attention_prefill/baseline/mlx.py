# ksearch: backend=mlx form=ops entry=attention_prefill
# The MLX baseline of tasks/attention_prefill: mx.fast.scaled_dot_product_attention
# with the causal mask, what an MLX user calls today (DESIGN.md: Evaluation,
# device baseline); GQA by MLX's own head grouping (heads_q a multiple of
# heads_kv, q head h reads kv head h / (heads_q / heads_kv)). Run by
# mlx/executor.py.
def attention_prefill(q, k, v, head_dim, **_):
    return mx.fast.scaled_dot_product_attention(q, k, v, scale=head_dim**-0.5, mask="causal")
