# ksearch: backend=mlx form=ops entry=attention_prefill
# The MLX baseline of tasks/attention_prefill: mx.fast.scaled_dot_product_attention
# with the causal mask, what an MLX user calls today (DESIGN.md: Evaluation,
# device baseline); GQA by MLX's own head grouping (heads_q a multiple of
# heads_kv, q head h reads kv head h / (heads_q / heads_kv)). Run by
# mlx/executor.py. On MLX's CPU device (CI's) the op keeps bfloat16
# intermediates and lands one rounding from the task's tolerance (an
# `incorrect` in one CI run of 2026-12-05), so there it runs in float32, as
# the task's math says; on a GPU it is the bfloat16 op itself.
def attention_prefill(q, k, v, head_dim, **_):
    if mx.default_device().type == mx.cpu:
        o = mx.fast.scaled_dot_product_attention(
            q.astype(mx.float32), k.astype(mx.float32), v.astype(mx.float32),
            scale=head_dim**-0.5, mask="causal")
        return o.astype(mx.bfloat16)
    return mx.fast.scaled_dot_product_attention(q, k, v, scale=head_dim**-0.5, mask="causal")
