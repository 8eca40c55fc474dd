// tilec runtime: scalar math, each forward function next to its adjoint.
// adj_f(inputs..., adj_out, adj_inputs&...) accumulates d(out)/d(input) * adj_out.
#pragma once
#include "core.h"

namespace tl {

// Integer division never traps (Warp's CPU build raises SIGFPE): x / 0, x // 0 and x % 0 are 0, and
// the one overflowing quotient, MIN // -1, wraps to MIN (x % -1 is 0), as numpy computes them.
template <class T> TL_HD T wrapping_neg(T a) {
    using U = typename std::make_unsigned<T>::type;
    return T(U(0) - U(a));
}
template <class T> TL_HD T floordiv(T a, T b) {
    if constexpr (std::is_floating_point<T>::value) {
        return std::floor(a / b);
    } else {
        if (b == 0) return T(0);
        if constexpr (std::is_signed<T>::value) {
            if (b == T(-1)) return wrapping_neg(a);
        }
        T q = a / b;
        return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
}
template <class T> TL_HD T mod(T a, T b) {
    if constexpr (std::is_floating_point<T>::value) return std::fmod(a, b);
    else if constexpr (std::is_signed<T>::value) return (b == 0 || b == T(-1)) ? T(0) : a % b;
    else return b == 0 ? T(0) : a % b;
}
template <class T> TL_HD T sign(T a) { return T((a > T(0)) - (a < T(0))); }
// min and max of floats are C's fmin and fmax, as Warp's: the operand that is not NaN (NaN only when
// both are); ties go to the first operand.
template <class T> TL_HD T min(T a, T b) {
    if constexpr (std::is_integral<T>::value) return b < a ? b : a;
    else return (a <= b) ? a : ((b == b) ? b : a);
}
template <class T> TL_HD T max(T a, T b) {
    if constexpr (std::is_integral<T>::value) return a < b ? b : a;
    else return (a >= b) ? a : ((b == b) ? b : a);
}
template <class T> TL_HD T clamp(T x, T lo, T hi) { return min(max(lo, x), hi); }  // Warp's order (-0.0 vs 0.0)
template <class T> TL_HD T abs(T a) { return a < T(0) ? -a : a; }
template <class C, class T> TL_HD T select(C cond, T if_false, T if_true) { return cond ? if_true : if_false; }
template <class C, class T> TL_HD T where(C cond, T if_true, T if_false) { return cond ? if_true : if_false; }
// wp.cast(x, dtype): the bits of x read as To, a type of the same size.
template <class To, class From> TL_HD To bitcast(From x) {
    static_assert(sizeof(To) == sizeof(From), "a reinterpretation keeps the size");
    To out;
    memcpy(&out, &x, sizeof(To));
    return out;
}
template <class To, class From> TL_HD To cast(From x) {
    return To(static_cast<compute_t<To>>(static_cast<compute_t<From>>(x)));
}

// float exp, log and tanh written as branch-free arithmetic so loops over tiles vectorise (libm
// calls do not). Out-of-range inputs are computed like any other and replaced by a select at the
// end: a clamp of the input (x = min(x, hi)) lets g++ fold the clamped constant through the whole
// polynomial and blend every intermediate, ~40% more instructions per vector. Accuracy (max ulp
// against float64, tests/test_math_accuracy.py) is in docs/language.md "Floating-point math".
TL_HD float float_from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
TL_HD uint32_t bits_from_float(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}
// a * b + c for the polynomials below, in one rounding where the target has a fused multiply-add
// (x86-64-v3's FMA, AArch64, CUDA): half the instructions of a multiply and an add, and at least as
// accurate. Generated code is compiled with -ffp-contract=off (compiler.py): these runtime
// functions are where FMAs are asked for, so a build rounds the same at every optimisation level
// and with either compiler. Two roundings elsewhere (where fmaf could be a slow library call).
TL_HD float poly_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__) || defined(__FMA__) || defined(__aarch64__)
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}
// e^r for |r| <= ln2/2 (plus rounding): 1 + r (1 + r P(r)) with P of degree 4, fitted for the
// least largest relative error (4e-9, 0.07 of float's 2^-24) with float coefficients by
// bench/fit_exp_poly.py. Six FMAs, where Cephes' degree-7 form took six, a multiply and an add.
TL_HD float exp_reduced(float r) {
    float p = 0.0013814459089189768f;
    p = poly_fma(p, r, 0.00836868491023779f);
    p = poly_fma(p, r, 0.04166838899254799f);
    p = poly_fma(p, r, 0.1666652113199234f);
    p = poly_fma(p, r, 0.4999999403953552f);
    p = poly_fma(p, r, 1.0f);
    return poly_fma(p, r, 1.0f);
}
// x = n ln2 + r, n an integer: adding 1.5 * 2^23 rounds x / ln2 to an integer, which then sits
// in the low mantissa bits (exact while |x / ln2| < 2^22; larger x is replaced by the caller).
struct ExpSplit {
    float r;
    int32_t n;
};
TL_HD ExpSplit exp_split(float x) {
    const float shifter = 12582912.0f;
    float k = poly_fma(x, 1.44269504088896341f, shifter);
    float n = k - shifter;
    float r = poly_fma(n, -0.693359375f, x);  // ln2 in two parts, so n * ln2 is exact to 2^-32
    r = poly_fma(n, 2.12194440e-4f, r);
    return {r, int32_t(bits_from_float(k) - bits_from_float(shifter))};
}
// e^x on [-104, 88.72]; above: inf, below: 0, NaN: NaN. 2^n is applied as two factors so
// results down to the smallest subnormal round once instead of flushing to zero.
TL_HD float exp_f32(float x) {
    ExpSplit s = exp_split(x);
    int32_t half = s.n >> 1;
    float e = exp_reduced(s.r) * float_from_bits(uint32_t(half + 127) << 23) *
              float_from_bits(uint32_t(s.n - half + 127) << 23);
    e = x > 88.7228394f ? INFINITY : e;
    return x < -104.0f ? 0.0f : e;
}
// e^x for x in [-87, 88] only, no range selects: there e^x is a normal float, so 2^n is applied by
// adding n to the exponent field (an integer add instead of a multiply on the FMA pipes).
// Elsewhere the bits are meaningless (a NaN's too): callers select around them.
TL_HD float exp_f32_normal(float x) {
    ExpSplit s = exp_split(x);
    return float_from_bits(bits_from_float(exp_reduced(s.r)) + (uint32_t(s.n) << 23));
}
// What an element loop's in-range exp, log and tanh calls saw (codegen/cxx.py element_loop_in_range):
// each keeps the largest key of its arguments, a key above its limit marks an argument outside the
// fast range (or NaN), and the loop runs again with the full functions when any() is true. A
// running unsigned max is one integer instruction per vector where a raised flag (two compares,
// an AND and a blend, on the FMA pipes) took four: softmax's exp loop 8.4 -> 7.5 cycles per 8 floats.
struct InRange {
    static constexpr uint32_t EXP_LIMIT = 0x42ae0000u;   // |x| <= 87 (bits of 87.0f, sign cleared)
    static constexpr uint32_t LOG_LIMIT = 0x7effffffu;   // x - FLT_MIN's bits within FLT_MAX's: positive normal
    static constexpr uint32_t TANH_LIMIT = 0x41100000u;  // |x| <= 9 (bits of 9.0f)
    uint32_t exp_key = 0, log_key = 0, tanh_key = 0;
    bool any() const { return exp_key > EXP_LIMIT || log_key > LOG_LIMIT || tanh_key > TANH_LIMIT; }
};
TL_HD uint32_t max_key(uint32_t a, uint32_t b) { return a > b ? a : b; }
// e^x where x is in [-87, 87]: exp_f32_normal, which equals exp_f32 bit for bit there (checked over
// every float in [-87, 88]), without exp_f32's two-factor scaling and range selects (softmax's exp
// loop: 12.3 -> 9.6 cycles per 8 floats). Elsewhere, NaN included, its key exceeds EXP_LIMIT.
TL_HD float exp_in_range(float x, InRange& seen) {
    seen.exp_key = max_key(seen.exp_key, bits_from_float(x) & 0x7fffffffu);
    return exp_f32_normal(x);
}
// log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 + f^3 P(f) with f = m - 1
// (Cephes' logf coefficients), plus e ln2 in two parts. Subnormals are scaled by 2^23 first:
// log_normal computes log of xs * 2^-bias for a positive normal xs (bias 23 for a scaled subnormal).
TL_HD float log_normal(float xs, int32_t bias) {
    // xs = 2^k m with m in [sqrt(1/2), sqrt(2)): subtracting sqrt(1/2)'s bits puts k in the
    // exponent field (arithmetic shift: k < 0 below sqrt(1/2)) and m's offset in the mantissa
    const int32_t sqrt_half = 0x3f3504f3;
    int32_t shifted = int32_t(bits_from_float(xs) - uint32_t(sqrt_half));
    float ef = float((shifted >> 23) - bias);
    float m = float_from_bits(uint32_t((shifted & 0x007fffff) + sqrt_half));
    float f = m - 1.0f;
    float z = f * f;
    float p = 7.0376836292e-2f;
    p = poly_fma(p, f, -1.1514610310e-1f);
    p = poly_fma(p, f, 1.1676998740e-1f);
    p = poly_fma(p, f, -1.2420140846e-1f);
    p = poly_fma(p, f, 1.4249322787e-1f);
    p = poly_fma(p, f, -1.6668057665e-1f);
    p = poly_fma(p, f, 2.0000714765e-1f);
    p = poly_fma(p, f, -2.4999993993e-1f);
    p = poly_fma(p, f, 3.3333331174e-1f);
    float y = poly_fma(-0.5f, z, poly_fma(ef, -2.12194440e-4f, p * f * z));
    return poly_fma(ef, 0.693359375f, f + y);
}
TL_HD float log_f32(float x) {
    bool tiny = x < 1.17549435e-38f;
    float result = log_normal(tiny ? x * 8388608.0f : x, tiny ? 23 : 0);
    result = x == INFINITY ? x : result;
    result = x == 0.0f ? -INFINITY : result;
    return x >= 0.0f ? result : NAN;  // negative or NaN
}
// log where x is a positive normal float: log_normal(x, 0), which log_f32 is there, without the
// subnormal scaling and edge selects. Zero, subnormals, negatives (the sign bit), inf and NaN give
// a key above LOG_LIMIT (below FLT_MIN the subtraction wraps around).
TL_HD float log_in_range(float x, InRange& seen) {
    seen.log_key = max_key(seen.log_key, bits_from_float(x) - 0x00800000u);
    return log_normal(x, 0);
}
// tanh: an odd degree-11 polynomial below |x| = 0.625 (Cephes' coefficients), else
// sign(x) (1 - 2 / (e^{2|x|} + 1)), where the subtraction no longer cancels; tanh(x) rounds to
// +-1 in float above |x| = 9. A NaN fails the ordered comparison and takes the polynomial, which
// keeps it NaN (quiet, x's sign): no select of its own (8 % of the function's time).
TL_HD float tanh_above(float ax) { return 1.0f - 2.0f / (exp_f32_normal(2.0f * ax) + 1.0f); }  // 0.625 <= ax <= 9
TL_HD float tanh_below(float x, float ax) {  // ax < 0.625
    float z = x * x;
    float q = poly_fma(-5.70498872745e-3f, z, 2.06390887954e-2f);
    q = poly_fma(q, z, -5.37397155531e-2f);
    q = poly_fma(q, z, 1.33314422036e-1f);
    q = poly_fma(q, z, -3.33332819422e-1f);
    return poly_fma(q * z, ax, ax);
}
TL_HD float tanh_f32(float x) {
    float ax = fabsf(x);
    float big = ax > 9.0f ? 1.0f : tanh_above(ax);
    float t = ax >= 0.625f ? big : tanh_below(x, ax);  // NaN: the polynomial (big's bits are not NaN's)
    return copysignf(t, x);
}
// tanh where |x| <= 9: tanh_f32 without its select of 1 above 9 (a compare and a blend on the FMA
// pipes; the fused map's loop 23.9 -> 22.0 cycles per 8 floats), the same bits there (checked over
// every float). Above, and for NaN, its key exceeds TANH_LIMIT: the loop runs again with tanh_f32.
TL_HD float tanh_in_range(float x, InRange& seen) {
    float ax = fabsf(x);
    seen.tanh_key = max_key(seen.tanh_key, bits_from_float(ax));
    float t = ax >= 0.625f ? tanh_above(ax) : tanh_below(x, ax);
    return copysignf(t, x);
}
template <class T> TL_HD T exp(T x) {
    if constexpr (std::is_same<T, float>::value) return exp_f32(x);
    else return T(std::exp(x));
}
template <class T> TL_HD T tanh(T x) {
    if constexpr (std::is_same<T, float>::value) return tanh_f32(x);
    else return T(std::tanh(x));
}
template <class T> TL_HD T log(T x) {
    if constexpr (std::is_same<T, float>::value) return log_f32(x);
    else return T(std::log(x));
}

#define TL_UNARY(name, expr)                                  \
    template <class T> TL_HD T name(T x) { return T(expr); }
TL_UNARY(exp2, std::exp2(x))
TL_UNARY(log2, std::log2(x))
TL_UNARY(log10, std::log10(x))
TL_UNARY(sin, std::sin(x))
TL_UNARY(cos, std::cos(x))
TL_UNARY(tan, std::tan(x))
TL_UNARY(asin, std::asin(x))
TL_UNARY(acos, std::acos(x))
TL_UNARY(atan, std::atan(x))
TL_UNARY(sinh, std::sinh(x))
TL_UNARY(cosh, std::cosh(x))
TL_UNARY(sqrt, std::sqrt(x))
TL_UNARY(cbrt, std::cbrt(x))
TL_UNARY(floor, std::floor(x))
TL_UNARY(ceil, std::ceil(x))
TL_UNARY(round, std::round(x))
TL_UNARY(trunc, std::trunc(x))
TL_UNARY(erf, std::erf(x))
TL_UNARY(rint, std::rint(x))  // halfway cases to even, as numpy.rint
TL_UNARY(erfc, std::erfc(x))
#undef TL_UNARY

// erfinv and erfcinv, which <cmath> lacks: solved in double by Halley's method, on erf(x) = y near
// zero and on erfc(x) = t in the tails (where t = 1 - |y| is exact, so no digit is lost), from
// Winitzki's closed-form estimate (relative error below 0.2 %); three steps reach double precision.
TL_HD double erf_inverse_estimate(double log_one_minus_y2) {
    const double a = 0.147, b = 2.0 / (3.141592653589793 * a) + 0.5 * log_one_minus_y2;
    return ::sqrt(::sqrt(b * b - log_one_minus_y2 / a) - b);
}
TL_HD double erf_inverse_near_zero(double y) {  // |y| <= 0.5
    double x = ::copysign(erf_inverse_estimate(::log1p(-y * y)), y);
    for (int step = 0; step < 3; ++step) {
        const double slope = 1.1283791670955126 * ::exp(-x * x);  // erf'(x) = 2 / sqrt(pi) exp(-x^2)
        const double newton = (::erf(x) - y) / slope;
        x -= newton / (1.0 + x * newton);  // Halley: erf''(x) / erf'(x) = -2x
    }
    return x;
}
TL_HD double erfc_inverse_tail(double t) {  // 0 < t <= 0.5: the x >= 0.47 with erfc(x) = t
    double x = erf_inverse_estimate(::log(t * (2.0 - t)));
    for (int step = 0; step < 3; ++step) {
        const double slope = -1.1283791670955126 * ::exp(-x * x);
        if (slope == 0.0) break;  // beyond double's range of erfc: the estimate stands
        const double newton = (::erfc(x) - t) / slope;
        x -= newton / (1.0 + x * newton);
    }
    return x;
}
TL_HD double erfinv_f64(double y) {
    const double m = ::fabs(y);
    if (!(m < 1.0)) return m == 1.0 ? ::copysign(double(INFINITY), y) : double(NAN);
    return m <= 0.5 ? erf_inverse_near_zero(y) : ::copysign(erfc_inverse_tail(1.0 - m), y);
}
TL_HD double erfcinv_f64(double z) {
    if (!(z > 0.0 && z < 2.0)) return z == 0.0 ? double(INFINITY) : z == 2.0 ? -double(INFINITY) : double(NAN);
    if (z < 0.5) return erfc_inverse_tail(z);
    if (z > 1.5) return -erfc_inverse_tail(2.0 - z);
    return erf_inverse_near_zero(1.0 - z);  // 1 - z is exact here
}
template <class T> TL_HD T erfinv(T x) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return erfinvf(x);
    else if constexpr (std::is_same<T, double>::value) return ::erfinv(x);
#endif
    return T(erfinv_f64(double(x)));
}
template <class T> TL_HD T erfcinv(T x) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return erfcinvf(x);
    else if constexpr (std::is_same<T, double>::value) return ::erfcinv(x);
#endif
    return T(erfcinv_f64(double(x)));
}
template <class T> TL_HD T frac(T x) { return T(x - std::trunc(x)); }  // Warp's x - trunc(x)
template <class T> TL_HD T copysign(T a, T b) { return T(std::copysign(a, b)); }
// The set bits of an integer, a signed one's as its two's complement (Warp's bit_count).
template <class T> TL_HD int32_t bit_count(T x) {
    using U = typename std::make_unsigned<T>::type;
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 8) return __popcll(static_cast<unsigned long long>(U(x)));
    else return __popc(static_cast<unsigned int>(U(x)));
#else
    if constexpr (sizeof(T) == 8) return __builtin_popcountll(static_cast<unsigned long long>(U(x)));
    else return __builtin_popcount(static_cast<unsigned int>(U(x)));
#endif
}
template <class T> TL_HD T pow(T a, T b) { return T(std::pow(a, b)); }
template <class T> TL_HD T atan2(T a, T b) { return T(std::atan2(a, b)); }

// ---------------------------------------------------------------- adjoints
template <class T> TL_HD void adj_exp(T x, T g, T& ax) { ax += exp(x) * g; }
template <class T> TL_HD void adj_exp2(T x, T g, T& ax) { ax += std::exp2(x) * T(0.6931471805599453) * g; }
template <class T> TL_HD void adj_log(T x, T g, T& ax) { ax += g / x; }
template <class T> TL_HD void adj_log2(T x, T g, T& ax) { ax += g / (x * T(0.6931471805599453)); }
template <class T> TL_HD void adj_log10(T x, T g, T& ax) { ax += g / (x * T(2.302585092994046)); }
template <class T> TL_HD void adj_sin(T x, T g, T& ax) { ax += std::cos(x) * g; }
template <class T> TL_HD void adj_cos(T x, T g, T& ax) { ax -= std::sin(x) * g; }
template <class T> TL_HD void adj_tan(T x, T g, T& ax) { T c = std::cos(x); ax += g / (c * c); }
template <class T> TL_HD void adj_asin(T x, T g, T& ax) { ax += g / std::sqrt(T(1) - x * x); }
template <class T> TL_HD void adj_acos(T x, T g, T& ax) { ax -= g / std::sqrt(T(1) - x * x); }
template <class T> TL_HD void adj_atan(T x, T g, T& ax) { ax += g / (T(1) + x * x); }
template <class T> TL_HD void adj_sinh(T x, T g, T& ax) { ax += std::cosh(x) * g; }
template <class T> TL_HD void adj_cosh(T x, T g, T& ax) { ax += std::sinh(x) * g; }
template <class T> TL_HD void adj_tanh(T x, T g, T& ax) { T t = tanh(x); ax += (T(1) - t * t) * g; }
template <class T> TL_HD void adj_sqrt(T x, T g, T& ax) { ax += g / (T(2) * std::sqrt(x)); }
template <class T> TL_HD void adj_cbrt(T x, T g, T& ax) { T c = std::cbrt(x); ax += g / (T(3) * c * c); }
template <class T> TL_HD void adj_erf(T x, T g, T& ax) { ax += T(1.1283791670955126) * std::exp(-x * x) * g; }
template <class T> TL_HD void adj_abs(T x, T g, T& ax) { ax += x < T(0) ? -g : (x > T(0) ? g : T(0)); }
template <class T> TL_HD void adj_sign(T, T, T&) {}
template <class T> TL_HD void adj_neg(T, T g, T& ax) { ax -= g; }
template <class T> TL_HD void adj_add(T, T, T g, T& aa, T& ab) { aa += g; ab += g; }
template <class T> TL_HD void adj_sub(T, T, T g, T& aa, T& ab) { aa += g; ab -= g; }
template <class T> TL_HD void adj_mul(T a, T b, T g, T& aa, T& ab) { aa += b * g; ab += a * g; }
template <class T> TL_HD void adj_div(T a, T b, T g, T& aa, T& ab) { aa += g / b; ab -= g * a / (b * b); }
template <class T> TL_HD void adj_pow(T a, T b, T g, T& aa, T& ab) {
    aa += (b == T(0) ? T(0) : b * std::pow(a, b - T(1))) * g;
    ab += (a > T(0) ? std::pow(a, b) * std::log(a) : T(0)) * g;
}
// Ties send the gradient to the first operand, as tile_max ties go to the first index.
template <class T> TL_HD void adj_min(T a, T b, T g, T& aa, T& ab) { if (a <= b || !(b == b)) aa += g; else ab += g; }
template <class T> TL_HD void adj_max(T a, T b, T g, T& aa, T& ab) { if (a >= b || !(b == b)) aa += g; else ab += g; }
template <class T> TL_HD void adj_frac(T, T g, T& ax) { ax += g; }  // 1 almost everywhere (Warp: none)
template <class T> TL_HD void adj_copysign(T a, T b, T g, T& aa, T&) {
    aa += std::copysign(T(1), a) == std::copysign(T(1), b) ? g : -g;
}
template <class T> TL_HD void adj_atan2(T a, T b, T g, T& aa, T& ab) {
    T d = a * a + b * b;
    aa += g * b / d;
    ab -= g * a / d;
}
template <class T> TL_HD void adj_clamp(T x, T lo, T hi, T g, T& ax, T& alo, T& ahi) {
    if (x < lo) alo += g;
    else if (hi < x) ahi += g;
    else ax += g;
}

}  // namespace tl

namespace tl {
// Python's `/` as Warp defines it: true division for floats, truncation for integers;
// integer division by zero gives 0 instead of a trap.
template <class A, class B> TL_HD auto divide(A a, B b) {
    if constexpr (std::is_integral<A>::value && std::is_integral<B>::value) {
        if (b == 0) return A(0);
        if constexpr (std::is_signed<B>::value && std::is_signed<A>::value) {
            if (b == B(-1)) return wrapping_neg(a);
        }
        return A(a / b);
    } else {
        return a / b;
    }
}
}  // namespace tl
