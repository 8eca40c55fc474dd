import warp as wp


@wp.func
def doubled(x: float):
    return x * 2.0


@wp.func
def halved(x: float):
    return x * 0.5


@wp.func
def apply(g: wp.Function, x: float):
    return g(x)


@wp.func
def scale(s: float, x: float):
    return s * x


@wp.kernel
def takes_function(g: wp.Function, a: wp.array(dtype=float)):  # ERROR TC0409: must be an array, a scalar
    a[0] = 1.0


@wp.kernel
def misuse(a: wp.array(dtype=float)):
    f = doubled
    f = halved  # ERROR TC0405: is already bound; a name bound to a function is bound once
    h = doubled
    h = 1.0  # ERROR TC0405: `h` is bound to the function `doubled` and cannot become a float32 scalar
    x = 2.0
    x = doubled  # ERROR TC0405: `x` is already bound
    k = halved
    a[0] = k  # ERROR TC0408: `k` is a function; call it
    a[1] = apply(1.5, a[2])  # ERROR TC0201: parameter `g` expects a function, got a float32 scalar
    a[2] = scale(doubled, a[3])  # ERROR TC0201: parameter `s` expects a float32 scalar, got the function `doubled`
    a[3] = apply(wp.pi, a[4])  # ERROR TC0201: parameter `g` expects a function, got a float32 scalar


TABLE = {"double": doubled, "half": halved}
CHANGED = {"double": doubled}
CHANGED["double"] = halved  # the file changes it: tilec does not read it


@wp.kernel
def tables(a: wp.array(dtype=float)):
    a[0] = wp.static(TABLE["triple"])(a[1])  # ERROR TC0305: static: `TABLE` has no item 'triple'
    a[1] = wp.static(CHANGED["double"])(a[2])  # ERROR TC0305: dict literal the file never changes


NAME = "relu"


@wp.kernel
def strings(a: wp.array(dtype=float)):
    x = NAME  # ERROR TC0401: a str constant here
    a[0] = wp.static(NAME)  # ERROR TC0401: a string from wp.static() used as a value
    if wp.static(NAME == "gelu"):
        a[1] = wp.cross(a[0], a[0])  # never checked: the arm is not compiled, as in Warp
    if wp.static(NAME + "x" == "relux"):  # ERROR TC0305: static: tilec evaluates only
        a[2] = 1.0


@wp.kernel
def gradients(a: wp.array(dtype=float)):
    a[0] = wp.grad(doubled)(a[1])  # a func's gradient: fine
    a[1] = wp.grad(wp.sqrt)(4.0)  # ERROR TC0430: wp.grad of a call tilec folds to a constant
    a[2] = wp.grad(wp.atan2)(a[0], a[1])  # ERROR TC0303: wp.grad of a function of 2 inputs gives 2 values


@wp.func
def bumped(x: wp.ref[float], s: float):
    x += s


@wp.func
def struct_ref(p: wp.ref[wp.array(dtype=float)]):  # ERROR TC0409: tilec passes a scalar, vector, matrix or tile by reference
    p[0] = 1.0


@wp.kernel
def ref_kernel(x: wp.ref[float]):  # ERROR TC0409: `wp.ref[...]` is for a func's parameters
    y = x


@wp.kernel
def ref_arguments(a: wp.array(dtype=float)):
    i = wp.tid()
    bumped(a[i], 1.0)  # an array element: copied in and written back
    bumped(a[wp.min(i, 3)], 1.0)  # ERROR TC0401: `bumped` takes this argument by reference (`wp.ref`); tilec passes a variable there
    x = a[i]
    bumped(x, 2.0)
    a[i] = x
