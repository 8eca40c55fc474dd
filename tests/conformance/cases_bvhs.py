"""Conformance cases for Warp's wp.Bvh read by kernels (wp.bvh_query_aabb, _sphere, _ray and _capsule,
with bvh_query_next's max_dist): the items each query finds, counted and summed (the order of a walk is
its tree's, and tilec's tree is its own: order-free results only). The boxes are stored with the case."""
from cases import Arr, BvhArg, Case, Scal, arr, out, varr

P = "bvhs.py"
N = 64  # queries
ITEMS = 200
SIMT = dict(launch="simt", block_dim=32)
BVH = BvhArg(varr(ITEMS, "vec3"), varr(ITEMS, "vec3", kind="rand"))

CASES = [
    Case("bvh_boxes", P, "boxes", dim=(N,),
         args=(BVH, varr(ITEMS, "vec3"), varr(ITEMS, "vec3"), varr(N, "vec3"), out(N, dtype="int32"), out(N), out(N)),
         grad=False, **SIMT),
    Case("bvh_spheres", P, "spheres", dim=(N,),
         args=(BVH, varr(N, "vec3"), arr(N, kind="rand"), out(N, dtype="int32"), out(N)), grad=False, **SIMT),
    Case("bvh_rays", P, "rays", dim=(N,),
         args=(BVH, varr(N, "vec3"), varr(N, "vec3"), Arr((N,), "float32", "in", "int:0:4"), out(N, dtype="int32"),
               out(N, dtype="int32"), out(N, dtype="int32")), grad=False, **SIMT),
    # tiled: a block of 16 lanes walks one query (Warp's batches are its own: the hits compared, not the steps)
    Case("bvh_tiled_boxes", P, "tiled_boxes", dim=(N,), args=(BVH, varr(N, "vec3"), out(N, ITEMS, dtype="int32")),
         grad=False, launch="tiled", block_dim=16),
    Case("bvh_tiled_rays", P, "tiled_rays", dim=(N,),
         args=(BVH, varr(N, "vec3"), varr(N, "vec3"), out(N, ITEMS, dtype="int32")), grad=False, launch="tiled",
         block_dim=16),
    Case("bvh_grouped", P, "grouped", dim=(N,),
         args=(BvhArg(varr(ITEMS, "vec3"), varr(ITEMS, "vec3", kind="rand"), Arr((ITEMS,), "int32", "in", "int:0:6")),
               varr(N, "vec3"), varr(N, "vec3"), Arr((N,), "int32", "in", "int:-1:8"), out(N, dtype="int32"),
               out(N, dtype="int32")), grad=False, **SIMT),
    Case("bvh_capsules", P, "capsules", dim=(N,),
         args=(BVH, varr(N, "vec3"), varr(N, "vec3"), arr(N, kind="rand"), out(N, dtype="int32"), out(N)),
         grad=False, **SIMT),
    Case("bvh_capped_boxes", P, "capped_boxes", dim=(N,),
         args=(BVH, varr(N, "vec3"), Scal(3, "int32"), out(N, dtype="int32"), out(N, dtype="int32")), grad=False,
         **SIMT),
]
