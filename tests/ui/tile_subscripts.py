import warp as wp


@wp.kernel
def subscripts(A: wp.array2d(dtype=float), v: wp.array(dtype=float), n: int):
    t = wp.tile_load(A, shape=(4, 6))
    a = t[4]  # ERROR TC0104: index 4 is out of range for axis 0 of the tile (4, 6)
    b = t[-5, 0]  # ERROR TC0104: index -5 is out of range for axis 0 of the tile (4, 6)
    c = t[0, 1.5]  # ERROR TC0203: tile indices must be integers
    d = t[0:n]  # ERROR TC0305: tile slice bounds must be compile-time integers
    e = t[0:2.0]  # ERROR TC0305: this one is a float
    f = t[4:]  # ERROR TC0104: the slice is empty on axis 0 of the tile (4, 6)
    g = t[::0]  # ERROR TC0303: slice step must not be zero
    h = t[0, 0, 0]  # ERROR TC0304: 3 indices for a tile of shape (4, 6)
    t[1] = wp.tile_ones(shape=4, dtype=float)  # ERROR TC0101: to a slice of shape (6,) of the float32 tile (4, 6)
    t[::2] = wp.tile_ones(shape=(2, 6), dtype=float)  # ERROR TC0401: assignment to a strided tile slice
    t[1] += wp.tile_ones(shape=6, dtype=float)  # ERROR TC0401: `+=`/`-=` on a tile slice
    i = wp.tile_view(t, offset=(1, slice(0, 6, 2)), shape=(3,))  # ERROR TC0401: takes the tile and the offset only
    j = wp.tile_view(t, offset=(4, 0), shape=(2, 6))  # ERROR TC0104: exceeds the tile (4, 6)
    k = wp.tile_view(t, offset=(1.0, 0))  # ERROR TC0203: offset coordinates must be integers


@wp.kernel
def aliasing(A: wp.array2d(dtype=float), v: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(4, 6))
    r = t[1]
    r[0] = 100.0
    s = wp.tile_view(t, offset=(2,))
    t[2, 0] = 5.0
    wp.tile_store(v, s)
    e = t[::2]
    e[0, 0] = 1.0  # ERROR TC0401: `e` is a view of `t`; in Warp writing into it also changes `t`
    j = 1
    w = t[j]
    j = 2
    w[0] = 1.0  # ERROR TC0401: `w` is a view of `t`
    k = 0
    u = t[k]
    k = 3
    t[0, 0] = 3.0
    wp.tile_store(v, u)  # ERROR TC0401: `u` is a view of `t`, which changed at line 40


@wp.kernel
def assign_float_offset(A: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(4, 6))
    wp.tile_assign(t, wp.tile_ones(shape=(1, 6), dtype=float), offset=(0.5, 0))  # ERROR TC0203: offset coordinates must be integers
