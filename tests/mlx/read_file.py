# ksearch: backend=mlx form=ops entry=softmax
# adversarial: task=softmax expect=incorrect
# Tries to open a file (the reference cache, or anything): every open fails
# inside the sandbox, so it can only return what it computes, here zeros.
def softmax(x, **_):
    try:
        open("/etc/hostname").read()
        return mx.softmax(x, axis=-1)  # it could read: the sandbox leaked
    except OSError:
        return mx.zeros_like(x)
