import warp as wp

N = 8


@wp.struct
class Body:
    mass: float
    vel: wp.vec3


@wp.struct
class Holder:
    data: wp.array(dtype=float)
    tag: int


@wp.func
def lighter(a: Body, b: Body) -> Body:
    return a


@wp.kernel
def refused_ops(src: wp.array[Body], dst: wp.array[Body], f: wp.array[float]):
    t = wp.tile_load(src, shape=N)
    wp.tile_store(dst, t * 2.0)  # ERROR TC0203: `mul`: does not take a Body tile of shape (8,)
    wp.tile_store(dst, -t)  # ERROR TC0203: Warp's unary tile operators do not take struct elements
    wp.tile_store(dst, wp.tile_max(t))  # ERROR TC0203: tile_max: does not take a Body tile of shape (8,)
    o = wp.tile_ones(N, dtype=Body)  # ERROR TC0203: structs have no value for one; use tile_full
    m = wp.tile_matmul(t, t)  # ERROR TC0203: tile_matmul: does not take a Body tile of shape (8,)
    f[0] = t.mass  # ERROR TC0401: attribute `.mass` of a Body tile of shape (8,)
    wp.tile_store(f, t)  # ERROR TC0201: tile_store: `a` is a 1-d float32 array, but the other operand holds `Body` structs


@wp.kernel
def refused_updates(src: wp.array[Body], dst: wp.array[Body]):
    t = wp.tile_load(src, shape=N)
    t &= t  # ERROR TC0203: `bit_and`: does not take a Body tile of shape (8,)
    v = src[0]
    t[0] &= v  # ERROR TC0203: a bitwise in-place update does not take an element of a Body tile
    t[1] = 2.0  # ERROR TC0201: an element of a Body tile of shape (8,) is assigned a float32 scalar
    wp.tile_store(dst, t)


@wp.kernel
def refused_holders(src: wp.array[Holder], dst: wp.array[Holder]):
    t = wp.tile_load(src, shape=N)
    wp.tile_store(dst, t + t)  # ERROR TC0203: `add`: tiles of `Holder` structs, which hold arrays (data), are not supported
    h = t[0]  # ERROR TC0203: element access: tiles of `Holder` structs, which hold arrays (data), are not supported
    s = wp.tile_sum(t)  # ERROR TC0203: tile_sum: tiles of `Holder` structs


@wp.struct
class Tagged:
    flag: wp.bool
    value: float


@wp.kernel
def tagged_axes(src: wp.array2d[Tagged], dst: wp.array[Tagged]):
    t = wp.tile_load(src, shape=(2, N))
    wp.tile_store(dst, wp.tile_sum(t, axis=2))  # ERROR TC0106: tile_sum: axis 2 is out of range for a 2-d tile


@wp.func
def body_mass(a: Body, b: Body) -> float:
    return a.mass + b.mass


@wp.kernel
def refused_reductions(src: wp.array2d[Body], dst: wp.array[Body], flags: wp.array[int]):
    t = wp.tile_load(src, shape=(2, N))
    wp.tile_store(dst, wp.tile_reduce(lighter, t, axis=1))  # ERROR TC0203: Warp 1.19 reduces struct tiles whole
    wp.tile_store(dst, wp.tile_reduce(wp.add, t))  # ERROR TC0407: the function must be a @wp.func taking two `Body`
    wp.tile_store(dst, wp.tile_reduce(body_mass, t))  # ERROR TC0407: function `body_mass` must return `Body`
    wp.tile_store(dst, wp.tile_scan_inclusive(t))  # ERROR TC0203: Warp 1.19 scans float32, int32 and uint32 tiles
    while wp.tile_reduce(lighter, t)[0].mass > 0.0:  # ERROR TC0401: tile_reduce of a struct tile in a loop header
        flags[0] = 1


@wp.struct
class IndexedHolder:
    data: wp.indexedarray(dtype=float)
    tag: float


@wp.kernel
def refused_array_fields(h: Holder, ih: IndexedHolder, src: wp.array[Body], out: wp.array[float]):
    _b, lane = wp.tid()
    t = wp.tile_full(4, value=h, dtype=Holder)  # ERROR TC0203: tile_full: tiles of `Holder` structs, which hold arrays (data), are not supported by tilec here
    u = wp.tile_full(4, value=ih, dtype=IndexedHolder)  # ERROR TC0203: tile_full: tiles of `IndexedHolder` structs, which hold arrays (data), are not supported by tilec here
