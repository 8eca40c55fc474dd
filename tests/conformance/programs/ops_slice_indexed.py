"""Tiles indexed by an int tile along one axis (Warp's tile_slice_indexed: t[idx, :], t[:, idx])."""
import warp as wp

R = wp.constant(4)
C = wp.constant(6)


@wp.kernel
def rows_by_index(A: wp.array2d(dtype=float), I: wp.array(dtype=int), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    i = wp.tile_load(I, shape=5)
    # t[i] is the same gather as t[i, :]; repeated and negative rows included
    wp.tile_store(y, t[i, :] * t[i])


@wp.kernel
def columns_by_index(A: wp.array2d(dtype=float), I: wp.array(dtype=int), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    i = wp.tile_load(I, shape=3)
    picked = t[:, i]
    wp.tile_store(y, wp.tile_map(wp.sin, picked) + picked)


@wp.kernel
def middle_axis(A: wp.array3d(dtype=float), I: wp.array(dtype=int), y: wp.array3d(dtype=float)):
    t = wp.tile_load(A, shape=(2, 3, 4))
    i = wp.tile_load(I, shape=4)
    wp.tile_store(y, t[:, i] * 2.0)


@wp.kernel
def edge_blocks(A: wp.array2d(dtype=float), I: wp.array(dtype=int), y: wp.array2d(dtype=float)):
    # each block loads a partial tile at the array's edge (zeros past it), then picks columns
    b = wp.tid()
    t = wp.tile_load(A, shape=(2, C), offset=(b * 2, 0))
    i = wp.tile_load(I, shape=3)
    s = wp.tile_sum(t[:, i], axis=1)
    spread = wp.tile_broadcast(wp.tile_reshape(s, shape=(2, 1)), shape=(2, 3))
    wp.tile_store(y, spread * t[:, i], offset=(b * 2, 0))
