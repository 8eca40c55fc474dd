import warp as wp


@wp.func
def f(x: float, y: float):
    return x + y


@wp.func
def f(x: wp.vec3, y: float):
    return x * y


@wp.func
def f(x: int):
    return x * 2


@wp.kernel
def calls(a: wp.array[wp.float64], b: wp.array[wp.float64], n: wp.array[int], v: wp.array[wp.vec3]):
    i = wp.tid()
    n[i] = f(n[i])
    v[i] = f(v[i], 2.0)
    b[i] = wp.float64(f(1.0, 2.0))
    b[i] = f(a[i], 2.0)  # ERROR TC0408: no overload of `f` takes (float64, float literal)
    n[i] = f(n[i], n[i], n[i])  # ERROR TC0408: no overload of `f` takes (int32, int32, int32)
