import warp as wp

T = 16
K = T * 2
N = wp.constant(K + 8)
HALF = N // 2
SCALE = 0.5


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    t = wp.tile_load(A, shape=(2 * T,))
    u = wp.tile_load(A, shape=(HALF,))
    wp.tile_store(A, t * SCALE)
    wp.tile_store(A, u + wp.pi)
