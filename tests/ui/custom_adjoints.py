import warp as wp

N = 8


@wp.func
def scale(x: float) -> float:
    return x * 3.0


@wp.func_grad(scale)
def adj_scale(x: float, adj_ret: float):
    wp.adjoint[x] += 3.0 * adj_ret


@wp.func_grad(scale)
def adj_scale_again(x: float, adj_ret: float):  # ERROR TC0408: a second @wp.func_grad for `scale`
    wp.adjoint[x] += adj_ret


@wp.func_grad(missing)  # ERROR TC0408: @wp.func_grad names `missing`, which is not a @wp.func
def adj_missing(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret


@wp.func_replay  # ERROR TC0408: @wp.func_replay takes the name of one @wp.func
def replay_nothing(x: float):
    return x


@wp.func
def grown(t: wp.tile(dtype=float, shape=(N,))):
    return t * 2.0


@wp.func_replay(grown)
def replay_grown(t: wp.tile(dtype=float, shape=(N,))):  # ERROR TC0408: must return what `grown` returns
    return wp.tile_sum(t)


@wp.func
def bump(t: wp.tile(dtype=float, shape=(N,))):
    t += wp.tile_ones(shape=N, dtype=float)


@wp.func_replay(bump)
def replay_bump(t: wp.tile(dtype=float, shape=(N,)), extra: float):  # ERROR TC0408: must take the 1 parameter(s)
    t += wp.tile_ones(shape=N, dtype=float)


@wp.func
def squeeze(t: wp.tile(dtype=float, shape=(N,))):
    return t * 0.5


@wp.func_grad(squeeze)
def adj_squeeze(t: wp.tile(dtype=float, shape=(N,))):  # ERROR TC0408: must take the 1 parameter(s) of `squeeze`
    wp.adjoint[t] += t


@wp.func
def reset(t: wp.tile(dtype=float, shape=(N,))):
    t *= 0.0


@wp.func_replay(reset)
def replay_reset(t: wp.tile(dtype=float, shape=(N,))):  # ERROR TC0408: must return what `reset` returns
    return t


@wp.func
def twice(x: float) -> float:
    return x * 2.0


@wp.func_grad(twice)
def adj_twice(x: int, adj_ret: float):  # ERROR TC0408: parameter `x` is an int32 scalar, but `twice` gives
    wp.adjoint[x] += 2.0 * adj_ret


@wp.kernel
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    bump(t)
    reset(t)
    wp.tile_store(out, grown(t) + squeeze(t) * scale(twice(1.0)))


@wp.func_replay(k)  # ERROR TC0408: @wp.func_replay names `k`, which is a kernel
def replay_k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    pass


def make(S: int):
    @wp.func
    def inner(x: float):
        return x * float(S)

    @wp.func_grad(inner_typo)  # ERROR TC0408: names `inner_typo`, which is not a @wp.func defined beside it
    def adj_inner(x: float, adj_ret: float):
        wp.adjoint[x] += adj_ret

    @wp.kernel
    def nk(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = inner(a[i])

    return nk


nk4 = make(4)


def setup():
    @wp.func_grad(scale)
    def adj_scale_late(x: float, adj_ret: float):  # ERROR TC0408: is a custom adjoint defined inside `setup` beside no kernel
        wp.adjoint[x] += adj_ret
