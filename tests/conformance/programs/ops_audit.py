import warp as wp

R = 4
C = 6
N = 4
N2 = 8


@wp.kernel
def extremes(x: wp.array2d(dtype=float), full: wp.array1d(dtype=float)):
    t = wp.tile_load(x, shape=(R, C))
    both = wp.tile_max(t) + wp.tile_min(t) * 2.0
    wp.tile_store(full, both)


@wp.kernel
def arg_extremes(x: wp.array2d(dtype=float), full: wp.array1d(dtype=int)):
    t = wp.tile_load(x, shape=(R, C))
    wp.tile_store(full, wp.tile_argmax(t))
    wp.tile_store(full, wp.tile_argmin(t), offset=1)


@wp.kernel
def scan_exclusive(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(R, C))
    wp.tile_store(y, wp.tile_scan_exclusive(t * t))


@wp.kernel
def scan_extremes(x: wp.array1d(dtype=float), hi: wp.array1d(dtype=float), lo: wp.array1d(dtype=float)):
    s = wp.tile_load(x, shape=16)
    t = s * s - s * 6.5  # from 0, 1, ..., 13: values apart by 0.5 or more, no near ties for the FD steps
    wp.tile_store(hi, wp.tile_scan_max_inclusive(t))
    wp.tile_store(lo, wp.tile_scan_min_inclusive(t))


@wp.kernel
def cholesky_lower(m: wp.array2d(dtype=wp.float64), y: wp.array1d(dtype=wp.float64), factor: wp.array2d(dtype=wp.float64),
                   x: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(m, shape=(N, N2))
    spd = wp.tile_matmul(a, wp.tile_transpose(a))
    L = wp.tile_cholesky(spd)
    wp.tile_store(factor, L)
    b = wp.tile_load(y, shape=N)
    wp.tile_store(x, wp.tile_lower_solve(L, b))


@wp.kernel
def cholesky_inplace(m: wp.array2d(dtype=wp.float64), y: wp.array1d(dtype=wp.float64), z: wp.array1d(dtype=wp.float64),
                     factor: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(m, shape=(N, N2))
    spd = wp.tile_matmul(a, wp.tile_transpose(a))
    wp.tile_cholesky_inplace(spd)
    b = wp.tile_load(y, shape=N)
    wp.tile_lower_solve_inplace(spd, b)
    wp.tile_store(z, b)
    wp.tile_store(factor, spd)


@wp.kernel
def cholesky_upper(m: wp.array2d(dtype=wp.float64), factor: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(m, shape=(N, N2))
    spd = wp.tile_matmul(a, wp.tile_transpose(a))
    U = wp.tile_cholesky(spd, fill_mode="upper")
    wp.tile_store(factor, U)


@wp.kernel
def solves(m: wp.array2d(dtype=wp.float64), y: wp.array1d(dtype=wp.float64), d: wp.array1d(dtype=wp.float64),
           x: wp.array1d(dtype=wp.float64), w: wp.array1d(dtype=wp.float64), v: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(m, shape=(N, N2))
    spd = wp.tile_diag_add(wp.tile_matmul(a, wp.tile_transpose(a)), wp.tile_load(d, shape=N))
    L = wp.tile_cholesky(spd)
    b = wp.tile_load(y, shape=N)
    wp.tile_store(x, wp.tile_cholesky_solve(L, b))
    wp.tile_store(w, wp.tile_upper_solve(wp.tile_transpose(L), b))
    c = wp.tile_load(y, shape=N)
    wp.tile_cholesky_solve_inplace(L, c)
    wp.tile_upper_solve_inplace(wp.tile_transpose(L), c)
    wp.tile_store(v, c)


@wp.kernel
def layout(x: wp.array2d(dtype=float), idx: wp.array1d(dtype=int), many: wp.array1d(dtype=int),
           picked: wp.array1d(dtype=float),
           placed: wp.array2d(dtype=float), scattered: wp.array2d(dtype=float), added: wp.array2d(dtype=float),
           flat: wp.array1d(dtype=float), filled: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(R, C))
    picked[0] = t[1, 2] * 3.0
    picked[1] = wp.tile_extract(t, 3, 5)
    big = wp.tile_zeros(shape=(6, C), dtype=float)
    wp.tile_assign(big, t * 2.0, offset=(1, 0))
    wp.tile_store(placed, big)
    i = wp.tile_load(idx, shape=R)
    wp.tile_store_indexed(scattered, i, t, axis=0)
    wp.tile_atomic_add_indexed(added, wp.tile_load(many, shape=R), t * t, axis=0)
    row = wp.tile_view(t, offset=(2, 0), shape=(1, C))
    wp.tile_store(flat, wp.tile_squeeze(row))
    e = wp.tile_empty(shape=(R, C), dtype=float)  # every element written before it is read
    wp.tile_assign(e, t * t)
    wp.tile_store(filled, e)
