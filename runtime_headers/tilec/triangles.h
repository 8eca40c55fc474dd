// tilec runtime: whether two triangles intersect (Warp's wp.intersect_tri_tri), by Moller's
// interval test ("A Fast Triangle-Triangle Intersection Test", 1997, its division-free form): each
// triangle's corners are placed against the other's plane (distances under 1e-6 count as on it, as
// Warp's do); if neither lies wholly on one side, both cut the line where the planes meet, and they
// intersect where their intervals on it overlap; coplanar triangles are compared in the axis plane
// where they are largest, edge against edge, then corner inside the other. The arithmetic is Warp's
// (the same products in the same order), so borderline pairs are decided as Warp decides them.
#pragma once
#include <cmath>
#include "vec.h"

namespace tl {

template <class T>
struct TriangleSides {  // the signed distances of a triangle's corners to a plane, and two of their products
    T d[3];
    T d01, d02;

    TL_HD TriangleSides(const vec<3, T>& normal, T offset, const vec<3, T>& p0, const vec<3, T>& p1,
                        const vec<3, T>& p2) {
        const vec<3, T>* p[3] = {&p0, &p1, &p2};
        for (int k = 0; k < 3; ++k) {
            d[k] = dot(normal, *p[k]) + offset;
            if (std::fabs(d[k]) < 0.000001) d[k] = T(0);  // on the plane (a double compare, as Warp's)
        }
        d01 = d[0] * d[1];
        d02 = d[0] * d[2];
    }

    TL_HD bool one_side() const { return d01 > T(0) && d02 > T(0); }
};

// Whether segment a0-a1 crosses an edge of triangle b in the axis plane (i0, i1) (Antonio's test).
template <class T>
TL_HD bool edge_crosses_triangle(const vec<3, T>& a0, const vec<3, T>& a1, const vec<3, T>* b, int i0, int i1) {
    const T ax = a1[i0] - a0[i0], ay = a1[i1] - a0[i1];
    for (int k = 0; k < 3; ++k) {
        const vec<3, T>& b0 = b[k];
        const vec<3, T>& b1 = b[(k + 1) % 3];
        const T bx = b0[i0] - b1[i0], by = b0[i1] - b1[i1];
        const T cx = a0[i0] - b0[i0], cy = a0[i1] - b0[i1];
        const T f = ay * bx - ax * by;
        const T d = by * cx - bx * cy;
        if ((f > T(0) && d >= T(0) && d <= f) || (f < T(0) && d <= T(0) && d >= f)) {
            const T e = ax * cy - ay * cx;
            if (f > T(0) ? (e >= T(0) && e <= f) : (e <= T(0) && e >= f)) return true;
        }
    }
    return false;
}

// Whether point p is strictly inside triangle b in the axis plane (i0, i1).
template <class T>
TL_HD bool point_in_triangle(const vec<3, T>& p, const vec<3, T>* b, int i0, int i1) {
    T side[3];
    for (int k = 0; k < 3; ++k) {
        const vec<3, T>& from = b[k];
        const vec<3, T>& to = b[(k + 1) % 3];
        const T a = to[i1] - from[i1];
        const T c = -(to[i0] - from[i0]);
        const T offset = -a * from[i0] - c * from[i1];
        side[k] = a * p[i0] + c * p[i1] + offset;
    }
    return side[0] * side[1] > 0.0 && side[0] * side[2] > 0.0;
}

template <class T>
TL_HD int coplanar_triangles_intersect(const vec<3, T>& normal, const vec<3, T>* v, const vec<3, T>* u) {
    const T nx = std::fabs(normal[0]), ny = std::fabs(normal[1]), nz = std::fabs(normal[2]);
    int i0, i1;  // the axis plane where the triangles' projection is largest
    if (nx > ny) {
        i0 = nx > nz ? 1 : 0;
        i1 = nx > nz ? 2 : 1;
    } else {
        i0 = 0;
        i1 = nz > ny ? 1 : 2;
    }
    for (int k = 0; k < 3; ++k)
        if (edge_crosses_triangle(v[k], v[(k + 1) % 3], u, i0, i1)) return 1;
    return point_in_triangle(v[0], u, i0, i1) || point_in_triangle(u[0], v, i0, i1) ? 1 : 0;
}

// A triangle's interval on the planes' line, unnormalised: the corner alone on its side `a`, the
// other two's offsets `b`, `c` (times that corner's distance) and the distance differences x0, x1.
template <class T>
struct LineInterval {
    T a, b, c, x0, x1;
};

// Which corner is alone on its side of the other's plane (-1: the triangles are coplanar).
template <class T>
TL_HD int lone_corner(const TriangleSides<T>& s) {
    if (s.d01 > T(0)) return 2;
    if (s.d02 > T(0)) return 1;
    if (s.d[1] * s.d[2] > T(0) || s.d[0] != T(0)) return 0;
    if (s.d[1] != T(0)) return 1;
    if (s.d[2] != T(0)) return 2;
    return -1;
}

template <class T>
TL_HD LineInterval<T> line_interval(const T* p, const TriangleSides<T>& s, int lone) {
    const int first = lone == 0 ? 1 : 0, second = lone == 2 ? 1 : 2;  // the other two, in order
    return {p[lone], (p[first] - p[lone]) * s.d[lone], (p[second] - p[lone]) * s.d[lone], s.d[lone] - s.d[first],
            s.d[lone] - s.d[second]};
}

template <class T>
TL_HD int intersect_tri_tri(const vec<3, T>& v0, const vec<3, T>& v1, const vec<3, T>& v2, const vec<3, T>& u0,
                            const vec<3, T>& u1, const vec<3, T>& u2) {
    const vec<3, T> v[3] = {v0, v1, v2}, u[3] = {u0, u1, u2};
    const vec<3, T> n1 = cross(v1 - v0, v2 - v0);
    const TriangleSides<T> du(n1, -dot(n1, v0), u0, u1, u2);
    if (du.one_side()) return 0;
    const vec<3, T> n2 = cross(u1 - u0, u2 - u0);
    const TriangleSides<T> dv(n2, -dot(n2, u0), v0, v1, v2);
    if (dv.one_side()) return 0;
    const vec<3, T> line = cross(n1, n2);
    int axis = 0;  // the line's largest component: the corners' coordinate on it stands in for their position
    T largest = std::fabs(line[0]);
    for (int k = 1; k < 3; ++k)
        if (std::fabs(line[k]) > largest) { largest = std::fabs(line[k]); axis = k; }
    const T vp[3] = {v0[axis], v1[axis], v2[axis]}, up[3] = {u0[axis], u1[axis], u2[axis]};
    const int lone_v = lone_corner(dv), lone_u = lone_corner(du);
    if (lone_v < 0 || lone_u < 0) return coplanar_triangles_intersect(n1, v, u);
    const LineInterval<T> i = line_interval(vp, dv, lone_v), j = line_interval(up, du, lone_u);
    const T xx = i.x0 * i.x1, yy = j.x0 * j.x1, xxyy = xx * yy;
    T s0 = i.a * xxyy + i.b * i.x1 * yy, s1 = i.a * xxyy + i.c * i.x0 * yy;
    T t0 = j.a * xxyy + j.b * xx * j.x1, t1 = j.a * xxyy + j.c * xx * j.x0;
    if (s0 > s1) { const T s = s0; s0 = s1; s1 = s; }
    if (t0 > t1) { const T t = t0; t0 = t1; t1 = t; }
    return s1 < t0 || t1 < s0 ? 0 : 1;
}

}  // namespace tl
