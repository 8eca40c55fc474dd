// tilec runtime: quaternions (x, y, z, w) and rigid transforms (p, q) as Warp defines them, on
// tl::vec<4, T> and tl::vec<7, T> (vec.h); the checker guarantees which family a vec is.
// Gradients are derived by the compiler from these forward functions (ops/adjoints_values.py).
#pragma once
#include "vec.h"

namespace tl {

template <class T> TL_HD vec<4, T> quat_identity() { return vec<4, T>(T(0), T(0), T(0), T(1)); }
template <class T> TL_HD vec<7, T> transform_identity() { return vec<7, T>(T(0), T(0), T(0), T(0), T(0), T(0), T(1)); }
template <class T> TL_HD vec<3, T> quat_xyz(const vec<4, T>& q) { return vec<3, T>(q.c[0], q.c[1], q.c[2]); }

// The Hamilton product a * b.
template <class T> TL_HD vec<4, T> quat_mul(const vec<4, T>& a, const vec<4, T>& b) {
    const compute_t<T> ax = cv(a.c[0]), ay = cv(a.c[1]), az = cv(a.c[2]), aw = cv(a.c[3]);
    const compute_t<T> bx = cv(b.c[0]), by = cv(b.c[1]), bz = cv(b.c[2]), bw = cv(b.c[3]);
    return vec<4, T>(aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz);
}
// The conjugate (Warp's quat_inverse: the inverse rotation of a unit quaternion).
template <class T> TL_HD vec<4, T> quat_inverse(const vec<4, T>& q) {
    return vec<4, T>(T(-cv(q.c[0])), T(-cv(q.c[1])), T(-cv(q.c[2])), q.c[3]);
}
// v rotated by q: v (2w^2 - 1) + 2 u (u . v) + 2 w (u x v), u = q.xyz.
template <class T> TL_HD vec<3, T> quat_rotate(const vec<4, T>& q, const vec<3, T>& v) {
    const vec<3, T> u = quat_xyz(q);
    const compute_t<T> w = cv(q.c[3]);
    const T c = T(compute_t<T>(2) * w * w - compute_t<T>(1));
    const T d = T(compute_t<T>(2) * cv(dot(u, v)));
    return v * c + u * d + cross(u, v) * T(compute_t<T>(2) * w);
}
template <class T> TL_HD vec<3, T> quat_rotate_inv(const vec<4, T>& q, const vec<3, T>& v) {
    return quat_rotate(quat_inverse(q), v);
}
template <class T> TL_HD vec<4, T> quat_from_axis_angle(const vec<3, T>& axis, T angle) {
    const compute_t<T> half = cv(angle) * compute_t<T>(0.5);
    const T s = T(std::sin(half));
    return vec<4, T>(axis * s, vec<1, T>(T(std::cos(half))));
}

// ---------------------------------------------------------------- transforms: p = c[0..2], q = c[3..6]
template <class T> TL_HD vec<3, T> transform_get_translation(const vec<7, T>& t) { return vec<3, T>(t.c[0], t.c[1], t.c[2]); }
template <class T> TL_HD vec<4, T> transform_get_rotation(const vec<7, T>& t) { return vec<4, T>(t.c[3], t.c[4], t.c[5], t.c[6]); }
template <class T> TL_HD vec<3, T> transform_vector(const vec<7, T>& t, const vec<3, T>& v) {
    return quat_rotate(transform_get_rotation(t), v);
}
template <class T> TL_HD vec<3, T> transform_point(const vec<7, T>& t, const vec<3, T>& p) {
    return transform_vector(t, p) + transform_get_translation(t);
}
template <class T> TL_HD vec<7, T> transform_multiply(const vec<7, T>& a, const vec<7, T>& b) {
    return vec<7, T>(transform_point(a, transform_get_translation(b)),
                     quat_mul(transform_get_rotation(a), transform_get_rotation(b)));
}
template <class T> TL_HD vec<7, T> transform_inverse(const vec<7, T>& t) {
    const vec<4, T> qi = quat_inverse(transform_get_rotation(t));
    return vec<7, T>(-quat_rotate(qi, transform_get_translation(t)), qi);
}

}  // namespace tl
