import warp as wp

ROWS = 4
N = 16


@wp.kernel
def spectrum(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i = wp.tid()
    t = wp.tile_load(x, shape=(ROWS, N), offset=(i * ROWS, 0))
    wp.tile_fft(t)
    wp.tile_store(y, t, offset=(i * ROWS, 0))


@wp.kernel
def inverse_of_doubled(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(2, 8))
    t2 = t * wp.float64(2.0)
    wp.tile_ifft(t2)
    wp.tile_store(y, t2)


@wp.kernel
def round_trip(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d), z: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(3, 32))
    wp.tile_fft(t)
    wp.tile_store(y, t)
    wp.tile_ifft(t)
    wp.tile_store(z, t)


# Its own module: Warp's CPU compiles a module's kernels for the launch's block_dim, and takes a
# length that is not a power of two only with block_dim=1.
@wp.kernel(module="unique")
def odd_length(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(2, 12))
    wp.tile_fft(t)
    wp.tile_store(y, t)


@wp.kernel
def batched3d(x: wp.array3d(dtype=wp.vec2f), y: wp.array3d(dtype=wp.vec2f)):
    t = wp.tile_load(x, shape=(2, 3, 8))
    wp.tile_ifft(t)
    wp.tile_store(y, t)
