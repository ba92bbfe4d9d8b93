# ksearch: backend=mlx form=ops entry=mamba_mlx
# The MLX baseline of tasks/mamba_mlx: the SSM loop of mlx-lm's MambaBlock
# (mlx_lm.models.mamba, MambaBlock.ssm_step and _process_sequence), one
# step per token with the same MLX ops, from the point where delta, B and C
# are projected (delta through softplus) to y before the gate. ssm_step
# itself cannot be called here: it projects x first. bench/gpu/mlx.sh
# times the whole MambaBlock as mlx-lm has it.
def mamba_mlx(x, delta, A, B, C, D, seqlen, **_):
    state = None
    ys = []
    for t in range(seqlen):
        xt, dt = x[:, t], delta[:, t]
        new_state = mx.expand_dims(dt * xt, -1) * mx.expand_dims(B[:, t], 1)
        if state is not None:
            new_state += state * mx.exp(mx.expand_dims(dt, -1) * A)
        y = (new_state @ mx.expand_dims(C[:, t], -1)).squeeze(2)
        ys.append(y + D * xt)
        state = new_state
    return mx.stack(ys, axis=1)
