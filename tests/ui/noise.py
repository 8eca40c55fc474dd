import warp as wp


@wp.kernel
def noise_errors(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), g: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(3)
    a = wp.noise(x[i], x[i])  # ERROR TC0203: `state` must be a generator state
    b = wp.noise(state, wp.vec3d(1.0, 2.0, 3.0))  # ERROR TC0201: `x` must be a float32 or vec2 or vec3 or vec4
    c = wp.pnoise(state, v[i], 2, 3)  # ERROR TC0407: takes one period per component of `x` (3), given 2
    d = wp.pnoise(state, x[i], 2.5)  # ERROR TC0201: period 1 must be an int
    e = wp.curlnoise(state, x[i])  # ERROR TC0201: `x` must be vec2 or vec3 or vec4
    f = wp.pnoise(state, x[i], 0)  # ERROR TC0303: period 1 must be positive

