"""@wp.func_grad on funcs taking and returning tiles: the user's adjoint (`wp.adjoint[t] += ...`
with tiles) replaces the derivative of the body, in single- and multi-lane blocks."""
import warp as wp

N = 8


@wp.func
def doubled(t: wp.tile(dtype=float, shape=(N,))):
    return t * 2.0


@wp.func_grad(doubled)
def adj_doubled(t: wp.tile(dtype=float, shape=(N,)), adj_ret: wp.tile(dtype=float, shape=(N,))):
    wp.adjoint[t] += adj_ret * 2.0


@wp.func
def mix(a: wp.tile(dtype=float, shape=(N,)), b: wp.tile(dtype=float, shape=(N,)), w: float):
    return a * w + b * b


@wp.func_grad(mix)
def adj_mix(a: wp.tile(dtype=float, shape=(N,)), b: wp.tile(dtype=float, shape=(N,)), w: float,
            adj_ret: wp.tile(dtype=float, shape=(N,))):
    wp.adjoint[a] += adj_ret * w
    wp.adjoint[b] += adj_ret * b * 2.0


@wp.func
def clipped(t: wp.tile(dtype=float, shape=(N,))):
    return wp.tile_map(wp.tanh, t)


@wp.func_grad(clipped)
def adj_clipped(t: wp.tile(dtype=float, shape=(N,)), adj_ret: wp.tile(dtype=float, shape=(N,))):
    wp.adjoint[t] += adj_ret  # straight through: not the derivative of the body, on purpose


@wp.func
def grid_scale(t: wp.tile(dtype=float, shape=(4, N))):
    return t * t


@wp.func_grad(grid_scale)
def adj_grid_scale(t: wp.tile(dtype=float, shape=(4, N)), adj_ret: wp.tile(dtype=float, shape=(4, N))):
    wp.adjoint[t] += adj_ret * t * 2.0


@wp.kernel
def double_rows(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=N)
    wp.tile_store(out[i], doubled(t) + t)


@wp.kernel
def mix_rows(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(a[i], shape=N)
    y = wp.tile_load(b[i], shape=N)
    wp.tile_store(out[i], mix(x, y, 0.75) * x)


@wp.kernel
def straight_through(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    wp.tile_store(out, clipped(t * 3.0))


@wp.kernel
def grid(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, N))
    s = wp.tile_sum(grid_scale(t))
    wp.tile_store(out, s)


@wp.func
def weighted_at(a: wp.array(dtype=float), i: int, s: float):
    return a[i] * a[i] * s


@wp.func_grad(weighted_at)
def adj_weighted_at(a: wp.array(dtype=float), i: int, s: float, adj_ret: float):
    wp.adjoint[a][i] += 5.0 * adj_ret * a[i]
    wp.adjoint[s] += adj_ret


@wp.func
def pair_dot(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), r: int):
    acc = float(0.0)
    for c in range(x.shape[1]):
        acc += x[r, c] * y[r, c]
    return acc


@wp.func_grad(pair_dot)
def adj_pair_dot(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), r: int, adj_ret: float):
    for c in range(x.shape[1]):
        wp.adjoint[x][r, c] += y[r, c] * adj_ret
        wp.adjoint[y][r, c] -= x[r, c] * adj_ret  # the wrong sign, on purpose: the rule is the user's


@wp.kernel
def weighted(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = weighted_at(a, i, 2.0) + a[i]


@wp.kernel
def row_dots(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    r = wp.tid()
    out[r] = pair_dot(x, y, r) * 0.5


@wp.func
def squared(x: float):
    return x * x


@wp.func_replay(squared)
def replay_squared(x: float):
    return x * x + 1.0  # differs from the forward on purpose: the adjoint's replay reads this value


@wp.kernel
def replayed(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = squared(a[i]) * a[i] + wp.sin(squared(a[i]))


@wp.func
def pick(a: wp.array(dtype=float), i: int):
    return a[i] * 3.0


@wp.func_replay(pick)
def replay_pick(a: wp.array(dtype=float), i: int):
    return a[i] * 3.0


@wp.kernel
def replayed_same(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = pick(a, i)
    out[i] = v * v
