import warp as wp


@wp.kernel
def spectra(x: wp.array2d(dtype=wp.vec2f), v: wp.array2d(dtype=wp.vec3), f: wp.array2d(dtype=float),
            y: wp.array(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(4, 8))
    wp.tile_fft(t)
    s = wp.tile_load(f, shape=(4, 8))
    wp.tile_fft(s)  # ERROR TC0203: tile_fft: needs a tile of complex values (wp.vec2f or wp.vec2d
    u = wp.tile_load(v, shape=(2, 4))
    wp.tile_ifft(u)  # ERROR TC0203: got a vec3f tile of shape (2, 4)
    r = wp.tile_load(y, shape=16)
    wp.tile_ifft(r)  # ERROR TC0107: tile_ifft: `inout` must be a tile of 2 or more dimensions
    w = wp.tile_zeros(shape=(2, 5000), dtype=wp.vec2d)
    wp.tile_fft(w)  # ERROR TC0111: not a power of two must be at most 4096 (as in Warp), got 5000
    wp.tile_fft(t * 2.0)  # ERROR TC0408: tile_fft: `inout` must be a variable
    wp.tile_fft(x)  # ERROR TC0303: tile_fft: `inout` must be a tile, got
