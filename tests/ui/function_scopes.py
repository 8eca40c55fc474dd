import warp as wp


@wp.func
def helper(x: float):
    return x + 1.0


@wp.func
def apply(g: wp.Function, x: float):
    return g(x)  # ERROR TC0401: where that name is not the same function


def make(scale: float):
    @wp.func
    def helper(x: float):
        return x * scale

    @wp.func
    def apply_here(g: wp.Function, x: float):
        return g(x)

    @wp.kernel
    def k(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = apply_here(helper, a[i]) + apply(helper, a[i])

    return k


k3 = make(3.0)
