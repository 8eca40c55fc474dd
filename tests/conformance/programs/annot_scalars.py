# Every scalar type Warp has, as array elements, kernel scalars, locals and func signatures.
import warp as wp

dt = wp.float64
it = wp.int32
Half = wp.array[wp.float16]


@wp.func
def to64(x: float) -> dt:
    return dt(x) * dt(0.5)


@wp.func
def bucket(x: float) -> int:
    return int(wp.floor(x * 2.0)) & 3


@wp.func
def positive(x: float) -> bool:
    return x > 0.0


@wp.func
def bf16_round(x: float) -> float:
    return float(wp.bfloat16(x))


@wp.kernel
def float_builtin(x: wp.array[float], y: wp.array[float], a: float):
    i = wp.tid()
    y[i] = a * x[i] + 1.0


@wp.kernel
def int_builtin(x: wp.array[float], y: wp.array[float], n: int):
    i = wp.tid()
    y[i] = x[i] * float(n + i)


@wp.kernel
def bool_builtin(x: wp.array[float], y: wp.array[float], flag: bool):
    i = wp.tid()
    if flag:
        y[i] = wp.sin(x[i])
    else:
        y[i] = wp.cos(x[i])


@wp.kernel
def wp_float32(x: wp.array[wp.float32], y: wp.array[wp.float32], a: wp.float32):
    i = wp.tid()
    y[i] = x[i] * x[i] * a


@wp.kernel
def wp_float64(x: wp.array[wp.float64], y: wp.array[wp.float64], a: wp.float64):
    i = wp.tid()
    y[i] = wp.exp(x[i] * a)


@wp.kernel
def gather_int32(x: wp.array[float], idx: wp.array[wp.int32], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[idx[i]] * 2.0


@wp.kernel
def gather_int64(x: wp.array[float], idx: wp.array[wp.int64], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[int(idx[i])] + x[i]


@wp.kernel
def uint64_elems(x: wp.array[float], seed: wp.array[wp.uint64], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * float(seed[i] % wp.uint64(7))


@wp.kernel
def int16_elems(x: wp.array[float], w: wp.array[wp.int16], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * float(w[i])


@wp.kernel
def uint16_elems(x: wp.array[float], w: wp.array[wp.uint16], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] / float(w[i] + wp.uint16(1))


@wp.kernel
def int8_elems(x: wp.array[float], w: wp.array[wp.int8], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * float(w[i] * wp.int8(2))


@wp.kernel
def uint8_elems(x: wp.array[float], w: wp.array[wp.uint8], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] + float(w[i])


@wp.kernel
def uint32_elems(x: wp.array[float], w: wp.array[wp.uint32], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * float(w[i] >> wp.uint32(1))


@wp.kernel
def bf16_cast(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = float(wp.bfloat16(x[i])) * 2.0


@wp.kernel
def bf16_arith(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    b = wp.bfloat16(x[i])
    c = b * b + wp.bfloat16(1.0)
    y[i] = float(c)


@wp.kernel
def f16_arith(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    h = wp.float16(x[i])
    y[i] = float(h * wp.float16(3.0) - h)


@wp.kernel
def f16_array(x: Half, y: wp.array[float]):
    i = wp.tid()
    y[i] = float(x[i]) * 2.0


@wp.kernel
def uint64_param(x: wp.array[float], y: wp.array[float], seed: wp.uint64):
    i = wp.tid()
    y[i] = x[i] * float((seed + wp.uint64(i)) % wp.uint64(5))


@wp.kernel
def int16_param(x: wp.array[float], y: wp.array[float], s: wp.int16):
    i = wp.tid()
    y[i] = x[i] * float(s * wp.int16(3))


@wp.kernel
def uint16_param(x: wp.array[float], y: wp.array[float], s: wp.uint16):
    i = wp.tid()
    y[i] = x[i] + float(s)


@wp.kernel
def alias_cast(x: wp.array[float], y: wp.array[dt]):
    i = wp.tid()
    y[i] = dt(x[i]) * dt(x[i])


@wp.kernel
def alias_int(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k = it(i) * it(3) + it(1)
    y[i] = x[i] * float(k)


@wp.kernel
def float_to_index(x: wp.array[float], table: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = table[bucket(x[i])] * x[i]


@wp.kernel
def elem2d(a: wp.array2d[float], b: wp.array2d[float]):
    i, j = wp.tid()
    b[i, j] = a[i, j] * float(i + 1) - a[i, j] * a[i, j]


@wp.kernel
def elem3d(a: wp.array3d[float], b: wp.array3d[float]):
    i, j, k = wp.tid()
    b[i, j, k] = wp.sin(a[i, j, k]) * float(k)


@wp.kernel
def func_ret64(x: wp.array[float], y: wp.array[dt]):
    i = wp.tid()
    y[i] = to64(x[i]) * to64(x[i])


@wp.kernel
def func_ret_bool(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    if positive(x[i]):
        y[i] = x[i] * x[i]
    else:
        y[i] = -x[i]


@wp.kernel
def annotated_locals(x: wp.array[float], y: wp.array[dt]):
    i = wp.tid()
    v = float(x[i] * 2.0)
    w = wp.float64(v)
    n = int(i + 1)
    y[i] = w * dt(n)


@wp.kernel
def bf16_func(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = bf16_round(x[i]) * x[i]
