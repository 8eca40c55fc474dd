import warp as wp
from warp import tile_stack

# Warp builtins tilec lacks are named in their diagnostic, never "did you mean" another op.


@wp.kernel
def uses_missing(A: wp.array1d(dtype=float), B: wp.array1d(dtype=int)):
    a = wp.tile_load(A, shape=(8,))
    wp.tile_bvh_query_aabb(a)  # ERROR TC0401: bind `wp.tile_bvh_query_aabb(...)` to a name, then step it
    wp.dense_chol(1, A, 0.0, A)  # ERROR TC0430: `dense_chol` is a Warp builtin not supported by tilec yet
    q = wp.tile_query_valid(a)  # ERROR TC0401: tile_query_valid takes the name a tiled mesh or BVH query
    wp.tile_add_inplace(a, 1, 2.0)  # Warp's name for a[1] += 2.0
    b = wp.tile_load(B, shape=(8,))
    b[1] ^= 3
    wp.tile_mesh_query_aabb(a)  # ERROR TC0401: bind `wp.tile_mesh_query_aabb(...)` to a name
    a[2] &= 1  # ERROR TC0203: tile_bit_and_inplace: needs an integer tile, got float32
    wp.tile_stor(A, a)  # ERROR TC0302: unknown tile API operation `tile_stor`
