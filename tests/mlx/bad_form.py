# ksearch: backend=mlx form=bogus entry=softmax
def softmax(x, **_):
    return x
