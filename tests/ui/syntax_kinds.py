import warp as wp


@wp.kernel
def unsupported(A: wp.array1d(dtype=float)):
    i = wp.tid()
    xs = [j for j in range(3)]  # ERROR TC0401: list comprehensions
    f = lambda v: v  # ERROR TC0401: lambda
    try:  # ERROR TC0401: try
        pass
    except Exception:
        pass
    with open("x") as fh:  # ERROR TC0401: with
        pass
    s = f"{i}"  # ERROR TC0401: f-strings
    d = {1: 2}  # ERROR TC0401: dicts
    g = sum(k for k in range(3))  # ERROR TC0301: unknown function `sum`
    del i  # ERROR TC0401: del
    A[i:3] = 1.0  # ERROR TC0401: slices
    for q in A:  # ERROR TC0401: only `for i in range(...)` and `for i in reversed(range(...))` loops
        pass
    raise ValueError(i)  # ERROR TC0401: raise
    t = 1.0 + (1, 2)  # ERROR TC0401: tuples here
    z = i if True else 1.5  # ERROR TC0201: float literal
    while i < 3:
        i += 1
    lst = [1, 2]  # ERROR TC0401: lists
    m = A @ A  # ERROR TC0401: the `@` operator
    w = i is None  # ERROR TC0401: `is` / `in` comparisons
    import math  # ERROR TC0401: import
