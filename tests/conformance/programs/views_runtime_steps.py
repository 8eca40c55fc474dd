"""Array slices whose step is known only when the kernel runs (`A[a:b:step]` with int parameters, as
Warp allows): forward and backward steps, negative bounds, components of a view's element written and
updated in place; the gradients reach the parent through the view."""
import warp as wp


@wp.kernel
def strided_rows(src: wp.array(dtype=float), start: int, stop: int, step: int, dst: wp.array(dtype=float)):
    i = wp.tid()
    v = src[start:stop:step]
    if i < v.shape[0]:
        dst[i] = wp.sin(v[i]) * float(v.shape[0])


@wp.kernel
def strided_components(components: wp.array(dtype=wp.vec3), source: wp.array(dtype=float),
                       start: int, stop: int, step: int):
    i = wp.tid()
    components[start:stop:step][i].x = source[i] * 2.0
    components[start:stop:step][i][1] += source[i] * source[i]


@wp.kernel
def strided_plane(src: wp.array2d(dtype=float), step: int, dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    v = src[::step, 1::step]
    if i < v.shape[0] and j < v.shape[1]:
        dst[i, j] = v[i, j] * v[i, j]
