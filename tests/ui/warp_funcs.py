import warp as wp

TILE = 8


@wp.func_native("return a[0] + b;")
def native_add(a: wp.indexedarray(dtype=float), b: float) -> float:  # a snippet takes no indexed array
    ...


@wp.func
def rebinds_in_branch(t: wp.tile(dtype=float, shape=(TILE,)), flag: int):
    if flag > 0:
        t = t * 2.0  # ERROR TC0401: `t` is a tile parameter this func updates in place
    t += wp.tile_ones(shape=TILE, dtype=float)


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    rebinds_in_branch(t, i)
    y[i] = native_add(x, 1.0)  # ERROR TC0401: `native_add` is a @wp.func_native


@wp.func
def bump(t: wp.tile(dtype=float, shape=(TILE,))):
    t += wp.tile_ones(shape=TILE, dtype=float)


@wp.kernel
def view_by_reference(A: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(4, TILE))
    bump(t[1])  # ERROR TC0401: `bump` updates this tile in place
    r = t[2]
    bump(r)
    u = t[3] * 1.0
    bump(u)


@wp.func
def square(x: float) -> float:
    return x * x


@wp.func_grad(square)
def adj_square(x: float):  # ERROR TC0408: must take the 1 parameter(s) of `square` and then the adjoint
    wp.adjoint[x] += 2.0 * x


@wp.func
def cube(x: float) -> float:
    return x * x * x


@wp.func_grad(cube)
def adj_cube(x: float, adj_ret: float):
    wp.adjoint[adj] += 3.0 * x * x * adj_ret  # ERROR TC0408: `wp.adjoint[...]` takes a floating-point parameter


@wp.kernel
def uses_grads(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = square(x[i]) + cube(x[i])
    wp.adjoint[i] += 1.0  # ERROR TC0401: `wp.adjoint[...]` outside a @wp.func_grad function
