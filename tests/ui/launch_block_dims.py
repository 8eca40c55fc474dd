import warp as wp

TILE = 32


@wp.kernel
def add_lanes(a: wp.array(dtype=float)):
    i = wp.tid()
    v = a[i]
    t = wp.tile(v)
    u = wp.tile_load(a, shape=TILE)
    wp.tile_store(a, t + u)  # ERROR TC0101: left is (16,), right is (32,)


@wp.kernel
def fixed(a: wp.array(dtype=float)):
    i = wp.tid()
    v = a[i]
    u = wp.untile(wp.tile(v) + wp.tile_load(a, shape=TILE))  # ERROR TC0101: left is (256,), right is (32,)
    a[i] = u


def host(a, n):
    wp.launch(add_lanes, dim=64, inputs=[a], block_dim=32)
    wp.launch(add_lanes, dim=64, inputs=[a], block_dim=16)
    wp.launch(fixed, dim=64, inputs=[a], block_dim=n)  # not a constant: --block-dim (256) applies
