import warp as wp


@wp.func
def make_arr():
    arr = wp.zeros(shape=2, dtype=int)
    r = arr[0:1]
    return r  # ERROR TC0401: returning `r`, this func's local array (or a view of one)


@wp.func
def take(a: wp.array(dtype=float)):
    return a[0]


@wp.kernel
def k(out: wp.array(dtype=float), n: int):
    x = take(wp.zeros(shape=3, dtype=float))  # ERROR TC0401: which is bound to a name
    b = wp.zeros(shape=(n,), dtype=float)  # ERROR TC0108: `shape` must be a compile-time constant shape
    c = wp.zeros(shape=(100000,), dtype=wp.vec4)  # ERROR TC0111: takes 1600000 bytes of the thread's stack
    d = wp.zeros(shape=(2,), dtype=float)[0]  # ERROR TC0401: which is bound to a name
    e = make_arr()
