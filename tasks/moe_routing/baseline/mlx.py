# ksearch: backend=mlx form=ops entry=moe_routing
# The MLX baseline of tasks/moe_routing: the composition an MLX user writes
# today (DESIGN.md: Evaluation, device baseline), as torch's anchor is
# softmax, topk, argsort and bincount: softmax over experts, a stable argsort
# of the negated logits for the top k (ties to the lower expert), the chosen
# probabilities renormalized, a scatter-add for the per-expert counts and
# their prefix sums, and a stable argsort of the flat ids for `sorted`. The
# order of ties rests on MLX's argsort being stable (it is on the CPU; a
# device whose sort is not fails this baseline loudly, never quietly). Run
# by mlx/executor.py.
def moe_routing(logits, tokens, experts, topk, **_):
    p = mx.softmax(logits, axis=-1, precise=True)
    ids = mx.argsort(-logits, axis=-1)[:, :topk].astype(mx.int32)
    w = mx.take_along_axis(p, ids, axis=-1)
    w = w / w.sum(axis=-1, keepdims=True)
    flat = ids.reshape(-1)
    counts = mx.zeros((experts,), dtype=mx.int32).at[flat].add(1)
    offsets = mx.concatenate([mx.zeros((1,), dtype=mx.int32), mx.cumsum(counts)])
    order = mx.argsort(flat).astype(mx.int32)
    return w, ids, offsets, order
