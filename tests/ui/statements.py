import warp as wp

N = 4


@wp.kernel
def bad_statements(a: wp.array[float], b: wp.array[int], n: int):
    i = wp.tid()
    t = wp.tile_zeros(shape=(N,), dtype=float)
    assert t  # ERROR TC0406: a tile cannot be a condition
    assert a  # an array parameter: the loader passes one (no error, as in Warp)
    a[i] &= 1  # ERROR TC0203: not defined for float32 operands
    a[i] *= 2.0  # read, multiply, write back (the kernel's adjoint is then refused: TC0502)
    b[i] <<= 1.5  # ERROR TC0201: float literal `right` cannot adapt to int32
    x = 1.5
    x ^= 1  # ERROR TC0203: not defined for float32 operands
    t[0] |= 1.0  # ERROR TC0203: tile_bit_or_inplace: needs an integer tile, got float32
    k = wp.static(n)  # ERROR TC0305: static: tilec evaluates only expressions of literals and constants
    m = wp.static(b.shape[0])  # ERROR TC0305: static: tilec evaluates only
    s = wp.static((N, N))  # ERROR TC0401: a tuple from wp.static() used as a value
    z = wp.static()  # ERROR TC0303: static: takes exactly one positional argument
    for q in range(n):
        w = wp.static(q * 2)  # ERROR TC0305: static: tilec evaluates only
    for q in range(2):
        w = wp.static(int(float(q) * 1.0e308 * 10.0))  # ERROR TC0305: static: tilec evaluates only
    for q in range(3):
        q = n
        w = wp.static(q * 2)  # ERROR TC0305: static: tilec evaluates only
    print(t)  # a tile prints (Warp's format); no error
    print(n, n)  # ERROR TC0401: print() of 2 values
    wp.expect_eq(n, t)  # ERROR TC0303: expect_eq: `expected` must be a scalar
    wp.expect_eq(x, wp.float64(1.0))  # ERROR TC0201: cannot mix float32 and float64
    wp.expect_near(n, 1)  # ERROR TC0203: `actual` must be a float, got int32
    v = print(x)  # ERROR TC0303: this call returns no value


@wp.kernel(enable_backward=False)
def forward_only(a: wp.array[float], c: wp.array[wp.int8]):
    i = wp.tid()
    a[i] *= 2.0
    a[i] ^= 1.0  # ERROR TC0203: not defined for float32 operands
    c[i] >>= wp.int16(1)  # ERROR TC0201: cannot mix int8 and int16
