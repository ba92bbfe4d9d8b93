# ksearch: backend=mlx form=ops entry=softmax
# adversarial: task=softmax expect=incorrect
# Returns the transposed result: the executor refuses an output whose shape
# is not the task's, naming it.
def softmax(x, **_):
    return mx.softmax(x, axis=-1).T
