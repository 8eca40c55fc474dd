import warp as wp

N = 8


@wp.func
def bump(t: wp.tile(dtype=float, shape=(N,))):
    t += wp.tile_ones(shape=N, dtype=float)


@wp.func
def pull(t: wp.tile(dtype=float, shape=(N,)), u: wp.tile(dtype=float, shape=(N,))):
    t -= u * 0.5


@wp.func
def bump_twice(t: wp.tile(dtype=float, shape=(N,))):
    bump(t)
    bump(t)


@wp.func
def doubled_copy(t: wp.tile(dtype=float, shape=(N,))):
    t *= 2.0
    return t


@wp.func
def rebound(t: wp.tile(dtype=float, shape=(N,))):
    t = t * 10.0
    t += wp.tile_ones(shape=N, dtype=float)
    return t


@wp.func
def add_and_total(t: wp.tile(dtype=float, shape=(N,)), x: wp.tile(dtype=float, shape=(N,))):
    t += x * x
    return wp.tile_sum(t)


@wp.func
def load_block(x: wp.array(dtype=float), i: int):
    return wp.tile_load(x, shape=N, offset=i * N)


@wp.func
def store_block(y: wp.array(dtype=float), t: wp.tile(dtype=float, shape=(N,)), i: int):
    wp.tile_store(y, t, offset=i * N)


@wp.func
def scaled_bump(t: wp.tile(dtype=float, shape=(N,)), s: float):
    t += wp.tile_ones(shape=N, dtype=float) * s


@wp.func
def accumulate_product(a: wp.tile(dtype=float, shape=(N, N)), b: wp.tile(dtype=float, shape=(N, N)),
                       acc: wp.tile(dtype=float, shape=(N, N))):
    wp.tile_matmul(a, b, acc)


@wp.func
def both(a: wp.tile(dtype=float, shape=(N,)), b: wp.tile(dtype=float, shape=(N,))):
    a += b
    b -= a * 0.25


@wp.func
def add_into(y: wp.array(dtype=float), t: wp.tile(dtype=float, shape=(N,))):
    wp.tile_atomic_add(y, t)


@wp.func
def axpy_elem(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, i: int):
    y[i] = a * x[i] + wp.sin(x[i])


@wp.func
def row_update(r: wp.array(dtype=float), t: wp.tile(dtype=float, shape=(N,))):
    t += wp.tile_load(r, shape=N) * t


@wp.kernel
def k_bump(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = load_block(x, i)
    t2 = t * t
    bump(t2)
    store_block(y, t2, i)


@wp.kernel
def k_pull(x: wp.array(dtype=float), z: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    u = wp.tile_load(z, shape=N, offset=i * N)
    pull(t, u)
    wp.tile_store(y, t * u, offset=i * N)


@wp.kernel
def k_nested(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N) * 3.0
    bump_twice(t)
    wp.tile_store(y, t * t, offset=i * N)


@wp.kernel
def k_mul_assign_copies(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    d = doubled_copy(t)
    wp.tile_store(y, t, offset=i * N)
    wp.tile_store(z, d * t, offset=i * N)


@wp.kernel
def k_rebound(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    r = rebound(t)
    wp.tile_store(y, t * t, offset=i * N)
    wp.tile_store(z, r, offset=i * N)


@wp.kernel
def k_add_and_total(x: wp.array(dtype=float), y: wp.array(dtype=float), s: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    total = add_and_total(t, t)
    wp.tile_store(y, t, offset=i * N)
    wp.tile_store(s, total, offset=i)


@wp.kernel
def k_bump_loop(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    for k in range(3):
        t = t * t
        bump(t)
    wp.tile_store(y, t, offset=i * N)


@wp.kernel
def k_scaled_bump(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    t = wp.tile_map(wp.sin, wp.tile_load(x, shape=N, offset=i * N))
    scaled_bump(t, s)
    scaled_bump(t, s * 2.0)
    wp.tile_store(y, t * t, offset=i * N)


@wp.kernel
def k_matmul_in_func(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(N, N), storage="shared")
    b = wp.tile_load(B, shape=(N, N), storage="shared")
    acc = wp.tile_zeros(shape=(N, N), dtype=float, storage="shared")
    accumulate_product(a, b, acc)
    accumulate_product(b, a, acc)
    wp.tile_store(C, acc)


@wp.kernel
def k_both(x: wp.array(dtype=float), z: wp.array(dtype=float), y: wp.array(dtype=float), w: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(x, shape=N, offset=i * N)
    b = wp.tile_load(z, shape=N, offset=i * N)
    both(a, b)
    wp.tile_store(y, a * b, offset=i * N)
    wp.tile_store(w, b, offset=i * N)


@wp.kernel
def k_atomic_in_func(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=N, offset=i * N)
    add_into(y, wp.tile_map(wp.exp, t))


@wp.kernel
def k_simt_array_func(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    axpy_elem(x, y, a, i)


@wp.kernel
def k_view_and_ref(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=N)
    row_update(A[(i + 1) % 3], t)
    wp.tile_store(y[i], t)


@wp.kernel
def k_func_load_store(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = load_block(x, i)
    store_block(y, wp.tile_map(wp.tanh, t) * t, i)


@wp.kernel(enable_backward=False)
def k_no_backward(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = load_block(x, i)
    bump(t)
    store_block(y, t, i)


@wp.func
def softplus(x: float) -> float:
    return wp.log(1.0 + wp.exp(x))


@wp.func_grad(softplus)
def adj_softplus(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret / (1.0 + wp.exp(-x))


@wp.func
def clip_unit(x: float) -> float:
    return wp.clamp(x, -1.0, 1.0)


@wp.func_grad(clip_unit)
def adj_clip_unit(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret


@wp.func
def weighted(a: float, b: float) -> float:
    return a * wp.sin(b)


@wp.func_grad(weighted)
def adj_weighted(a: float, b: float, adj_ret: float):
    wp.adjoint[a] += wp.sin(b) * adj_ret
    wp.adjoint[b] += a * wp.cos(b) * adj_ret


@wp.kernel
def k_custom_softplus(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = softplus(x[i]) * 2.0


@wp.kernel
def k_custom_straight_through(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = clip_unit(x[i] * 3.0)


@wp.kernel
def k_custom_two_args(x: wp.array(dtype=float), z: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = weighted(x[i], z[i]) + weighted(z[i], x[i])
