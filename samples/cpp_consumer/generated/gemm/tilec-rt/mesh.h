// tilec runtime: Warp's triangle mesh (wp.Mesh) as kernels read it: its points, optional
// per-point velocities and three point indices per triangle. The loader's Mesh (tilec-rt/spatial.py)
// fills this descriptor: the points and velocities are the user's arrays, read live (Warp's too:
// an update of the points in place is seen by the next launch), the indices a checked copy. A Bvh
// (wp.Bvh) is the same descriptor without points: its items' boxes (the user's lowers and uppers, read
// live) in face_lowers / face_uppers, num_tris of them, and a tree over them (mesh_query.h's walks).
//
// The values are Warp 1.19's (the same expressions in the same order). A triangle or a face-vertex
// index outside the mesh reads zero (-1 for mesh_get_index), as an out-of-bounds array read does
// here, where Warp asserts in debug builds and reads past its buffers otherwise.
#pragma once
#include <cstdint>
#include "vec.h"

namespace tl {

// The layout the loader fills (tilec-rt/spatial.py `_MeshDesc`): keep the two in step.
struct Mesh {
    const vec<3, float>* points;  // num_points
    const vec<3, float>* velocities;  // num_points, or null (a mesh built without velocities)
    const int32_t* indices;  // 3 * num_tris, each in [0, num_points)
    int32_t num_points;
    int32_t num_tris;
    // The bounding-volume hierarchy its queries walk (mesh_query.h), from the last build or refit.
    const vec<3, float>* face_lowers;  // num_tris: each face's box
    const vec<3, float>* face_uppers;
    const struct MeshNode* nodes;  // num_nodes, depth first (mesh_query.h)
    const int32_t* face_order;  // num_tris: the faces, leaf by leaf
    int32_t num_nodes;
    float average_edge_length;  // Warp's (mesh_query_point_sign_normal's epsilon is a fraction of it)
    // A grouped Bvh's groups: their ids ascending and the node whose subtree holds each one's items.
    const int32_t* group_ids;  // num_groups (null and 0: no groups)
    const int32_t* group_roots;
    int32_t num_groups;
};

#ifndef __CUDA_ARCH__
__attribute__((visibility("hidden"))) inline const Mesh empty_mesh = {};  // no points, no triangles, no tree
#endif

// The mesh behind an id: the null id (0, Warp's unset id) is the empty mesh, where every query finds nothing
// and every read is zero. (On a GPU the loader passes no mesh: meshes live on the CPU.)
TL_HD const Mesh& mesh_of(uint64_t id) {
#ifndef __CUDA_ARCH__
    if (id == 0) return empty_mesh;
#endif
    return *reinterpret_cast<const Mesh*>(uintptr_t(id));
}

// The mesh's points (field 0) or velocities (field 1); null for a mesh without velocities.
TL_HD const vec<3, float>* mesh_values(const Mesh& m, int32_t field) { return field == 0 ? m.points : m.velocities; }

// The points or velocities of a triangle's corners; false outside the mesh.
TL_HD bool mesh_corners(const Mesh& m, int32_t tri, int32_t field, vec<3, float>* c) {
    const vec<3, float>* values = mesh_values(m, field);
    if (values == nullptr || tri < 0 || tri >= m.num_tris) return false;
    for (int k = 0; k < 3; ++k) c[k] = values[m.indices[3 * tri + k]];
    return true;
}

TL_HD vec<3, float> mesh_eval(uint64_t id, int32_t tri, float u, float v, int32_t field) {
    vec<3, float> c[3];
    if (!mesh_corners(mesh_of(id), tri, field, c)) return vec<3, float>();
    return c[0] * u + c[1] * v + c[2] * (1.0f - u - v);
}

TL_HD vec<3, float> mesh_eval_position(uint64_t id, int32_t tri, float u, float v) { return mesh_eval(id, tri, u, v, 0); }
TL_HD vec<3, float> mesh_eval_velocity(uint64_t id, int32_t tri, float u, float v) { return mesh_eval(id, tri, u, v, 1); }

// d(dot(mesh_eval(...), adj)) / du (which 0) or / dv (which 1): the corner's value less the third
// corner's, dotted with adj in Warp's order (its adj_mesh_eval_position).
TL_HD float mesh_eval_adjoint(uint64_t id, int32_t tri, const vec<3, float>& adj, int32_t field, int32_t which) {
    vec<3, float> c[3];
    if (!mesh_corners(mesh_of(id), tri, field, c)) return 0.0f;
    const vec<3, float>& a = c[which];
    return (a[0] - c[2][0]) * adj[0] + (a[1] - c[2][1]) * adj[1] + (a[2] - c[2][2]) * adj[2];
}

TL_HD vec<3, float> mesh_eval_face_normal(uint64_t id, int32_t tri) {
    vec<3, float> c[3];
    if (!mesh_corners(mesh_of(id), tri, 0, c)) return vec<3, float>();
    return normalize(cross(c[1] - c[0], c[2] - c[0]));
}

// wp.mesh_get(id)'s arrays: its points, velocities (empty for a mesh without them) and indices (three per
// triangle), the loader's descriptors of the user's arrays (the indices its checked copy). Writes
// through them reach those arrays, as in Warp.
TL_HD Array<vec<3, float>, 1> mesh_values_array(uint64_t id, int32_t field) {
    const Mesh& m = mesh_of(id);
    Array<vec<3, float>, 1> a;
    const vec<3, float>* values = mesh_values(m, field);
    if (values == nullptr) return a;
    a.data = const_cast<vec<3, float>*>(values);
    a.shape[0] = m.num_points;
    a.strides[0] = int64_t(sizeof(vec<3, float>));
    return a;
}
TL_HD Array<vec<3, float>, 1> mesh_points(uint64_t id) { return mesh_values_array(id, 0); }
TL_HD Array<vec<3, float>, 1> mesh_velocities(uint64_t id) { return mesh_values_array(id, 1); }
TL_HD Array<int32_t, 1> mesh_indices(uint64_t id) {
    const Mesh& m = mesh_of(id);
    Array<int32_t, 1> a;
    a.data = const_cast<int32_t*>(m.indices);
    a.shape[0] = 3 * int64_t(m.num_tris);
    a.strides[0] = int64_t(sizeof(int32_t));
    return a;
}

// The point (or velocity) of face-vertex `index` (3 * triangle + corner).
TL_HD vec<3, float> mesh_get_value(uint64_t id, int32_t index, int32_t field) {
    const Mesh& m = mesh_of(id);
    const vec<3, float>* values = mesh_values(m, field);
    if (values == nullptr || index < 0 || index >= 3 * m.num_tris) return vec<3, float>();
    return values[m.indices[index]];
}

TL_HD vec<3, float> mesh_get_point(uint64_t id, int32_t index) { return mesh_get_value(id, index, 0); }
TL_HD vec<3, float> mesh_get_velocity(uint64_t id, int32_t index) { return mesh_get_value(id, index, 1); }

TL_HD int32_t mesh_get_index(uint64_t id, int32_t index) {
    const Mesh& m = mesh_of(id);
    return index >= 0 && index < 3 * m.num_tris ? m.indices[index] : -1;
}

}  // namespace tl
