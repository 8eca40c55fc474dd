"""Conformance cases for Warp's triangle mesh read by kernels (wp.Mesh; wp.mesh_eval_position /
_velocity, mesh_eval_face_normal, mesh_get_point / _velocity / _index): values and the barycentric
coordinates' gradients bit for bit (runtime mesh.h); and its queries (runtime mesh_query.h), compared
through the points they find (the gradients of the closest point and of the ray's hit in the query's
point, start and direction too). The mesh's own arrays are stored with the case."""
from cases import Arr, Case, MeshArg, arr, out, varr

P = "meshes.py"
N = 48  # queries
POINTS, TRIS = 30, 40
SIMT = dict(launch="simt", block_dim=32)
MESH = MeshArg(varr(POINTS, "vec3"), Arr((3 * TRIS,), "int32", "in", f"int:0:{POINTS}"), varr(POINTS, "vec3"))

CASES = [
    Case("mesh_evals", P, "evals", dim=(N,),
         args=(MESH, Arr((N,), "int32", "in", f"int:0:{TRIS}"), arr(N, kind="rand"), arr(N, kind="rand"),
               varr(N, "vec3", "out"), varr(N, "vec3", "out"), out(N)), rtol=1e-5, atol=1e-6, **SIMT),
    Case("mesh_corners", P, "corners", dim=(N,),
         args=(MESH, Arr((N,), "int32", "in", f"int:0:{TRIS}"), varr(N, "vec3", "out"), varr(N, "vec3", "out"),
               out(N, dtype="int32")), grad=False, **SIMT),
    # fd=False: over a random soup of triangles a 1e-2 step moves many points across a region or onto
    # another face; tests/test_spatial.py checks these gradients by finite differences on smooth ground
    Case("mesh_closest", P, "closest", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3", "out"), out(N)),
         rtol=1e-5, atol=1e-5, fd=False, **SIMT),
    Case("mesh_signs", P, "signs", dim=(N,), args=(MESH, varr(N, "vec3"), out(N), out(N), out(N, dtype="int32")),
         grad=False, **SIMT),
    Case("mesh_rays", P, "rays", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3"), out(N),
                                                 varr(N, "vec3", "out")), rtol=1e-5, atol=1e-5, fd=False, **SIMT),
    Case("mesh_ray_signs", P, "ray_signs", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3"), out(N),
                                                           out(N, dtype="int32")), grad=False, **SIMT),
    Case("mesh_boxes", P, "boxes", dim=(N,), args=(MESH, varr(N, "vec3"), out(N, dtype="int32"),
                                                   out(N, dtype="int32")), grad=False, **SIMT),
    Case("mesh_more_queries", P, "more_queries", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3"),
                                                                 varr(N, "vec3", "out"), out(N), out(N, dtype="int32")),
         grad=False, **SIMT),
    Case("mesh_older_forms", P, "older_forms", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3"),
                                                               varr(N, "vec3", "out"), out(N), varr(N, "vec3", "out"),
                                                               out(N, dtype="int32")),
         # grad=False: Warp's adjoint here (variables written again by later queries) misses the first
         # query's gradient (44 of 48 rows off central differences, tilec's 0 of 48); test_mesh_queries.py
         # checks tilec's by finite differences where the queries are smooth
         grad=False, **SIMT),
    Case("triangle_pairs", P, "triangle_pairs", dim=(4 * N,), args=(varr(24 * N, "vec3"), varr(24 * N, "vec3d"),
                                                                     out(4 * N, dtype="int32")), grad=False, **SIMT),
    Case("mesh_trees", P, "mesh_trees", dim=(N,), args=(MESH, varr(N, "vec3"), varr(N, "vec3"), out(N, dtype="int32"),
                                                        out(N, dtype="int32")), grad=False, **SIMT),
    Case("mesh_grouped_rays", P, "grouped_rays", dim=(N,),
         args=(MeshArg(varr(POINTS, "vec3"), Arr((3 * TRIS,), "int32", "in", f"int:0:{POINTS}"),
                       groups=Arr((TRIS,), "int32", "in", "int:0:4")), varr(N, "vec3"), varr(N, "vec3"),
               Arr((N,), "int32", "in", "int:-1:6"), out(N, dtype="int32"), out(N), out(N, dtype="int32")),
         grad=False, **SIMT),
    Case("mesh_tiled_faces", P, "tiled_faces", dim=(N,), args=(MESH, varr(N, "vec3"), out(N, TRIS, dtype="int32")),
         grad=False, launch="tiled", block_dim=8),
    Case("mesh_unannotated_query", P, "unannotated_query", dim=(N,),
         args=(MESH, varr(N, "vec3"), varr(N, "vec3", "out"), out(N)), grad=False, rtol=1e-5, atol=1e-5, **SIMT),
    Case("mesh_arrays", P, "mesh_arrays", dim=(N,),
         args=(MESH, Arr((N,), "int32", "in", f"int:0:{TRIS}"), arr(N), out(N), varr(N, "vec3", "out"),
               out(N, dtype="int32")), rtol=1e-5, atol=1e-6, **SIMT),
]
