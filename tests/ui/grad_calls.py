import warp as wp


@wp.func
def looped(x: float):
    s = float(1.0)
    for k in range(3):
        s = s * x + float(k)  # the gradient needs the s each iteration overwrites
    return s


@wp.func
def fine(x: float, n: int):
    return x * x * float(n)


@wp.kernel
def k(x: wp.array(dtype=float), a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.grad(looped)(x[i])  # ERROR TC0430: wp.grad of `looped`: its gradient needs values a loop overwrites
    g, dn = wp.grad(fine)(x[i], 3)  # an int input's gradient: 0, as in Warp
    a[i] += g + float(dn)
