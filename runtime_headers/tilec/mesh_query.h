// tilec runtime: queries of a triangle mesh (tl::Mesh, mesh.h) through its bounding-volume
// hierarchy: the closest face to a point, the first face a ray hits, the faces whose boxes overlap
// a box, and the inside/outside sign of a point. Warp 1.19's builtins of the same names are built
// on these in tilec/library/warp_math.py (the MeshQueryPoint and MeshQueryRay structs) and by the
// front end (a `mesh_query_aabb` loop).
//
// The tree is the loader's (tilec-rt/spatial.py `_Bvh`): MeshNode records in depth-first order,
// node n's subtree the nodes n .. skip(n) - 1; an inner node's children are n + 1 and `item`; a leaf
// holds the faces face_order[first .. first + count).
// Each face is tested with Warp's arithmetic (the same expressions in the same order), so a face is
// chosen as Warp chooses it; the tree is not Warp's, so where two faces tie exactly (a point closest
// to an edge or corner two faces share, a ray through a shared edge) the other one may be reported,
// and a `mesh_query_aabb` loop visits its faces in another order.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include "mesh.h"
#include "random.h"

namespace tl {

// One node in 32 bytes, what a walk reads of it together: its box, and two ints. An inner node has
// `item` its right child (> 0) and `skip_or_count` the node after its subtree; a leaf has `item`
// -1 - its first position in face_order and `skip_or_count` its number of faces (its subtree ends at
// the next node).
struct MeshNode {
    vec<3, float> lower;
    int32_t skip_or_count;
    vec<3, float> upper;
    int32_t item;

    TL_HD bool leaf() const { return item < 0; }
    TL_HD int32_t first() const { return -1 - item; }
    TL_HD int32_t count() const { return skip_or_count; }
    TL_HD int32_t skip(int32_t self) const { return leaf() ? self + 1 : skip_or_count; }
};

constexpr int kMeshStackSize = 128;  // above the tree's depth: the loader's splits stop at 64 + 31 levels

using vec3f = vec<3, float>;

TL_HD vec3f mesh_corner(const Mesh& m, int32_t face, int k) { return m.points[m.indices[3 * face + k]]; }

// fminf and fmaxf as Warp writes them on the host (the non-NaN operand when one is NaN): compares
// the compiler inlines, where the library's functions are calls without -ffast-math.
TL_HD float least(float a, float b) { return a <= b ? a : (b == b ? b : a); }
TL_HD float greatest(float a, float b) { return a >= b ? a : (b == b ? b : a); }

// The squared distance from p to the box [lo, hi] (zero inside): Warp's distance_to_aabb_sq.
TL_HD float distance_to_box_sq(const vec3f& p, const vec3f& lo, const vec3f& hi) {
    float d[3];
    for (int k = 0; k < 3; ++k) d[k] = least(hi[k], greatest(lo[k], p[k])) - p[k];
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

TL_HD bool boxes_overlap(const vec3f& a_lo, const vec3f& a_hi, const vec3f& b_lo, const vec3f& b_hi) {
    return !(a_lo[0] > b_hi[0] || a_lo[1] > b_hi[1] || a_lo[2] > b_hi[2] || a_hi[0] < b_lo[0] ||
             a_hi[1] < b_lo[1] || a_hi[2] < b_lo[2]);
}

// Where on triangle abc the point closest to p lies: Ericson's regions, in the order tested.
enum class TriangleRegion { kCornerA, kCornerB, kEdgeAB, kCornerC, kEdgeAC, kEdgeBC, kFace };

// The barycentric weights (of a, of b) of the point of triangle abc closest to p, and its region
// (Warp's closest_point_to_triangle: the same expressions in the same order).
TL_HD TriangleRegion closest_point_weights(const vec3f& a, const vec3f& b, const vec3f& c, const vec3f& p, float* u,
                                           float* v) {
    const vec3f ab = b - a, ac = c - a, ap = p - a;
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    float w = 0.0f;
    TriangleRegion region;
    const vec3f bp = p - b, cp = p - c;
    float d3 = 0.0f, d4 = 0.0f, d5 = 0.0f, d6 = 0.0f, va = 0.0f, vb = 0.0f, vc = 0.0f;
    if (d1 <= 0.0f && d2 <= 0.0f) {
        *v = 0.0f;
        region = TriangleRegion::kCornerA;
    } else if (d3 = dot(ab, bp), d4 = dot(ac, bp), d3 >= 0.0f && d4 <= d3) {
        *v = 1.0f;
        region = TriangleRegion::kCornerB;
    } else if (vc = d1 * d4 - d3 * d2, vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        *v = d1 / (d1 - d3);
        region = TriangleRegion::kEdgeAB;
    } else if (d5 = dot(ab, cp), d6 = dot(ac, cp), d6 >= 0.0f && d5 <= d6) {
        *v = 0.0f;
        w = 1.0f;
        region = TriangleRegion::kCornerC;
    } else if (vb = d5 * d2 - d1 * d6, vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        *v = 0.0f;
        w = d2 / (d2 - d6);
        region = TriangleRegion::kEdgeAC;
    } else if (va = d3 * d6 - d5 * d4, va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        *v = 1.0f - w;
        region = TriangleRegion::kEdgeBC;
    } else {
        const float denom = 1.0f / (va + vb + vc);
        *v = vb * denom;
        w = vc * denom;
        region = TriangleRegion::kFace;
    }
    *u = 1.0f - *v - w;
    return region;
}

// A face too thin to have a closest point (Warp's sliver test: |normal| / sum of squared edges < 1e-6).
TL_HD bool mesh_face_is_sliver(const vec3f& p, const vec3f& q, const vec3f& r) {
    const vec3f e0 = q - p, e1 = r - p, e2 = r - q;
    return length(cross(e0, e1)) / (dot(e0, e0) + dot(e1, e1) + dot(e2, e2)) < 1.e-6f;
}

// The weights Warp's closest-point queries report: u rebuilt from v and w (w = 1 - u - v), as Warp
// rebuilds it; the point they evaluate to, `weighted(p, q, r)`.
struct ReportedWeights {
    float u, v, w;

    TL_HD ReportedWeights(const vec3f& a, const vec3f& b, const vec3f& c, const vec3f& p) {
        float u0;
        closest_point_weights(a, b, c, p, &u0, &v);
        w = 1.0f - u0 - v;
        u = 1.0f - v - w;
    }

    TL_HD vec3f weighted(const vec3f& a, const vec3f& b, const vec3f& c) const { return a * u + b * v + c * w; }
};

// The face's closest point to `point` (Warp's c = u p + v q + w r).
TL_HD vec3f mesh_face_closest(const vec3f& p, const vec3f& q, const vec3f& r, const vec3f& point) {
    float u, v;
    closest_point_weights(p, q, r, point, &u, &v);
    const float w = 1.0f - u - v;
    return p * u + q * v + r * w;
}

// Depth-first walk of the tree, nearer child first: `visit(face)` for each face of each leaf whose
// box `keep`s its `distance(lo, hi)` (asked again of a node when it is popped, with the distance
// found when it was pushed: the bound may have shrunk since). From node `root` (a grouped mesh's
// group: mesh_get_group_root); -1, or a number that is no node, is the whole tree.
template <class Keep, class Distance, class Visit>
TL_HD void mesh_walk_nearest(const Mesh& m, Keep keep, Distance distance, Visit visit, int32_t root = -1) {
    if (m.num_nodes == 0) return;
    int32_t stack[kMeshStackSize];
    float stack_distance[kMeshStackSize];
    int count = 0;
    int32_t n = root < 0 || root >= m.num_nodes ? 0 : root;
    float d = distance(m.nodes[n].lower, m.nodes[n].upper);
    for (;;) {
        const MeshNode& node = m.nodes[n];
        bool descend = false;
        if (keep(d)) {
            if (node.leaf()) {
                for (int32_t k = node.first(); k < node.first() + node.count(); ++k) visit(m.face_order[k]);
            } else {
                int32_t near = n + 1, far = node.item;
                float d_near = distance(m.nodes[near].lower, m.nodes[near].upper);
                float d_far = distance(m.nodes[far].lower, m.nodes[far].upper);
                if (d_far < d_near) {
                    const int32_t t = near; near = far; far = t;
                    const float e = d_near; d_near = d_far; d_far = e;
                }
                if (keep(d_far) && count < kMeshStackSize) {
                    stack[count] = far;
                    stack_distance[count++] = d_far;
                }
                if (keep(d_near)) {  // straight on to the nearer child
                    n = near;
                    d = d_near;
                    descend = true;
                }
            }
        }
        if (descend) continue;
        if (count == 0) return;
        --count;
        n = stack[count];
        d = stack_distance[count];
    }
}

// The face closest to `point` strictly within max_dist, -1 if none (Warp's mesh_query_point_no_sign).
TL_HD int32_t mesh_closest_face(uint64_t id, const vec3f& point, float max_dist) {
    const Mesh& m = mesh_of(id);
    float best = max_dist * max_dist;
    int32_t found = -1;
    mesh_walk_nearest(
        m, [&](float d) { return d <= best; },
        [&](const vec3f& lo, const vec3f& hi) { return distance_to_box_sq(point, lo, hi); },
        [&](int32_t face) {
            const vec3f p = mesh_corner(m, face, 0), q = mesh_corner(m, face, 1), r = mesh_corner(m, face, 2);
            if (mesh_face_is_sliver(p, q, r)) return;
            const float d = length_sq(mesh_face_closest(p, q, r, point) - point);
            if (d < best) { best = d; found = face; }
        });
    return found;
}

// Warp's mesh_query_point_sign_normal walk: the closest face (-1 if none strictly within max_dist)
// and the angle-weighted normal of the faces within epsilon (a fraction of the mean edge length) of
// the closest distance, which signs the point.
TL_HD int32_t mesh_closest_face_normal(const Mesh& m, const vec3f& point, float max_dist, float epsilon,
                                       vec3f* weighted_normal) {
    const float pi = 3.14159265359f;
    float best = max_dist;
    int32_t found = -1;
    vec3f normal_sum;
    const float eps = m.average_edge_length * epsilon, eps_sq = eps * eps;
    mesh_walk_nearest(
        m, [&](float d) { return d <= (best + eps) * (best + eps); },
        [&](const vec3f& lo, const vec3f& hi) { return distance_to_box_sq(point, lo, hi); },
        [&](int32_t face) {
            const vec3f p = mesh_corner(m, face, 0), q = mesh_corner(m, face, 1), r = mesh_corner(m, face, 2);
            if (mesh_face_is_sliver(p, q, r)) return;
            const vec3f e0 = q - p, e1 = r - p, e2 = r - q, normal = cross(e0, e1);
            const vec3f c = mesh_face_closest(p, q, r, point);
            const float dist = sqrtf(length_sq(c - point));
            if (!(dist < best + eps)) return;
            const vec3f cp = c - p, cq = c - q, cr = c - r;
            const float cp2 = length_sq(cp), cq2 = length_sq(cq), cr2 = length_sq(cr);
            const float e0n = dot(e0, e0), e1n = dot(e1, e1), e2n = dot(e2, e2);
            float weight;
            if (cp2 < eps_sq) {
                weight = acosf(dot(normalize(e0), normalize(e1)));
            } else if (cq2 < eps_sq) {
                weight = acosf(dot(normalize(e2), normalize(-e0)));
            } else if (cr2 < eps_sq) {
                weight = acosf(dot(normalize(-e1), normalize(-e2)));
            } else {
                const float e0cp = dot(e0, cp), e2cq = dot(e2, cq), e1cp = dot(e1, cp);
                const bool on_edge = cp2 * e0n - e0cp * e0cp < eps_sq * e0n || cq2 * e2n - e2cq * e2cq < eps_sq * e2n ||
                                     cp2 * e1n - e1cp * e1cp < eps_sq * e1n;
                weight = on_edge ? pi : 2.0f * pi;
            }
            if (dist > best - eps) {  // as close as the closest so far: its normal counts too
                normal_sum = normal_sum + normalize(normal) * weight;
                if (dist < best) { best = dist; found = face; }
            } else {
                best = dist;
                found = face;
                normal_sum = normalize(normal) * weight;
            }
        });
    *weighted_normal = normal_sum;
    return found;
}

// mesh_query_point_sign_normal's one walk as one value: 2 face + 1 when the point is in front of the
// weighted normal (outside), 2 face when behind it (inside); -1 for no face. mesh_signed_face and
// mesh_signed_sign read it.
TL_HD int64_t mesh_closest_signed(uint64_t id, const vec3f& point, float max_dist, float epsilon) {
    const Mesh& m = mesh_of(id);
    vec3f normal;
    const int32_t face = mesh_closest_face_normal(m, point, max_dist, epsilon, &normal);
    if (face < 0) return -1;
    const vec3f p = mesh_corner(m, face, 0), q = mesh_corner(m, face, 1), r = mesh_corner(m, face, 2);
    const vec3f closest = ReportedWeights(p, q, r, point).weighted(p, q, r);
    return 2 * int64_t(face) + (dot(normal, point - closest) > 0.0f ? 1 : 0);
}

TL_HD int32_t mesh_signed_face(int64_t code) { return code < 0 ? -1 : int32_t(code >> 1); }
TL_HD float mesh_signed_sign(int64_t code) { return code < 0 ? 0.0f : (code & 1) ? 1.0f : -1.0f; }

TL_HD bool mesh_has_face(const Mesh& m, int32_t face) { return face >= 0 && face < m.num_tris; }

// Warp's reported weights of the point of `face` closest to `point`: u (which 0) rebuilt from v and
// w as Warp's query rebuilds it, or v (which 1); 0 for no face (-1).
TL_HD float mesh_closest_weight(uint64_t id, int32_t face, const vec3f& point, int32_t which) {
    const Mesh& m = mesh_of(id);
    if (!mesh_has_face(m, face)) return 0.0f;
    const ReportedWeights weights(mesh_corner(m, face, 0), mesh_corner(m, face, 1), mesh_corner(m, face, 2), point);
    return which == 0 ? weights.u : weights.v;
}

// d mesh_closest_weight / d point, the face fixed, in the point's region: zero at a corner; along an
// edge from x to y the weight of y grows by (y - x) / |y - x|^2; inside, the weights (v, w) of the
// projection solve the Gram system of ab and ac.
TL_HD vec3f mesh_closest_weight_gradient(uint64_t id, int32_t face, const vec3f& point, int32_t which) {
    const Mesh& m = mesh_of(id);
    if (!mesh_has_face(m, face)) return vec3f();
    const vec3f a = mesh_corner(m, face, 0), b = mesh_corner(m, face, 1), c = mesh_corner(m, face, 2);
    float u, v;
    const TriangleRegion region = closest_point_weights(a, b, c, point, &u, &v);
    const vec3f ab = b - a, ac = c - a, bc = c - b;
    vec3f dv, dw;  // of the weights of b and c
    switch (region) {
        case TriangleRegion::kEdgeAB: dv = ab * (1.0f / dot(ab, ab)); break;
        case TriangleRegion::kEdgeAC: dw = ac * (1.0f / dot(ac, ac)); break;
        case TriangleRegion::kEdgeBC:
            dw = bc * (1.0f / dot(bc, bc));
            dv = -dw;
            break;
        case TriangleRegion::kFace: {
            const float g00 = dot(ab, ab), g01 = dot(ab, ac), g11 = dot(ac, ac);
            const float inv = 1.0f / (g00 * g11 - g01 * g01);
            dv = (ab * g11 - ac * g01) * inv;
            dw = (ac * g00 - ab * g01) * inv;
            break;
        }
        default: break;  // a corner
    }
    return which == 0 ? -dv - dw : dv;
}

// The squared distance from p to the box's farthest corner (Warp's furthest_distance_to_aabb_sq).
TL_HD float furthest_distance_to_box_sq(const vec3f& p, const vec3f& lo, const vec3f& hi) {
    float c[3];
    for (int k = 0; k < 3; ++k) {
        const float to_lo = fabsf(p[k] - lo[k]), to_hi = fabsf(p[k] - hi[k]);
        c[k] = to_lo > to_hi ? to_lo : to_hi;
    }
    return c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
}

// The weights (of a, of b) of triangle abc's corner farthest from p (Warp's furthest_point_to_triangle:
// a on a strict maximum, else b over c, else c).
TL_HD void furthest_point_weights(const vec3f& a, const vec3f& b, const vec3f& c, const vec3f& p, float* u, float* v) {
    const float da = length_sq(p - a), db = length_sq(p - b), dc = length_sq(p - c);
    *u = da > db && da > dc ? 1.0f : 0.0f;
    *v = *u == 0.0f && db > dc ? 1.0f : 0.0f;
}

// The face whose farthest corner is farthest from `point`, strictly beyond min_dist, -1 if none
// (Warp's mesh_query_furthest_point_no_sign; slivers skipped).
TL_HD int32_t mesh_furthest_face(uint64_t id, const vec3f& point, float min_dist) {
    const Mesh& m = mesh_of(id);
    float best = min_dist * min_dist;
    int32_t found = -1;
    mesh_walk_nearest(  // farthest first: by the boxes' negated farthest distances
        m, [&](float d) { return -d >= best; },
        [&](const vec3f& lo, const vec3f& hi) { return -furthest_distance_to_box_sq(point, lo, hi); },
        [&](int32_t face) {
            const vec3f p = mesh_corner(m, face, 0), q = mesh_corner(m, face, 1), r = mesh_corner(m, face, 2);
            if (mesh_face_is_sliver(p, q, r)) return;
            float u, v;
            furthest_point_weights(p, q, r, point, &u, &v);
            const float w = 1.0f - u - v;
            const float d = length_sq(p * u + q * v + r * w - point);
            if (d > best) { best = d; found = face; }
        });
    return found;
}

// The weight u (which 0) or v (1) of `face`'s corner farthest from `point`: 1 or 0, so no gradient; 0
// for no face (-1).
TL_HD float mesh_furthest_weight(uint64_t id, int32_t face, const vec3f& point, int32_t which) {
    const Mesh& m = mesh_of(id);
    if (!mesh_has_face(m, face)) return 0.0f;
    float u, v;
    furthest_point_weights(mesh_corner(m, face, 0), mesh_corner(m, face, 1), mesh_corner(m, face, 2), point, &u, &v);
    return which == 0 ? u : v;
}

// ---------------------------------------------------------------- rays

TL_HD int mesh_major_axis(const vec3f& d) {  // Warp's max_dim: the first axis of the largest magnitude
    int axis = 0;
    float best = fabsf(d[0]);
    for (int k = 1; k < 3; ++k)
        if (fabsf(d[k]) > best) { best = fabsf(d[k]); axis = k; }
    return axis;
}

TL_HD float difference_of_products(float a, float b, float c, float d) {  // a b - c d, with FMA's error term
    const float cd = c * d;
    return fmaf(a, b, -cd) + fmaf(-c, d, cd);
}

// A ray's shear (Woop, Benthin and Wald's watertight test, as Warp's intersect_ray_tri_woop sets it
// up per triangle; the same values, computed once per ray): the axis of dir's largest magnitude kz,
// the other two (swapped when dir[kz] < 0 to keep the winding), and the shear constants.
struct RayShear {
    int kx, ky, kz;
    float sx, sy, sz;

    TL_HD explicit RayShear(const vec3f& dir) {
        kz = mesh_major_axis(dir);
        kx = kz + 1 == 3 ? 0 : kz + 1;
        ky = kx + 1 == 3 ? 0 : kx + 1;
        if (dir[kz] < 0.0f) { const int s = kx; kx = ky; ky = s; }
        sx = dir[kx] / dir[kz];
        sy = dir[ky] / dir[kz];
        sz = 1.0f / dir[kz];
    }
};

// The ray start + t dir against triangle abc: false for a miss; else t, the weights u (of a) and v
// (of b), and `det`, positive where the ray meets the triangle's front (counter-clockwise) side, of
// Warp's magnitude.
TL_HD bool ray_triangle(const vec3f& start, const RayShear& ray, const vec3f& a, const vec3f& b, const vec3f& c,
                        float* t, float* u, float* v, float* det_out) {
    const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
    const float sx = ray.sx, sy = ray.sy, sz = ray.sz;
    const vec3f A = a - start, B = b - start, C = c - start;
    const float ax = A[kx] - sx * A[kz], ay = A[ky] - sy * A[kz];
    const float bx = B[kx] - sx * B[kz], by = B[ky] - sy * B[kz];
    const float cx = C[kx] - sx * C[kz], cy = C[ky] - sy * C[kz];
    float U = difference_of_products(cx, by, cy, bx);
    float V = difference_of_products(ax, cy, ay, cx);
    float W = difference_of_products(bx, ay, by, ax);
    if (U == 0.0f || V == 0.0f || W == 0.0f) {  // on an edge: decided in double, as Warp's
        U = float(double(cx) * double(by) - double(cy) * double(bx));
        V = float(double(ax) * double(cy) - double(ay) * double(cx));
        W = float(double(bx) * double(ay) - double(by) * double(ax));
    }
    if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f)) return false;
    const float det = U + V + W;
    if (det == 0.0f) return false;
    const float T = U * (sz * A[kz]) + V * (sz * B[kz]) + W * (sz * C[kz]);
    if (std::signbit(T) != std::signbit(det) && T != 0.0f) return false;  // Warp's xorf(T, sign(det)) < 0
    const float rcp = 1.0f / det;
    *u = U * rcp;
    *v = V * rcp;
    *t = T * rcp;
    *det_out = det;
    return true;
}

// Warp's ray-box slab tests (intersect_ray_aabb and its robust variant): whether the ray start + t dir
// meets [lo, hi] at some t whose far end is not behind the start, rcp the reciprocals of dir's
// components; *t_near the entry t. The robust one where a direction component is zero (the ray
// parallel to that slab, which then bounds nothing but rejects a start outside it).
TL_HD bool ray_slabs(const vec3f& start, const vec3f& rcp, const vec3f& lo, const vec3f& hi, float* t_near) {
    float t1 = (lo[0] - start[0]) * rcp[0], t2 = (hi[0] - start[0]) * rcp[0];
    float t_min = least(t1, t2), t_max = greatest(t1, t2);
    for (int k = 1; k < 3; ++k) {
        t1 = (lo[k] - start[k]) * rcp[k];
        t2 = (hi[k] - start[k]) * rcp[k];
        t_min = greatest(least(t1, t2), t_min);
        t_max = least(greatest(t1, t2), t_max);
    }
    *t_near = t_min;
    return t_max >= 0.0f && t_max >= t_min;
}

TL_HD bool ray_slabs_robust(const vec3f& start, const vec3f& dir, const vec3f& rcp, const vec3f& lo, const vec3f& hi,
                            float* t_near) {
    float t_min = -FLT_MAX, t_max = FLT_MAX;
    for (int k = 0; k < 3; ++k) {
        if (dir[k] == 0.0f) {
            if (start[k] < lo[k] || start[k] > hi[k]) return false;
            continue;
        }
        const float t1 = (lo[k] - start[k]) * rcp[k], t2 = (hi[k] - start[k]) * rcp[k];
        t_min = greatest(least(t1, t2), t_min);
        t_max = least(greatest(t1, t2), t_max);
    }
    *t_near = t_min;
    return t_max >= 0.0f && t_max >= t_min;
}

// The same as an entry t, or FLT_MAX for a miss (the mesh's walks order boxes by it).
TL_HD float ray_box_robust(const vec3f& start, const vec3f& dir, const vec3f& rcp, const vec3f& lo, const vec3f& hi) {
    float t;
    return ray_slabs_robust(start, dir, rcp, lo, hi, &t) ? t : FLT_MAX;
}

TL_HD float ray_box(const vec3f& start, const vec3f& rcp, const vec3f& lo, const vec3f& hi) {
    float t;
    return ray_slabs(start, rcp, lo, hi, &t) ? t : FLT_MAX;
}

// The faces the ray meets at t >= 0: `hit(face, t, det)` for each, in the leaves whose boxes it
// enters before `bound()` (read anew at each node: a walk for the first hit shrinks it). Warp's slab
// test: its plain form unless a direction component is zero.
template <class Bound, class Hit>
TL_HD void mesh_ray_faces(const Mesh& m, const vec3f& start, const vec3f& dir, Bound bound, Hit hit, int32_t root = -1) {
    const RayShear ray(dir);
    const vec3f rcp(1.0f / dir[0], 1.0f / dir[1], 1.0f / dir[2]);
    auto keep = [&](float entry) { return entry < bound(); };
    auto visit = [&](int32_t face) {
        float t, u, v, det;
        if (ray_triangle(start, ray, mesh_corner(m, face, 0), mesh_corner(m, face, 1), mesh_corner(m, face, 2), &t, &u,
                         &v, &det) && t >= 0.0f)
            hit(face, t, det);
    };
    if (dir[0] != 0.0f && dir[1] != 0.0f && dir[2] != 0.0f)
        mesh_walk_nearest(m, keep, [&](const vec3f& lo, const vec3f& hi) { return ray_box(start, rcp, lo, hi); }, visit,
                          root);
    else
        mesh_walk_nearest(m, keep, [&](const vec3f& lo, const vec3f& hi) {
            return ray_box_robust(start, dir, rcp, lo, hi); }, visit, root);
}

// The face the ray first hits at 0 <= t < max_t (-1 if none), and its det.
TL_HD int32_t mesh_ray_walk(const Mesh& m, const vec3f& start, const vec3f& dir, float max_t, float* det_out,
                            int32_t root = -1) {
    float best = max_t;
    int32_t found = -1;
    mesh_ray_faces(m, start, dir, [&] { return best; }, [&](int32_t face, float t, float det) {
        if (t < best) {
            best = t;
            found = face;
            *det_out = det;
        }
    }, root);
    return found;
}

// Whether the ray hits any face at 0 <= t < max_t (Warp's mesh_query_ray_anyhit), in node `root`'s subtree.
TL_HD bool mesh_query_ray_anyhit(uint64_t id, const vec3f& start, const vec3f& dir, float max_t, int32_t root) {
    bool any = false;
    mesh_ray_faces(mesh_of(id), start, dir, [&] { return any ? -FLT_MAX : max_t; },
                   [&](int32_t, float t, float) { any = any || t < max_t; }, root);
    return any;
}

// How many faces the ray meets at t >= 0 (Warp's mesh_query_ray_count_intersections), in node `root`'s subtree.
TL_HD int32_t mesh_query_ray_count_intersections(uint64_t id, const vec3f& start, const vec3f& dir, int32_t root) {
    int32_t count = 0;
    mesh_ray_faces(mesh_of(id), start, dir, [] { return FLT_MAX; }, [&](int32_t, float, float) { ++count; }, root);
    return count;
}

// The face `wp.mesh_query_ray` reports: the first hit at 0 <= t < max_t, -1 if none, in node `root`'s subtree.
TL_HD int32_t mesh_ray_face(uint64_t id, const vec3f& start, const vec3f& dir, float max_t, int32_t root) {
    float det;
    return mesh_ray_walk(mesh_of(id), start, dir, max_t, &det, root);
}

// Of the ray's hit on `face`: t (which 0), u (1), v (2) or det, Warp's `sign` (3); 0 for a miss.
TL_HD float mesh_ray_hit(uint64_t id, int32_t face, const vec3f& start, const vec3f& dir, int32_t which) {
    const Mesh& m = mesh_of(id);
    if (face < 0 || face >= m.num_tris) return 0.0f;
    float out[4];
    if (!ray_triangle(start, RayShear(dir), mesh_corner(m, face, 0), mesh_corner(m, face, 1), mesh_corner(m, face, 2),
                      &out[0], &out[1], &out[2], &out[3]))
        return 0.0f;
    return out[which];
}

// d mesh_ray_hit(..., which) / d start (wrt 0) or / d dir (wrt 1). t, u and v solve
// start + t dir = a + v (b - a) + w (c - a), u = 1 - v - w, so with M = [-dir, b - a, c - a] and
// x = (t, v, w): M dx = d start + t d dir, and the gradient of r . x is M^-T r (times t for dir).
// det is (n . dir) / |dir[kz]| up to sign (n = (b - a) x (c - a)): its gradient is
// det (n / (n . dir) - e_kz / dir[kz]) in dir, none in start.
TL_HD vec3f mesh_ray_hit_gradient(uint64_t id, int32_t face, const vec3f& start, const vec3f& dir, int32_t which,
                                  int32_t wrt) {
    const Mesh& m = mesh_of(id);
    if (face < 0 || face >= m.num_tris) return vec3f();
    const vec3f a = mesh_corner(m, face, 0), b = mesh_corner(m, face, 1), c = mesh_corner(m, face, 2);
    float hit[4];
    if (!ray_triangle(start, RayShear(dir), a, b, c, &hit[0], &hit[1], &hit[2], &hit[3])) return vec3f();
    if (which == 3) {
        if (wrt == 0) return vec3f();
        const vec3f n = cross(b - a, c - a);
        const int kz = mesh_major_axis(dir);
        vec3f g = n * (hit[3] / dot(n, dir));
        g[kz] -= hit[3] / dir[kz];
        return g;
    }
    double M[3][3];  // columns -dir, b - a, c - a
    for (int k = 0; k < 3; ++k) {
        M[k][0] = -double(dir[k]);
        M[k][1] = double(b[k]) - double(a[k]);
        M[k][2] = double(c[k]) - double(a[k]);
    }
    const double r[3] = {which == 0 ? 1.0 : 0.0, which == 1 ? -1.0 : which == 2 ? 1.0 : 0.0, which == 1 ? -1.0 : 0.0};
    // g = M^-T r = (adj(M) / det M)^T r: the cofactors of M, dotted with r by column of M.
    const double cof[3][3] = {
        {M[1][1] * M[2][2] - M[1][2] * M[2][1], M[1][2] * M[2][0] - M[1][0] * M[2][2], M[1][0] * M[2][1] - M[1][1] * M[2][0]},
        {M[0][2] * M[2][1] - M[0][1] * M[2][2], M[0][0] * M[2][2] - M[0][2] * M[2][0], M[0][1] * M[2][0] - M[0][0] * M[2][1]},
        {M[0][1] * M[1][2] - M[0][2] * M[1][1], M[0][2] * M[1][0] - M[0][0] * M[1][2], M[0][0] * M[1][1] - M[0][1] * M[1][0]}};
    const double det_m = M[0][0] * cof[0][0] + M[0][1] * cof[0][1] + M[0][2] * cof[0][2];
    if (det_m == 0.0) return vec3f();
    const double scale = (wrt == 1 ? double(hit[0]) : 1.0) / det_m;
    vec3f g;
    for (int i = 0; i < 3; ++i)  // (M^-T r)_i = sum_j cof[i][j] r_j / det M
        g[i] = float((cof[i][0] * r[0] + cof[i][1] * r[1] + cof[i][2] * r[2]) * scale);
    return g;
}

// Inside (-1) or outside (1) by three rays along +x, +y, +z: inside when at least two first hit a
// face's back (Warp's mesh_query_inside_ray_tracing); a ray that hits nothing votes outside. 0 when
// the query found no closest face (-1), as Warp leaves it.
TL_HD float mesh_inside_rays(uint64_t id, int32_t face, const vec3f& point) {
    const Mesh& m = mesh_of(id);
    if (!mesh_has_face(m, face)) return 0.0f;
    int votes = 0;
    for (int axis = 0; axis < 3; ++axis) {
        const vec3f dir(float(axis == 0), float(axis == 1), float(axis == 2));
        float det = 0.0f;
        if (mesh_ray_walk(m, point, dir, FLT_MAX, &det) >= 0 && det < 0.0f) ++votes;
    }
    return votes >= 2 ? -1.0f : 1.0f;
}

// Inside (-1) or outside (1) by the parity of n_sample rays' crossings, each along (1, 1, 1) plus a
// perturbation uniform in [-scale, scale] per component, drawn from Warp's generator seeded 42 (x, y,
// z in turn, again while the direction is shorter than 1e-4), inside on a majority or a tie (Warp's
// mesh_query_inside_parity). 0 for no closest face (-1).
TL_HD float mesh_parity_sign(uint64_t id, int32_t face, const vec3f& point, int32_t n_sample, float scale) {
    if (!mesh_has_face(mesh_of(id), face)) return 0.0f;
    Uniforms draw{rand_init(42)};
    int votes = 0;
    for (int i = 0; i < n_sample; ++i) {
        vec3f dir;
        do {
            for (int k = 0; k < 3; ++k) dir[k] = 1.0f + (mul_rounded(scale - -scale, draw.next()) + -scale);
        } while (length_sq(dir) < 1e-8f);
        if (mesh_query_ray_count_intersections(id, point, dir, -1) % 2) ++votes;
    }
    return votes * 2 >= n_sample ? -1.0f : 1.0f;
}

// ---------------------------------------------------------------- boxes

// The next leaf, in depth-first order after node `after`'s subtree (from the root for -1), whose
// box the query's shape `touches(lo, hi)`; -1 when none is left. A `mesh_query_aabb` or
// `mesh_query_sphere` loop visits its faces leaf by leaf. Within node `root`'s subtree (a grouped
// Bvh's group: bvh_get_group_root); -1, or a number that is no node, is the whole tree.
template <class Touches>
TL_HD int32_t mesh_next_leaf(const Mesh& m, int32_t after, Touches touches, int32_t root = -1) {
    const bool whole = root < 0 || root >= m.num_nodes;
    const int32_t end = whole ? m.num_nodes : m.nodes[root].skip(root);
    int32_t n = after < 0 ? (whole ? 0 : root) : m.nodes[after].skip(after);
    while (n < end) {
        const MeshNode& node = m.nodes[n];
        if (!touches(node.lower, node.upper)) {
            n = node.skip(n);
        } else if (node.leaf()) {
            return n;
        } else {
            ++n;
        }
    }
    return -1;
}

TL_HD int32_t mesh_box_next_leaf(uint64_t id, int32_t after, int32_t root, const vec3f& lo, const vec3f& hi) {
    return mesh_next_leaf(mesh_of(id), after, [&](const vec3f& a, const vec3f& b) { return boxes_overlap(lo, hi, a, b); },
                          root);
}

// The root of group `group`'s subtree in a grouped Bvh or mesh, -1 (the whole tree, as Warp's) for a group it lacks.
TL_HD int32_t bvh_get_group_root(uint64_t id, int32_t group) {
    const Mesh& m = mesh_of(id);
    int32_t lo = 0, hi = m.num_groups;  // group_ids ascending
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (m.group_ids[mid] < group) lo = mid + 1;
        else hi = mid;
    }
    return lo < m.num_groups && m.group_ids[lo] == group ? m.group_roots[lo] : -1;
}

TL_HD int32_t mesh_leaf_begin(uint64_t id, int32_t node) { return mesh_of(id).nodes[node].first(); }
TL_HD int32_t mesh_leaf_end(uint64_t id, int32_t node) {
    const MeshNode& leaf = mesh_of(id).nodes[node];
    return leaf.first() + leaf.count();
}

// The face at position k of the leaves' order if its box (at the last build or refit) overlaps [lo, hi], else -1.
TL_HD int32_t mesh_box_face(uint64_t id, int32_t k, const vec3f& lo, const vec3f& hi) {
    const Mesh& m = mesh_of(id);
    const int32_t face = m.face_order[k];
    return boxes_overlap(lo, hi, m.face_lowers[face], m.face_uppers[face]) ? face : -1;
}

// ---------------------------------------------------------------- a Bvh's items
// A Bvh (the loader's tilec-rt/spatial.py) is this descriptor without points: its items' boxes
// (the user's lowers and uppers, read live) in face_lowers and face_uppers, the walks above over its
// tree, and each item tested by its box alone (Warp's bvh_query_next).

// Whether the ray reaches the box before max_dist (in multiples of dir: Warp's half-open bound).
TL_HD bool ray_reaches_box(const vec3f& start, const vec3f& dir, float max_dist, const vec3f& lo, const vec3f& hi) {
    const vec3f rcp(1.0f / dir[0], 1.0f / dir[1], 1.0f / dir[2]);
    float t;
    return ray_slabs(start, rcp, lo, hi, &t) && !(t >= max_dist);
}

// A capsule sweep (Warp's bvh_query_capsule): the box grown by the radius on every side, then Warp's
// robust slab test (an axis where the direction, as Warp recovers it from its reciprocal, is 0 bounds
// nothing but rejects a start outside the slab), its closed max_dist.
TL_HD bool capsule_reaches_box(const vec3f& start, const vec3f& dir, float radius, float max_dist, const vec3f& box_lo,
                               const vec3f& box_hi) {
    const float r = greatest(radius, 0.0f);
    const vec3f rcp(1.0f / dir[0], 1.0f / dir[1], 1.0f / dir[2]);
    const vec3f recovered(1.0f / rcp[0], 1.0f / rcp[1], 1.0f / rcp[2]);
    const vec3f grow(r, r, r);
    float t;
    return ray_slabs_robust(start, recovered, rcp, box_lo - grow, box_hi + grow, &t) && !(t > max_dist);
}

TL_HD int32_t mesh_capsule_next_leaf(uint64_t id, int32_t after, int32_t root, const vec3f& start, const vec3f& dir,
                                     float radius, float max_dist) {
    return mesh_next_leaf(mesh_of(id), after, [&](const vec3f& lo, const vec3f& hi) {
        return capsule_reaches_box(start, dir, radius, max_dist, lo, hi); }, root);
}

TL_HD int32_t bvh_capsule_item(uint64_t id, int32_t k, const vec3f& start, const vec3f& dir, float radius,
                               float max_dist) {
    const Mesh& m = mesh_of(id);
    const int32_t item = m.face_order[k];
    return capsule_reaches_box(start, dir, radius, max_dist, m.face_lowers[item], m.face_uppers[item]) ? item : -1;
}

TL_HD int32_t mesh_ray_next_leaf(uint64_t id, int32_t after, int32_t root, const vec3f& start, const vec3f& dir,
                                 float max_dist) {
    return mesh_next_leaf(mesh_of(id), after, [&](const vec3f& lo, const vec3f& hi) {
        return ray_reaches_box(start, dir, max_dist, lo, hi); }, root);
}

// The item at position k of the leaves' order if the ray reaches its box before max_dist, else -1.
TL_HD int32_t bvh_ray_item(uint64_t id, int32_t k, const vec3f& start, const vec3f& dir, float max_dist) {
    const Mesh& m = mesh_of(id);
    const int32_t item = m.face_order[k];
    return ray_reaches_box(start, dir, max_dist, m.face_lowers[item], m.face_uppers[item]) ? item : -1;
}

// ---------------------------------------------------------------- spheres

// Whether the sphere reaches the box: its centre's squared distance to it, per axis, within r^2
// (Warp's intersect_sphere_aabb).
TL_HD bool sphere_reaches_box(const vec3f& centre, float radius_sq, const vec3f& lo, const vec3f& hi) {
    float d[3];
    for (int k = 0; k < 3; ++k) d[k] = greatest(greatest(lo[k] - centre[k], centre[k] - hi[k]), 0.0f);
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= radius_sq;
}

TL_HD float sphere_radius_sq(float radius) {  // a negative radius is a point's: Warp's max(radius, 0)^2
    const float r = greatest(radius, 0.0f);
    return r * r;
}

TL_HD int32_t mesh_sphere_next_leaf(uint64_t id, int32_t after, int32_t root, const vec3f& centre, float radius) {
    const float r2 = sphere_radius_sq(radius);
    return mesh_next_leaf(mesh_of(id), after, [&](const vec3f& lo, const vec3f& hi) {
        return sphere_reaches_box(centre, r2, lo, hi); }, root);
}

// The face at position k of the leaves' order if the sphere reaches its box and then its closest point
// (a face without area: its longest edge's), else -1 (Warp's sphere query's face test).
TL_HD int32_t mesh_sphere_face(uint64_t id, int32_t k, const vec3f& centre, float radius) {
    const Mesh& m = mesh_of(id);
    const float r2 = sphere_radius_sq(radius);
    const int32_t face = m.face_order[k];
    if (!sphere_reaches_box(centre, r2, m.face_lowers[face], m.face_uppers[face])) return -1;
    const vec3f a = mesh_corner(m, face, 0), b = mesh_corner(m, face, 1), c = mesh_corner(m, face, 2);
    const vec3f ab = b - a, ac = c - a, n = cross(ab, ac);
    vec3f closest;
    if (dot(n, n) == 0.0f) {
        const vec3f bc = c - b;
        const float ab2 = dot(ab, ab), ac2 = dot(ac, ac), bc2 = dot(bc, bc);
        const bool use_ab = ab2 >= ac2 && ab2 >= bc2, use_ac = !use_ab && ac2 >= bc2;
        const vec3f p = use_ab || use_ac ? a : b, q = use_ab ? b : c;
        const float length_sq_pq = use_ab ? ab2 : use_ac ? ac2 : bc2;
        const vec3f pq = q - p;
        const float t = length_sq_pq > 0.0f ? least(greatest(dot(centre - p, pq) / length_sq_pq, 0.0f), 1.0f) : 0.0f;
        closest = p + pq * t;
    } else {
        float u, v;
        closest_point_weights(a, b, c, centre, &u, &v);
        closest = a * u + b * v + c * (1.0f - u - v);
    }
    const vec3f d = closest - centre;
    return dot(d, d) <= r2 ? face : -1;
}

// The item at position k of the leaves' order if the sphere reaches its box, else -1 (a Bvh's sphere
// query: the box alone, where a mesh's tests the face's closest point too).
TL_HD int32_t bvh_sphere_item(uint64_t id, int32_t k, const vec3f& centre, float radius) {
    const Mesh& m = mesh_of(id);
    const int32_t item = m.face_order[k];
    return sphere_reaches_box(centre, sphere_radius_sq(radius), m.face_lowers[item], m.face_uppers[item]) ? item : -1;
}

// ---------------------------------------------------------------- a block's shared walk
// Warp's tiled queries (tile_mesh_query_aabb, tile_bvh_query_aabb / _ray): each step hands the block's
// lanes the next block_dim items the shape touches, lane l the l-th (-1 past the last). The walk's
// place is a cursor, the leaf and the next position in it packed in an int64 (-1: walked to the end);
// each lane finds its item from the cursor, and every lane moves the cursor alike.

// The shape's test of a box: 0 overlaps the box [a, b], 1 the ray from a along b (unbounded, t >= 0 at the box's far side).
TL_HD bool batch_touches(int32_t test, const vec3f& a, const vec3f& b, const vec3f& lo, const vec3f& hi) {
    if (test == 0) return boxes_overlap(a, b, lo, hi);
    const vec3f rcp(1.0f / b[0], 1.0f / b[1], 1.0f / b[2]);
    float t;
    return ray_slabs(a, rcp, lo, hi, &t);
}

TL_HD int64_t batch_cursor(int32_t leaf, int32_t position) { return (int64_t(leaf) << 32) | uint32_t(position); }

// From `cursor`, each item the shape touches in the walk's order: visit(item) consumes it (true) or
// stops the walk before it (false). The cursor at the item it stopped before, or -1 at the end.
template <class Visit>
TL_HD int64_t batch_walk(const Mesh& m, int64_t cursor, int32_t test, const vec3f& a, const vec3f& b, Visit visit) {
    if (cursor < 0) return -1;
    int32_t leaf = int32_t(cursor >> 32), k = int32_t(uint32_t(cursor));
    const auto touches = [&](const vec3f& lo, const vec3f& hi) { return batch_touches(test, a, b, lo, hi); };
    while (leaf >= 0) {
        for (const int32_t end = m.nodes[leaf].first() + m.nodes[leaf].count(); k < end; ++k) {
            const int32_t item = m.face_order[k];
            if (touches(m.face_lowers[item], m.face_uppers[item]) && !visit(item)) return batch_cursor(leaf, k);
        }
        leaf = mesh_next_leaf(m, leaf, touches);
        if (leaf >= 0) k = m.nodes[leaf].first();
    }
    return -1;
}

TL_HD int64_t mesh_batch_start(uint64_t id, const vec3f& a, const vec3f& b, int32_t test) {
    const Mesh& m = mesh_of(id);
    const int32_t leaf = mesh_next_leaf(m, -1, [&](const vec3f& lo, const vec3f& hi) {
        return batch_touches(test, a, b, lo, hi); });
    return leaf < 0 ? -1 : batch_cursor(leaf, m.nodes[leaf].first());
}

// The lane-th item from the cursor, -1 if the walk ends before it.
TL_HD int32_t mesh_batch_item(uint64_t id, int64_t cursor, int32_t lane, const vec3f& a, const vec3f& b, int32_t test) {
    int32_t seen = 0, found = -1;
    batch_walk(mesh_of(id), cursor, test, a, b, [&](int32_t item) {
        if (seen == lane) {
            found = item;
            return false;
        }
        ++seen;
        return true;
    });
    return found;
}

// The cursor after `count` items.
TL_HD int64_t mesh_batch_advance(uint64_t id, int64_t cursor, int32_t count, const vec3f& a, const vec3f& b,
                                 int32_t test) {
    int32_t seen = 0;
    return batch_walk(mesh_of(id), cursor, test, a, b, [&](int32_t) { return seen++ < count; });
}

TL_HD int32_t mesh_get_group_root(uint64_t id, int32_t group) { return bvh_get_group_root(id, group); }

}  // namespace tl
