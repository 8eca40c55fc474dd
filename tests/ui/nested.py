import warp as wp

SIZE = 16


def never_called(TILE: int):
    @wp.kernel
    def lost(a: wp.array(dtype=float)):  # warning TC0433: not compiled: nothing in this file calls `never_called`
        t = wp.tile_load(a, shape=TILE)
        wp.tile_store(a, t * 2.0)

    return lost


def runtime_only(TILE: int):
    @wp.kernel
    def dynamic(a: wp.array(dtype=float)):  # ERROR TC0433: `TILE`, a name bound in `runtime_only`, whose value tilec cannot know: `n` is not a compile-time constant
        t = wp.tile_load(a, shape=TILE)
        wp.tile_store(a, t)

    return dynamic


def host(n: int):
    return runtime_only(n)


def measured(a):
    rows = a.shape[0]

    @wp.kernel
    def from_local(x: wp.array(dtype=float)):  # ERROR TC0433: `rows = a.shape[0]` is not a compile-time constant
        t = wp.tile_load(x, shape=rows)
        wp.tile_store(x, t)

    return from_local


for width in range(SIZE // SIZE, SIZE):  # a literal range: one instance per value is fine
    pass

shapes = [4, 8]
for w in shapes:
    @wp.kernel
    def looped(a: wp.array(dtype=float)):  # ERROR TC0433: the loop `for w in shapes` is not over literal values
        t = wp.tile_load(a, shape=w)
        wp.tile_store(a, t)


def mixed(TILE: int):
    @wp.kernel
    def partly(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=(TILE,))
        wp.tile_store(a, wp.tile_reshape(t, shape=(SIZE,)))  # ERROR TC0105: tile_reshape

    return partly


fits = mixed(16)
too_small = mixed(8)


def undecided(TILE: int):
    @wp.kernel
    def some(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=TILE)
        wp.tile_store(a, t)

    return some


fixed = undecided(4)
chosen_at_run_time = undecided(SIZE if fixed else 2)  # a warning: compiled for TILE = 4 only
