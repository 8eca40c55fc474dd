import warp as wp


@wp.func
def three(a: float, b: float, c: float) -> float:
    return a * b + c


@wp.kernel
def starred_errors(a: wp.array(dtype=float), b: wp.array2d(dtype=float), n: int):
    i = wp.tid()
    x = a[i]
    v = wp.vec3(x, 2.0, 3.0)
    t = (x, 1.0, 2.0)
    y = three(*t)  # a tuple's items: accepted
    z = three(*(x, *v[:2]))  # a tuple display, nested: accepted
    e1 = wp.vec3(*x)  # ERROR TC0203: `*` unpacks a vector, a quaternion, a transform, a matrix, a tuple or a constant slice of a 1-d array, not a float32 scalar
    e2 = wp.vec3(*a)  # ERROR TC0203: not a 1-d float32 array
    e3 = wp.vec3(*a[:n])  # ERROR TC0305: `*` of an array slice needs compile-time integer bounds and step
    e4 = wp.vec3(*a[1:])  # ERROR TC0305: needs its upper bound
    e5 = wp.vec3(*a[:-1])  # ERROR TC0305: cannot be negative
    e6 = wp.vec3(*b[0, 0:3])  # ERROR TC0203: `*` unpacks a slice of a 1-d array
    e7 = wp.vec3(*v[3:])  # ERROR TC0104: the slice is empty
    e8 = wp.vec4(*v)  # ERROR TC0303: takes 4 components, got 3
    e9 = three(*v, 1.0)  # ERROR TC0408: three: expects 3 argument(s), got 4
    e10 = wp.vec3(*(v if x > 0.0 else v * 2.0))  # the condition's value: evaluated once, accepted
    e11 = x if x > 0.0 else three(*wp.normalize(v))  # ERROR TC0401: `*` of a value computed here
    e13 = three(*t[3:], 1.0, 2.0, 3.0)  # ERROR TC0303: `*` of an empty sequence
    e12 = wp.vec3(**v)  # ERROR TC0401: `**` argument unpacking
