# ksearch: backend=mlx form=ops entry=decode_paged
# The MLX baseline of tasks/decode_paged: what an MLX user without a paged
# kernel calls today (DESIGN.md: Evaluation, device baseline), as torch's
# gather-and-SDPA anchor does: the pages of every sequence gathered into a
# contiguous [batch, heads_kv, max_pages * page_size, head_dim] cache, then
# mx.fast.scaled_dot_product_attention with a mask of each sequence's
# seq_lens[b] tokens (float32 on MLX's CPU device, whose op keeps bfloat16
# intermediates; the bfloat16 op itself on a GPU). Run by mlx/executor.py.
def decode_paged(q, k_cache, v_cache, page_table, seq_lens, batch, heads_kv, head_dim, max_pages, page_size, **_):
    t = max_pages * page_size

    def gather(cache):
        g = cache[page_table.reshape(-1)]  # [batch * max_pages, page_size, heads_kv, head_dim]
        return g.reshape(batch, t, heads_kv, head_dim).transpose(0, 2, 1, 3)

    keep = mx.arange(t)[None, :] < seq_lens[:, None]
    qq, kk, vv = q[:, :, None, :], gather(k_cache), gather(v_cache)
    cpu = mx.default_device().type == mx.cpu
    if cpu:  # as attention_prefill's baseline: float32 on MLX's CPU device
        qq, kk, vv = (a.astype(mx.float32) for a in (qq, kk, vv))
    o = mx.fast.scaled_dot_product_attention(qq, kk, vv, scale=head_dim**-0.5, mask=keep[:, None, None, :])
    return o[:, :, 0, :].astype(mx.bfloat16) if cpu else o[:, :, 0, :]
