# ksearch: backend=mlx form=ops entry=softmax
# adversarial: task=softmax expect=rejected reason=forbidden
# Starts a process from inside the sandbox: the filter kills the executor.
import os


def softmax(x, **_):
    os.fork()
    return mx.softmax(x, axis=-1)
