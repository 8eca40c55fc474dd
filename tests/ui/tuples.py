import warp as wp


@wp.func
def takes(x: float):
    return x


@wp.kernel
def tuple_errors(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    t = (a[i], 2.0, 3)
    x = t[3]  # ERROR TC0106: index 3 is out of range for the tuple `t` of 3 values
    y = t[n]  # ERROR TC0305: a tuple's index must be a compile-time integer
    z = takes(t)  # ERROR TC0201: takes: parameter `x` expects a float32 scalar, got a tuple of (float32, float32, int32)
    w = t * 2.0  # ERROR TC0401: the tuple `t` used as a value
    t = (1.0, 2.0)  # ERROR TC0405: `t` was a tuple of (float32, float32, int32) and cannot become a tuple of (float32, float32)
    t = 1.0  # ERROR TC0405: `t` is a tuple of 3 values and cannot become a float32 scalar
    u = (a, 1.0)  # ERROR TC0401: a tuple holding a 1-d float32 array
    p, q = t  # ERROR TC0303: cannot unpack the tuple `t` of 3 values into 2 names
    s = a[i]
    s = (1.0, 2.0)  # ERROR TC0405: `s` was a float32 scalar and cannot become a tuple


@wp.func
def total(values: tuple[float, ...]):
    out = float(0.0)
    for k in range(len(values)):
        out += values[k]
    return out


@wp.kernel
def tuple_arguments(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    t = (a[i], 2.0, 3)
    for k in range(3):
        x = t[k]  # ERROR TC0305: `t[k]`: the items the loop selects are of different types (float32, int32)
    for k in range(4):
        y = t[k - 1]  # ERROR TC0305: a tuple's index must be a compile-time integer
        z = t[k]  # ERROR TC0106: index 3 (a value of the loop's `k`) is out of range for the tuple `t` of 3 values
    for k in range(2):
        k = n
        w = t[k]  # ERROR TC0305: a tuple's index must be a compile-time integer
    s = total((a[i], 1))  # ERROR TC0201: total: parameter `values` expects tuple[float32, ...], got a tuple of (float32, int32)
    t[0] = 1.0  # ERROR TC0401: assigning an item of the tuple `t` (a tuple is immutable, in Python as in Warp)


@wp.kernel
def tuple_parameter(t: tuple[float, float]):  # ERROR TC0409: kernel parameter `t` cannot be a tuple
    pass


@wp.struct
class Held:
    data: wp.array(dtype=float)
    w: float


@wp.kernel
def struct_items(h: Held, y: wp.array(dtype=float)):
    i = wp.tid()
    t = (h, 1.0)  # ERROR TC0401: a tuple holding a `Held` struct (tilec's tuples hold scalars, vectors, matrices and structs of those)
    y[i] = t[1]
