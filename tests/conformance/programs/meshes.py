"""A triangle mesh read by kernels (wp.Mesh): points and velocities of triangles at barycentric
coordinates (the coordinates' gradients), face normals, face-vertex points, velocities and indices,
and a func taking the mesh's id."""
import warp as wp


@wp.func
def blend(mesh: wp.uint64, f: int, u: float, v: float):
    return wp.mesh_eval_position(mesh, f, u, v) + wp.mesh_eval_velocity(mesh, f, v, u) * 0.25


@wp.kernel
def evals(mesh: wp.uint64, face: wp.array(dtype=int), u: wp.array(dtype=float), v: wp.array(dtype=float),
          pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    f = face[i]
    p = wp.mesh_eval_position(mesh, f, u[i], v[i])
    w = wp.mesh_eval_velocity(mesh, f, u[i] * 0.5, v[i])
    pos[i] = p
    vel[i] = w
    out[i] = wp.length(p) + wp.dot(w, p) + wp.length(blend(mesh, f, v[i], u[i]))


@wp.kernel
def corners(mesh: wp.uint64, face: wp.array(dtype=int), nrm: wp.array(dtype=wp.vec3), pts: wp.array(dtype=wp.vec3),
            idx: wp.array(dtype=int)):
    i = wp.tid()
    f = face[i]
    nrm[i] = wp.mesh_eval_face_normal(mesh, f)
    pts[i] = wp.mesh_get_point(mesh, f * 3 + 1) + wp.mesh_get_velocity(mesh, f * 3 + 2)
    idx[i] = wp.mesh_get_index(mesh, f * 3) * 10 + wp.mesh_get_index(mesh, f * 3 + 2)
