import warp as wp


@wp.kernel
def noises(seed: int, x: wp.array(dtype=float), p2: wp.array(dtype=wp.vec2), p3: wp.array(dtype=wp.vec3),
           p4: wp.array(dtype=wp.vec4), o1: wp.array(dtype=float), o2: wp.array(dtype=float),
           o3: wp.array(dtype=float), o4: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    o1[i] = wp.noise(state, x[i]) + wp.pnoise(state, x[i] * 3.0, 4)
    o2[i] = wp.noise(state, p2[i]) + wp.pnoise(state, p2[i] * 2.0, 3, 5)
    o3[i] = wp.noise(state, p3[i]) * 2.0 + wp.pnoise(state, p3[i], 2, 3, 4)
    o4[i] = wp.noise(state, p4[i]) - wp.pnoise(state, p4[i], 3, 3, 2, 5)


@wp.kernel
def curls(seed: int, p2: wp.array(dtype=wp.vec2), p3: wp.array(dtype=wp.vec3), p4: wp.array(dtype=wp.vec4),
          c2: wp.array(dtype=wp.vec2), c3: wp.array(dtype=wp.vec3), c4: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    state = wp.rand_init(seed)
    c2[i] = wp.curlnoise(state, p2[i])
    c3[i] = wp.curlnoise(state, p3[i], octaves=wp.uint32(3), lacunarity=2.0, gain=0.5)
    c4[i] = wp.curlnoise(state, p4[i], wp.uint32(2), 1.5, 0.7)
