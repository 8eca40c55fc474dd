import warp as wp


def make_scaled(n: int):
    scale = len("abc") * n  # a host function's result: no compile-time constant

    @wp.func
    def scaled(x: float) -> float:
        return x * float(scale)  # ERROR TC0433: `scale` is bound at line 5 to `len("abc") * n`

    return scaled


@wp.kernel
def apply(a: wp.array(dtype=float)):
    i = wp.tid()
    # two instances failing alike: one error, and no second one where their results are stored
    a[i] = wp.static(make_scaled(2))(a[i])
    a[i] = wp.static(make_scaled(3))(a[i])
