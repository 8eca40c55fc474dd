import warp as wp

ROOT = (-8.0) ** 0.5  # a complex number in Python


@wp.kernel
def rooted(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * ROOT  # ERROR TC0401: a complex constant here
