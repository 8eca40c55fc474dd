import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    i = wp.tid()
    x = A[i]
    y = wp.exp(x) + wp.log(wp.abs(x) + 1.0) + wp.sin(x) * wp.cos(x) + wp.tan(x * 0.1) + wp.tanh(x)
    y += wp.sqrt(wp.abs(x)) + wp.min(x, 1.0) + wp.max(x, -1.0) + wp.clamp(x, -2.0, 2.0) + wp.floor(x) + wp.ceil(x)
    y += wp.pow(wp.abs(x), 1.5) + wp.sign(x) + wp.select(x > 0.0, 1.0, 2.0) + wp.where(x > 0.0, 1.0, 2.0)
    A[i] = y + float(i) + float(int(x))
