import warp as wp


@wp.kernel
def write_into(a: wp.indexedarray(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = b[i]  # a store into the base at idx[i]
    a[i] += 1.0  # an atomic add there
    a[i] *= 2.0  # ERROR TC0401: indexed array `a` used here


@wp.kernel
def row_view(a: wp.indexedarray2d(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = a[i, 0:1][0]  # ERROR TC0304: give 2 index(es), no slices


@wp.kernel
def sliced(a: wp.indexedarray(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = a[1:][i]  # ERROR TC0304: indexed array `a` has 1 dimension(s)


@wp.kernel
def tile_from_indexed(a: wp.indexedarray2d(dtype=float), b: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(2, 2))  # ERROR TC0401: indexed array `a` used here
    wp.tile_store(b, t)


@wp.kernel
def atomic_into(a: wp.indexedarray(dtype=float)):
    wp.atomic_add(a, 0, 1.0)
    wp.atomic_add(a, 0, 1, 1.0)  # ERROR TC0304: indexed array `a` has 1 dimension(s)
    v = a  # ERROR TC0401: indexed array `a` used here


@wp.kernel
def shape_axis(a: wp.indexedarray2d(dtype=float), b: wp.array(dtype=int)):
    b[0] = a.shape[2]  # ERROR TC0106: axis 2 is out of range for the 2-d indexed array `a`


@wp.kernel
def subscript_nd(a: wp.indexedarray2d[float]):  # ERROR TC0409: is not an annotation Warp accepts
    pass


@wp.func
def takes_indexed(a: wp.indexedarray(dtype=float)) -> float:  # ERROR TC0409: an indexed array is a kernel parameter only
    return 0.0


@wp.kernel
def fabric(a: wp.fabricarray(dtype=float)):  # ERROR TC0409: Fabric arrays
    pass


@wp.struct
class Picks:
    data: wp.indexedarray(dtype=float)
    tag: int


@wp.kernel
def struct_field_misuse(p: Picks, ps: wp.array(dtype=Picks), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = p.data[i] + ps[i].data[0] + float(p.data.shape[0])
    p.data[i] = 1.0  # a write through the indices, as Warp
    t = wp.tile_load(ps[i].data, shape=4)  # ERROR TC0401: unsupported syntax: indexed array `ps[...].data` used here
    b[0] = p.data[0, 1]  # ERROR TC0304: indexed array `p.data` has 1 dimension(s)
    b[1] = float(p.data.shape[1])  # ERROR TC0106: axis 1 is out of range for the 1-d indexed array `p.data`
    p.data = p.data  # ERROR TC0401: unsupported syntax: assignment to the indexed array field `data`
