// tilec runtime: Warp's vector and matrix values. tl::vec<N, T> holds every vector family
// (vecN, quat, transform, spatial_vector, declared vectors) and tl::mat<M, N, T> every matrix
// (matMN, spatial_matrix), row-major: plain structs with exactly the components' bytes, so an
// array of them is Warp's (and numpy's trailing-axes) layout. Family semantics (the Hamilton
// product, transform composition) are separate functions (quat.h), not separate types.
// Arithmetic happens in compute_t<T> (float for half). Gradients are derived by the compiler from
// these forward functions (ops/adjoints_values.py); the few adjoint helpers that are not plain
// compositions sit next to their forward function, named adj_*.
#pragma once
#include "core.h"
#include "scalar.h"
#include "atomic.h"

namespace tl {

template <class T> struct same_type { using type = T; };
template <class T> using exactly = typename same_type<T>::type;  // a parameter that takes no part in deduction

template <int N, class T> struct vec {
    T c[N] = {};
    vec() = default;
    TL_HD explicit vec(T s) {  // wp.vec3(s): every component s
        for (int i = 0; i < N; ++i) c[i] = s;
    }
    template <class... A, class = typename std::enable_if<sizeof...(A) == N && (N > 1)>::type>
    TL_HD vec(A... a) : c{T(compute_t<T>(a))...} {}
    template <class U> TL_HD explicit vec(const vec<N, U>& o) {  // wp.vec3d(v3f): component-wise conversion
        for (int i = 0; i < N; ++i) c[i] = T(compute_t<T>(compute_t<U>(o.c[i])));
    }
    template <int A, int B, class = typename std::enable_if<A + B == N>::type>
    TL_HD vec(const vec<A, T>& a, const vec<B, T>& b) {  // wp.transform(p, q): the parts one after the other
        for (int i = 0; i < A; ++i) c[i] = a.c[i];
        for (int i = 0; i < B; ++i) c[A + i] = b.c[i];
    }
    template <int A, class S, class = typename std::enable_if<A + 1 == N>::type>
    TL_HD vec(const vec<A, T>& head, S last) {  // wp.quat(ijk, real): the vector part, then the real part
        for (int i = 0; i < A; ++i) c[i] = head.c[i];
        c[A] = T(compute_t<T>(last));
    }
    TL_HD T& operator[](int i) { return c[i]; }
    TL_HD const T& operator[](int i) const { return c[i]; }
};

template <int M, int N, class T> struct mat {
    T c[M * N] = {};  // row-major
    mat() = default;
    TL_HD explicit mat(T s) {  // wp.mat33(s): every component s
        for (int i = 0; i < M * N; ++i) c[i] = s;
    }
    template <class... A, class = typename std::enable_if<sizeof...(A) == M * N && (M * N > 1)>::type>
    TL_HD mat(A... a) : c{T(compute_t<T>(a))...} {}
    template <class U> TL_HD explicit mat(const mat<M, N, U>& o) {
        for (int i = 0; i < M * N; ++i) c[i] = T(compute_t<T>(compute_t<U>(o.c[i])));
    }
    TL_HD T& operator()(int i, int j) { return c[i * N + j]; }
    TL_HD const T& operator()(int i, int j) const { return c[i * N + j]; }
};

// ---------------------------------------------------------------- components
// Out-of-range indices read 0 and writes are dropped (the checker rejects constant ones).
template <int N, class T> TL_HD T extract(const vec<N, T>& v, int i) { return (i >= 0 && i < N) ? v.c[i] : T(0); }
template <int M, int N, class T> TL_HD T extract(const mat<M, N, T>& m, int i, int j) {
    return (i >= 0 && i < M && j >= 0 && j < N) ? m.c[i * N + j] : T(0);
}
template <int M, int N, class T> TL_HD vec<N, T> extract(const mat<M, N, T>& m, int i) {  // a row
    vec<N, T> r;
    if (i >= 0 && i < M)
        for (int j = 0; j < N; ++j) r.c[j] = m.c[i * N + j];
    return r;
}
// v with component i replaced (v[i] = x as a value), and the row / entry forms of matrices.
template <int N, class T> TL_HD vec<N, T> insert(vec<N, T> v, exactly<T> x, int i) {
    if (i >= 0 && i < N) v.c[i] = x;
    return v;
}
template <int M, int N, class T> TL_HD mat<M, N, T> insert(mat<M, N, T> m, exactly<T> x, int i, int j) {
    if (i >= 0 && i < M && j >= 0 && j < N) m.c[i * N + j] = x;
    return m;
}
template <int M, int N, class T> TL_HD mat<M, N, T> insert(mat<M, N, T> m, const vec<N, T>& row, int i) {
    if (i >= 0 && i < M)
        for (int j = 0; j < N; ++j) m.c[i * N + j] = row.c[j];
    return m;
}

// ---------------------------------------------------------------- arithmetic
// Component-wise results are written as one loop each: plain code that vectorises.
template <class T> TL_HD compute_t<T> cv(T x) { return compute_t<T>(x); }

template <int N, class T> TL_HD vec<N, T> operator+(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(cv(a.c[k]) + cv(b.c[k])); return r; }
template <int N, class T> TL_HD vec<N, T> operator-(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(cv(a.c[k]) - cv(b.c[k])); return r; }
template <int N, class T> TL_HD vec<N, T> operator-(const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(-cv(a.c[k])); return r; }
template <int N, class T> TL_HD vec<N, T> operator*(const vec<N, T>& a, exactly<T> s) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(cv(a.c[k]) * cv(s)); return r; }
template <int N, class T> TL_HD vec<N, T> operator*(exactly<T> s, const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(cv(s) * cv(a.c[k])); return r; }
template <int N, class T> TL_HD vec<N, T> operator/(const vec<N, T>& a, exactly<T> s) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(divide(cv(a.c[k]), cv(s))); return r; }
template <int N, class T> TL_HD vec<N, T> operator/(exactly<T> s, const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(divide(cv(s), cv(a.c[k]))); return r; }
template <int N, class T> TL_HD bool operator==(const vec<N, T>& a, const vec<N, T>& b) {
    for (int k = 0; k < N; ++k)
        if (!(a.c[k] == b.c[k])) return false;
    return true;
}
template <int N, class T> TL_HD bool operator!=(const vec<N, T>& a, const vec<N, T>& b) { return !(a == b); }

template <int M, int N, class T> TL_HD mat<M, N, T> operator+(const mat<M, N, T>& a, const mat<M, N, T>& b) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(cv(a.c[k]) + cv(b.c[k])); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator-(const mat<M, N, T>& a, const mat<M, N, T>& b) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(cv(a.c[k]) - cv(b.c[k])); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator-(const mat<M, N, T>& a) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(-cv(a.c[k])); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator*(const mat<M, N, T>& a, exactly<T> s) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(cv(a.c[k]) * cv(s)); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator*(exactly<T> s, const mat<M, N, T>& a) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(cv(s) * cv(a.c[k])); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator/(const mat<M, N, T>& a, exactly<T> s) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(divide(cv(a.c[k]), cv(s))); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> operator/(exactly<T> s, const mat<M, N, T>& a) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(divide(cv(s), cv(a.c[k]))); return r; }
template <int M, int N, class T> TL_HD bool operator==(const mat<M, N, T>& a, const mat<M, N, T>& b) {
    for (int k = 0; k < M * N; ++k)
        if (!(a.c[k] == b.c[k])) return false;
    return true;
}
template <int M, int N, class T> TL_HD bool operator!=(const mat<M, N, T>& a, const mat<M, N, T>& b) { return !(a == b); }

// The bitwise operators of integer vectors and matrices, component by component (as Warp's);
// abs and sign of vectors too (Warp has no matrix overload of those).
#define TL_VALUE_BITWISE(OP)                                                                               \
    template <int N, class T, class = typename std::enable_if<std::is_integral<T>::value>::type>          \
    TL_HD vec<N, T> operator OP(const vec<N, T>& a, const vec<N, T>& b) {                                 \
        vec<N, T> r;                                                                                      \
        for (int k = 0; k < N; ++k) r.c[k] = T(a.c[k] OP b.c[k]);                                         \
        return r;                                                                                         \
    }                                                                                                     \
    template <int M, int N, class T, class = typename std::enable_if<std::is_integral<T>::value>::type>   \
    TL_HD mat<M, N, T> operator OP(const mat<M, N, T>& a, const mat<M, N, T>& b) {                        \
        mat<M, N, T> r;                                                                                   \
        for (int k = 0; k < M * N; ++k) r.c[k] = T(a.c[k] OP b.c[k]);                                     \
        return r;                                                                                         \
    }
TL_VALUE_BITWISE(&)
TL_VALUE_BITWISE(|)
TL_VALUE_BITWISE(^)
TL_VALUE_BITWISE(<<)
TL_VALUE_BITWISE(>>)
#undef TL_VALUE_BITWISE
template <int N, class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
TL_HD vec<N, T> operator~(const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(~a.c[k]); return r; }
template <int M, int N, class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
TL_HD mat<M, N, T> operator~(const mat<M, N, T>& a) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(~a.c[k]); return r; }
template <int N, class T> TL_HD vec<N, T> abs(const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(abs(cv(a.c[k]))); return r; }
template <int N, class T> TL_HD vec<N, T> sign(const vec<N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(sign(cv(a.c[k]))); return r; }
// min and max of two vectors: component by component, as the scalar ones (fmin / fmax on floats, Warp's).
template <int N, class T> TL_HD vec<N, T> min(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(min(cv(a.c[k]), cv(b.c[k]))); return r; }
template <int N, class T> TL_HD vec<N, T> max(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(max(cv(a.c[k]), cv(b.c[k]))); return r; }

// In-place sums (the tile runtime accumulates adjoints with dst.data[e] += g).
template <int N, class T> TL_HD vec<N, T>& operator+=(vec<N, T>& a, const vec<N, T>& b) { return a = a + b; }
template <int N, class T> TL_HD vec<N, T>& operator-=(vec<N, T>& a, const vec<N, T>& b) { return a = a - b; }
template <int M, int N, class T> TL_HD mat<M, N, T>& operator+=(mat<M, N, T>& a, const mat<M, N, T>& b) { return a = a + b; }
template <int M, int N, class T> TL_HD mat<M, N, T>& operator-=(mat<M, N, T>& a, const mat<M, N, T>& b) { return a = a - b; }

// Matrix products: m * v and m @ v (a column), v * m and v @ m (a row), m * m.
template <int M, int N, class T> TL_HD vec<M, T> operator*(const mat<M, N, T>& m, const vec<N, T>& v) {
    vec<M, T> r;
    for (int i = 0; i < M; ++i) {
        compute_t<T> s = 0;
        for (int j = 0; j < N; ++j) s += cv(m.c[i * N + j]) * cv(v.c[j]);
        r.c[i] = T(s);
    }
    return r;
}
template <int M, int N, class T> TL_HD vec<N, T> operator*(const vec<M, T>& v, const mat<M, N, T>& m) {
    vec<N, T> r;
    for (int j = 0; j < N; ++j) {
        compute_t<T> s = 0;
        for (int i = 0; i < M; ++i) s += cv(v.c[i]) * cv(m.c[i * N + j]);
        r.c[j] = T(s);
    }
    return r;
}
template <int M, int K, int N, class T> TL_HD mat<M, N, T> operator*(const mat<M, K, T>& a, const mat<K, N, T>& b) {
    mat<M, N, T> r;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            compute_t<T> s = 0;
            for (int k = 0; k < K; ++k) s += cv(a.c[i * K + k]) * cv(b.c[k * N + j]);
            r.c[i * N + j] = T(s);
        }
    return r;
}
template <class A, class B> TL_HD auto matmul(const A& a, const B& b) { return a * b; }

// ---------------------------------------------------------------- atomics on array elements
// Component by component (Warp's vector atomics are per component too).
template <int N, class T> TL_HD vec<N, T> atomic_add_ptr(vec<N, T>* p, vec<N, T> v) {
    vec<N, T> old;
    for (int k = 0; k < N; ++k) old.c[k] = atomic_add_ptr(&p->c[k], v.c[k]);
    return old;
}
template <int M, int N, class T> TL_HD mat<M, N, T> atomic_add_ptr(mat<M, N, T>* p, mat<M, N, T> v) {
    mat<M, N, T> old;
    for (int k = 0; k < M * N; ++k) old.c[k] = atomic_add_ptr(&p->c[k], v.c[k]);
    return old;
}
template <int N, class T> TL_HD vec<N, T> atomic_extreme_ptr(vec<N, T>* p, vec<N, T> v, int kind) {
    vec<N, T> old;
    for (int k = 0; k < N; ++k) old.c[k] = atomic_extreme_ptr(&p->c[k], v.c[k], kind);
    return old;
}
template <int M, int N, class T> TL_HD mat<M, N, T> atomic_extreme_ptr(mat<M, N, T>* p, mat<M, N, T> v, int kind) {
    mat<M, N, T> old;
    for (int k = 0; k < M * N; ++k) old.c[k] = atomic_extreme_ptr(&p->c[k], v.c[k], kind);
    return old;
}
// the adjoint of atomic_min / atomic_max: each component that won takes its adjoint (atomic.h)
template <int N, class T> TL_HD vec<N, T> extreme_take_ptr(const vec<N, T>* final_value, vec<N, T>* adj, vec<N, T> v) {
    vec<N, T> taken;
    for (int k = 0; k < N; ++k) taken.c[k] = extreme_take_ptr(&final_value->c[k], &adj->c[k], v.c[k]);
    return taken;
}
template <int M, int N, class T>
TL_HD mat<M, N, T> extreme_take_ptr(const mat<M, N, T>* final_value, mat<M, N, T>* adj, mat<M, N, T> v) {
    mat<M, N, T> taken;
    for (int k = 0; k < M * N; ++k) taken.c[k] = extreme_take_ptr(&final_value->c[k], &adj->c[k], v.c[k]);
    return taken;
}
template <int N, class T> TL_HD vec<N, T> atomic_bit_ptr(vec<N, T>* p, vec<N, T> v, char op) {
    vec<N, T> old;
    for (int k = 0; k < N; ++k) old.c[k] = atomic_bit_ptr(&p->c[k], v.c[k], op);
    return old;
}
template <int M, int N, class T> TL_HD mat<M, N, T> atomic_bit_ptr(mat<M, N, T>* p, mat<M, N, T> v, char op) {
    mat<M, N, T> old;
    for (int k = 0; k < M * N; ++k) old.c[k] = atomic_bit_ptr(&p->c[k], v.c[k], op);
    return old;
}
// t[i] &= |= ^= v on a shared tile of integer vectors or matrices (tile_bit_*_item).
template <int N, class T> TL_HD void shared_atomic_bit(vec<N, T>* p, vec<N, T> v, char Op) {
    for (int k = 0; k < N; ++k) shared_atomic_bit(&p->c[k], v.c[k], Op);
}
template <int M, int N, class T> TL_HD void shared_atomic_bit(mat<M, N, T>* p, mat<M, N, T> v, char Op) {
    for (int k = 0; k < M * N; ++k) shared_atomic_bit(&p->c[k], v.c[k], Op);
}
// a[i].x = value: the element's indices, then the component's (1 for a vector's component or a
// matrix row, 2 for a matrix entry). Only that component is written: threads writing other
// components of the same element do not race.
template <int N, class T> TL_HD void store_part(vec<N, T>* p, T x, const int64_t* k, int) {
    if (k[0] >= 0 && k[0] < N) p->c[k[0]] = x;
}
template <int M, int N, class T> TL_HD void store_part(mat<M, N, T>* p, T x, const int64_t* k, int) {
    if (k[0] >= 0 && k[0] < M && k[1] >= 0 && k[1] < N) p->c[k[0] * N + k[1]] = x;
}
template <int M, int N, class T> TL_HD void store_part(mat<M, N, T>* p, const vec<N, T>& row, const int64_t* k, int) {
    if (k[0] >= 0 && k[0] < M)
        for (int j = 0; j < N; ++j) p->c[k[0] * N + j] = row.c[j];
}
template <class V, int D, class X, class... I> TL_HD void array_store_part(Ctx& ctx, const Array<V, D>& a, const X& x, I... idx) {
    if (ctx.standin()) return;  // a partial block's stand-in thread (ctx_cuda.h)
    const int64_t ids[] = {int64_t(idx)...};
    for (int k = 0; k < D; ++k)
        if (ids[k] < 0 || ids[k] >= a.shape[k]) return;
    store_part(a.ptr_n(ids), x, ids + D, 0);
}

// wp.atomic_add(a, i[, j...], value) on arrays of vectors and matrices: the value comes last.
template <class V> struct is_value : std::false_type {};
template <int N, class T> struct is_value<vec<N, T>> : std::true_type {};
template <int M, int N, class T> struct is_value<mat<M, N, T>> : std::true_type {};
template <class V, class I, class = typename std::enable_if<is_value<V>::value>::type>
TL_HD V atomic_add(Ctx& ctx, const Array<V, 1>& a, I i, const V& v) { return array_atomic_add(ctx, a, v, i); }
template <class V, class I, class = typename std::enable_if<is_value<V>::value>::type>
TL_HD V atomic_add(Ctx& ctx, const Array<V, 2>& a, I i, I j, const V& v) { return array_atomic_add(ctx, a, v, i, j); }
template <class V, class I, class = typename std::enable_if<is_value<V>::value>::type>
TL_HD V atomic_add(Ctx& ctx, const Array<V, 3>& a, I i, I j, I k, const V& v) {
    return array_atomic_add(ctx, a, v, i, j, k);
}
template <class V, class I, class = typename std::enable_if<is_value<V>::value>::type>
TL_HD V atomic_add(Ctx& ctx, const Array<V, 4>& a, I i, I j, I k, I l, const V& v) {
    return array_atomic_add(ctx, a, v, i, j, k, l);
}


// ---------------------------------------------------------------- vector builtins
template <int N, class T> TL_HD T dot(const vec<N, T>& a, const vec<N, T>& b) {
    compute_t<T> s = 0;
    for (int k = 0; k < N; ++k) s += cv(a.c[k]) * cv(b.c[k]);
    return T(s);
}
template <class T> TL_HD vec<3, T> cross(const vec<3, T>& a, const vec<3, T>& b) {
    return vec<3, T>(cv(a.c[1]) * cv(b.c[2]) - cv(a.c[2]) * cv(b.c[1]), cv(a.c[2]) * cv(b.c[0]) - cv(a.c[0]) * cv(b.c[2]),
                     cv(a.c[0]) * cv(b.c[1]) - cv(a.c[1]) * cv(b.c[0]));
}
template <int N, class T> TL_HD T length_sq(const vec<N, T>& a) { return dot(a, a); }
template <int N, class T> TL_HD T length(const vec<N, T>& a) { return T(std::sqrt(cv(dot(a, a)))); }
template <int N, class T> TL_HD vec<N, T> normalize(const vec<N, T>& a) {  // the zero vector stays zero
    const T l = length(a);
    return cv(l) > compute_t<T>(0) ? a / l : vec<N, T>();
}
template <int N, class T> TL_HD vec<N, T> cw_mul(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(cv(a.c[k]) * cv(b.c[k])); return r; }
template <int N, class T> TL_HD vec<N, T> cw_div(const vec<N, T>& a, const vec<N, T>& b) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = T(divide(cv(a.c[k]), cv(b.c[k]))); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> cw_mul(const mat<M, N, T>& a, const mat<M, N, T>& b) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(cv(a.c[k]) * cv(b.c[k])); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> cw_div(const mat<M, N, T>& a, const mat<M, N, T>& b) { mat<M, N, T> r; for (int k = 0; k < M * N; ++k) r.c[k] = T(divide(cv(a.c[k]), cv(b.c[k]))); return r; }
template <int M, int N, class T> TL_HD mat<M, N, T> outer(const vec<M, T>& a, const vec<N, T>& b) {
    mat<M, N, T> r;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) r.c[i * N + j] = T(cv(a.c[i]) * cv(b.c[j]));
    return r;
}
template <class T> TL_HD mat<3, 3, T> skew(const vec<3, T>& a) {  // skew(a) * b == cross(a, b)
    const T z(0);
    return mat<3, 3, T>(z, T(-cv(a.c[2])), a.c[1], a.c[2], z, T(-cv(a.c[0])), T(-cv(a.c[1])), a.c[0], z);
}

// ---------------------------------------------------------------- matrix builtins
template <int M, int N, class T> TL_HD T ddot(const mat<M, N, T>& a, const mat<M, N, T>& b) {
    compute_t<T> s = 0;
    for (int k = 0; k < M * N; ++k) s += cv(a.c[k]) * cv(b.c[k]);
    return T(s);
}
// One term of tile_dot over tiles of values (reduce.h): wp.dot of vectors, wp.ddot of matrices.
template <int N, class T> TL_HD T dot_term(const vec<N, T>& a, const vec<N, T>& b) { return dot(a, b); }
template <int M, int N, class T> TL_HD T dot_term(const mat<M, N, T>& a, const mat<M, N, T>& b) { return ddot(a, b); }
template <int M, int N, class T> TL_HD mat<N, M, T> transpose(const mat<M, N, T>& a) {
    mat<N, M, T> r;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) r.c[j * M + i] = a.c[i * N + j];
    return r;
}
template <int N, class T> TL_HD mat<N, N, T> diag(const vec<N, T>& d) {
    mat<N, N, T> r;
    for (int i = 0; i < N; ++i) r.c[i * N + i] = d.c[i];
    return r;
}
template <int N, class T> TL_HD vec<N, T> get_diag(const mat<N, N, T>& a) { vec<N, T> r; for (int k = 0; k < N; ++k) r.c[k] = a.c[k * N + k]; return r; }
template <int N, class T> TL_HD T trace(const mat<N, N, T>& a) {
    compute_t<T> s = 0;
    for (int i = 0; i < N; ++i) s += cv(a.c[i * N + i]);
    return T(s);
}
template <int N, class T, class... V> TL_HD mat<1 + sizeof...(V), N, T> matrix_from_rows(const vec<N, T>& first, const V&... rest) {
    constexpr int K = 1 + sizeof...(V);
    const vec<N, T> rows[K] = {first, rest...};
    mat<K, N, T> r;
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < N; ++j) r.c[i * N + j] = rows[i].c[j];
    return r;
}
template <int N, class T, class... V> TL_HD mat<N, 1 + sizeof...(V), T> matrix_from_cols(const vec<N, T>& first, const V&... rest) {
    return transpose(matrix_from_rows(first, rest...));
}

// Determinants by cofactor expansion along the first row (2x2, 3x3, 4x4); the cofactor matrix
// is also the determinant's gradient, and inverse(a) = transpose(cofactor(a)) / det(a).
template <int N, class T> TL_HD mat<N - 1, N - 1, T> minor_of(const mat<N, N, T>& a, int skip_i, int skip_j) {
    mat<N - 1, N - 1, T> r;
    int k = 0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            if (i != skip_i && j != skip_j) r.c[k++] = a.c[i * N + j];
    return r;
}
template <class T> TL_HD T determinant(const mat<1, 1, T>& a) { return a.c[0]; }
template <int N, class T> TL_HD T determinant(const mat<N, N, T>& a) {
    compute_t<T> s = 0;
    for (int j = 0; j < N; ++j) s += ((j % 2) ? -cv(a.c[j]) : cv(a.c[j])) * cv(determinant(minor_of(a, 0, j)));
    return T(s);
}
template <int N, class T> TL_HD mat<N, N, T> cofactor(const mat<N, N, T>& a) {
    mat<N, N, T> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            const compute_t<T> m = cv(determinant(minor_of(a, i, j)));
            r.c[i * N + j] = T(((i + j) % 2) ? -m : m);
        }
    return r;
}
template <int N, class T> TL_HD mat<N, N, T> inverse(const mat<N, N, T>& a) {  // a singular matrix gives zeros
    const compute_t<T> d = cv(determinant(a));
    if (d == compute_t<T>(0)) return mat<N, N, T>();
    return transpose(cofactor(a)) * T(compute_t<T>(1) / d);
}

}  // namespace tl
