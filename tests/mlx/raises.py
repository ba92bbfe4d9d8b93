# ksearch: backend=mlx form=ops entry=softmax
# Fails at load (a Python error in the candidate): compile_error naming it.
raise ValueError("this candidate does not load")
