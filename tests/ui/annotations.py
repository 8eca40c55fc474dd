import warp as wp

N = 3
dt = wp.float64
notdt = 3
Bad = wp.array[list]
n_dims = len([1, 2])


@wp.kernel
def two_dtypes(a: wp.array[float, 0]):  # ERROR TC0409: `array[T, N]`: N must be Literal[n] or an integer n from 1 to 4
    pass


@wp.kernel
def not_a_dtype(a: wp.array2d[list]):  # ERROR TC0409: not a dtype
    pass


@wp.kernel
def alias_not_a_dtype(a: wp.array(dtype=notdt)):  # ERROR TC0409: not a dtype
    pass


@wp.kernel
def five_dims(a: wp.array(dtype=float, ndim=5)):  # ERROR TC0409: arrays have 1 to 4 dimensions
    pass


@wp.kernel
def host_ndim(a: wp.array(dtype=dt, ndim=n_dims)):  # ERROR TC0409: `ndim=` must be a constant
    pass


@wp.kernel
def no_dtype(a: wp.array(ndim=N)):  # ERROR TC0409: missing `dtype=`
    pass


@wp.kernel
def fabric(a: wp.fabricarray(dtype=float)):  # ERROR TC0409: Fabric arrays (`wp.fabricarray`) are not supported
    pass


@wp.kernel
def indexed_fabric(a: wp.indexedfabricarray(dtype=float)):  # ERROR TC0409: Fabric arrays (`wp.indexedfabricarray`)
    pass


@wp.kernel
def wide_uint(a: wp.array[wp.uint128]):  # ERROR TC0409: not a dtype
    pass


@wp.kernel
def bad_alias(a: Bad):  # ERROR TC0409: unsupported type annotation
    pass


@wp.func
def func_param(a: wp.array3d[wp.vec9]):  # ERROR TC0409: not a dtype
    return 0.0


@wp.func
def returns_array(a: wp.array[float]) -> wp.array[float]:  # ERROR TC0409: a func cannot return an array
    return 1.0


@wp.func
def wrong_return(x: float) -> dt:
    return x  # ERROR TC0410: returns a float32 scalar but the function is annotated to return a float64 scalar


@wp.func
def tile_return(x: float) -> float:
    return wp.tile_zeros(shape=(4,), dtype=float)  # ERROR TC0410: annotated to return a float32 scalar


@wp.func
def bad_return_annotation(x: float) -> wp.array(ndim=2):  # ERROR TC0409: return annotation: missing `dtype=`
    return x


@wp.kernel
def kernel_returns(a: wp.array[float]) -> float:  # ERROR TC0403: a kernel cannot return a value
    pass


@wp.kernel
def mixing(a: wp.array[wp.bfloat16], b: wp.array[wp.float16], c: wp.array[wp.uint64], d: wp.array[wp.int16]):
    i = wp.tid()
    x = a[i] + b[i]  # ERROR TC0201: cannot mix
    y = c[i] + d[i]  # ERROR TC0201: cannot mix
    a[i] = 1.0 * b[i]  # ERROR TC0202: cannot store float16 into a bfloat16 array
    d[i] = wp.uint16(3)  # ERROR TC0202: cannot store uint16 into an int16 array
    wrong_return(1.0)
    tile_return(1.0)


@wp.kernel
def more_spellings(a: wp.array4d[float, int],  # ERROR TC0409: `array4d[...]` takes one dtype
                   b: wp.array1d[complex],  # ERROR TC0409: not a dtype
                   c: wp.array(dtype=bool, ndim=0)):  # ERROR TC0409: arrays have 1 to 4 dimensions
    pass
