import warp as wp

ROWS = wp.constant(4)


@wp.kernel
def views(out: wp.array2d[float]):
    t = wp.tile_ones(shape=(ROWS, 8), dtype=float)
    last = wp.tile_view(t, offset=(ROWS - 1,))
    before = wp.tile_view(t, offset=(-1,))  # ERROR TC0104: index -1 on axis 0 of extent 4
    after = wp.tile_view(t, offset=(ROWS,))  # ERROR TC0104: index 4 on axis 0 of extent 4
    cube = wp.tile_ones(shape=(2, 3, 8), dtype=float)
    plane = wp.tile_view(cube, offset=(1, 2))
    wrong = wp.tile_view(cube, offset=(0, 3))  # ERROR TC0104: view (8,) at offset (0, 3) is out of bounds of the tile (2, 3, 8)
    wp.tile_store(out, wp.tile_reshape(last + plane, shape=(1, 8)))
