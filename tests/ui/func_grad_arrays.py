import warp as wp


@wp.func
def at(a: wp.array(dtype=float), n: wp.array(dtype=int), i: int):
    return a[i] * float(n[i])


@wp.func_grad(at)
def adj_at(a: wp.array(dtype=float), n: wp.array(dtype=int), i: int, adj_ret: float):
    wp.adjoint[a][i] = adj_ret  # ERROR TC0401: the adjoint of an array element is updated with += or -=
    wp.adjoint[n][i] += adj_ret  # ERROR TC0408: `wp.adjoint[a][i]` takes a floating-point array parameter


@wp.kernel
def k(a: wp.array(dtype=float), n: wp.array(dtype=int), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = at(a, n, i)
