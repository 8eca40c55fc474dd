import warp as wp

SIZE = len("abcd")  # a host function's result: no compile-time constant
RATIO = 3 % 0.0  # Python raises ZeroDivisionError evaluating it


@wp.kernel
def sized(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = float(SIZE)  # ERROR TC0433: `SIZE` is bound at line 3 to `len("abcd")`


@wp.kernel
def ratio(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * RATIO  # ERROR TC0433: `RATIO` is bound at line 4 to `3 % 0.0`
