"""@wp.func_replay on funcs returning tiles or nothing, @wp.func_replay with @wp.func_grad on one
func, and @wp.func_grad funcs under wp.tile_map. Warp 1.19's meaning, measured: the adjoint's
forward replay takes the replay func's values (its result, the tiles it updates in place), the
derivative stays the func's own (its body's, or its func_grad's); tile_map applies a func_grad
elementwise and runs the mapped func itself in the replay."""
import warp as wp

N = 8


# ---------------------------------------------------------------- a replay returning a tile


@wp.func
def cubed(t: wp.tile(dtype=float, shape=(N,))):
    return t * t * t


@wp.func_replay(cubed)
def replay_cubed(t: wp.tile(dtype=float, shape=(N,))):
    return t * t * t + wp.tile_ones(shape=N, dtype=float)  # not the forward's value: only Warp can judge


@wp.kernel
def replay_tile_result(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=N)
    c = cubed(t)
    wp.tile_store(out[i], c * c + t)


@wp.func
def centred(t: wp.tile(dtype=float, shape=(2, N))):
    m = wp.tile_sum(t) / float(2 * N)
    return t - wp.tile_broadcast(m, shape=(2, N))


@wp.func_replay(centred)
def replay_centred(t: wp.tile(dtype=float, shape=(2, N))):
    s = wp.tile_sum(t * 0.5) * 2.0
    return t - wp.tile_broadcast(s / float(2 * N), shape=(2, N))  # the same values, reached another way


@wp.kernel
def replay_tile_same(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(2, N))
    c = centred(t)
    wp.tile_store(out, c * c * 0.5)


# ---------------------------------------------------------------- replays returning nothing


@wp.func
def grow(t: wp.tile(dtype=float, shape=(N,))):
    t += t * 2.0


@wp.func_replay(grow)
def replay_grow(t: wp.tile(dtype=float, shape=(N,))):
    t += t * 5.0  # the replay's update of the caller's tile is the one the adjoint sees


@wp.kernel
def replay_in_place(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    grow(t)
    wp.tile_store(out, t * t)


@wp.func
def shift_first(t: wp.tile(dtype=float, shape=(N,)), v: float):
    t[0] = v * v


@wp.func_replay(shift_first)
def replay_shift_first(t: wp.tile(dtype=float, shape=(N,)), v: float):
    w = v
    t[0] = w * w


@wp.kernel
def replay_in_place_same(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N) * 2.0
    shift_first(t, t[3])
    wp.tile_store(out, wp.tile_map(wp.sin, t))


@wp.func
def count_visit(counter: wp.array(dtype=int), x: float):
    wp.atomic_add(counter, 0, 1)


@wp.func_replay(count_visit)
def replay_count_visit(counter: wp.array(dtype=int), x: float):
    pass  # the backward pass must not count again


@wp.kernel
def replay_side_effect(a: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    count_visit(counter, a[i])
    out[i] = a[i] * wp.exp(a[i])


# ---------------------------------------------------------------- func_replay and func_grad together


@wp.func
def squash(x: float):
    return x / (1.0 + wp.abs(x))


@wp.func_grad(squash)
def adj_squash(x: float, adj_ret: float):
    d = 1.0 + wp.abs(x)
    wp.adjoint[x] += adj_ret / (d * d)


@wp.func_replay(squash)
def replay_squash(x: float):
    return x / (1.0 + wp.abs(x))


@wp.kernel
def grad_and_replay(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = squash(a[i])
    out[i] = s * s + squash(2.0 * a[i])


@wp.func
def halve(x: float):
    return x * 0.5


@wp.func_grad(halve)
def adj_halve(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret * 4.0  # neither the body's derivative ...


@wp.func_replay(halve)
def replay_halve(x: float):
    return x * 0.25  # ... nor the body's value: both of the user's rules are visible in the gradient


@wp.kernel
def grad_and_replay_differ(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    h = halve(a[i])
    out[i] = h * h * a[i]


@wp.func
def damp(t: wp.tile(dtype=float, shape=(N,))):
    return t * 0.5


@wp.func_grad(damp)
def adj_damp(t: wp.tile(dtype=float, shape=(N,)), adj_ret: wp.tile(dtype=float, shape=(N,))):
    wp.adjoint[t] += adj_ret * 0.5


@wp.func_replay(damp)
def replay_damp(t: wp.tile(dtype=float, shape=(N,))):
    return t * 0.75  # differs on purpose


@wp.kernel
def grad_and_replay_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=N)
    d = damp(t)
    wp.tile_store(out[i], d * t)


# ---------------------------------------------------------------- func_grad under tile_map


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func_grad(softplus)
def adj_softplus(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret / (1.0 + wp.exp(-x))  # the exact derivative, written by hand


@wp.kernel
def mapped_grad(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=N)
    wp.tile_store(out[i], wp.tile_map(softplus, t) * t)


@wp.func
def hard_round(x: float):
    return wp.round(x * 4.0) * 0.25


@wp.func_grad(hard_round)
def adj_hard_round(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret  # straight through: the body's derivative is 0 almost everywhere


@wp.kernel
def mapped_straight_through(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    r = wp.tile_map(hard_round, t)
    wp.tile_store(out, r * r)


@wp.func
def blend(x: float, y: float):
    return x * y + y


@wp.func_grad(blend)
def adj_blend(x: float, y: float, adj_ret: float):
    wp.adjoint[x] += adj_ret * y
    wp.adjoint[y] += adj_ret * (x + 1.0)


@wp.kernel
def mapped_grad_binary(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    x = wp.tile_load(a, shape=(2, N))
    y = wp.tile_load(b, shape=(2, N))
    wp.tile_store(out, wp.tile_map(blend, x, wp.tile_map(wp.tanh, y)))


@wp.kernel
def mapped_grad_scalar(a: wp.array(dtype=float), w: wp.array(dtype=float), out: wp.array(dtype=float)):
    x = wp.tile_load(a, shape=N)
    wp.tile_store(out, wp.tile_map(blend, x, w[0]))  # the scalar's adjoint sums over the tile


@wp.func
def plus_one(x: float):
    return x + 1.0


@wp.func_replay(plus_one)
def replay_plus_one(x: float):
    return x + 2.0


@wp.kernel
def mapped_replay(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    p = wp.tile_map(plus_one, t)
    wp.tile_store(out, p * p)  # Warp replays tile_map with plus_one itself: the gradient is 2 (x + 1)


# ---------------------------------------------------------------- custom adjoints inside a kernel factory


def make_leaky(slope: float, TILE: int):
    @wp.func
    def leaky(x: float):
        return wp.where(x > 0.0, x, slope * x)

    @wp.func_grad(leaky)
    def adj_leaky(x: float, adj_ret: float):
        wp.adjoint[x] += adj_ret * wp.where(x > 0.0, 1.0, slope)  # the exact derivative, per binding

    @wp.func
    def boosted(t: wp.tile(dtype=float, shape=(TILE,))):
        return t * 2.0

    @wp.func_replay(boosted)
    def replay_boosted(t: wp.tile(dtype=float, shape=(TILE,))):
        return t * 2.0 + wp.tile_full(shape=TILE, value=slope, dtype=float)  # differs by the binding

    @wp.kernel
    def leaky_rows(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a[i], shape=TILE)
        b = boosted(wp.tile_map(leaky, t))
        wp.tile_store(out[i], b * b)

    return leaky_rows


leaky_small = make_leaky(0.1, 8)
leaky_wide = make_leaky(0.5, 16)


# ---------------------------------------------------------------- a replay returning a vector


@wp.func
def lifted(x: float):
    return wp.vec3(x, x * x, 1.0)


@wp.func_replay(lifted)
def replay_lifted(x: float):
    return wp.vec3(x, x * x + 1.0, 2.0)  # differs on purpose


@wp.kernel
def replay_vector(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    w = lifted(a[i])
    out[i] = wp.dot(w, w) + w[1] * a[i]


# ---------------------------------------------------------------- func_grad values the adjoint needs


@wp.func
def lift(x: float):
    return wp.vec3(x, x * x, 1.0)


@wp.func_grad(lift)
def adj_lift(x: float, adj_ret: wp.vec3):
    wp.adjoint[x] += adj_ret[0] + 2.0 * x * adj_ret[1] + 0.5 * adj_ret[2]  # the last term on purpose


@wp.kernel
def grad_vector_result(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(lift(a[i]))  # the reverse sweep needs lift's value


@wp.func
def soft_sign(x: float):
    return x / (1.0 + wp.abs(x))


@wp.func_grad(soft_sign)
def adj_soft_sign(x: float, adj_ret: float):
    d = 1.0 + wp.abs(x)
    wp.adjoint[x] += adj_ret / (d * d)


@wp.kernel
def grad_value_reused(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = soft_sign(a[i])
    out[i] = s * s * a[i]
