"""The reference interpreter's random numbers: Warp's PCG hash and its draws, and Perlin noise
(`noise`, `pnoise`, `curlnoise` and the gradients the adjoints use), in numpy float32 with the
operations of runtime noise.h in the same order, so the interpreter's values are the runtime's."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ir
from .core import registrar
from .reference_values import Context, Impl, Value

IMPL: dict[str, Impl] = {}  # merged into reference.IMPL
F = np.float32
PRIMES = (73856093, 19349663, 53471161, 10000019)


impl = registrar(IMPL)


def pcg(state: int) -> int:
    b = (state * 747796405 + 2891336453) & 0xFFFFFFFF
    c = ((((b >> ((b >> 28) + 4)) ^ b) * 277803737)) & 0xFFFFFFFF
    return ((c >> 22) ^ c) & 0xFFFFFFFF


def unit(draw: int) -> np.float32:
    """The top 24 bits of a draw as a float in [0, 1)."""
    drawn: np.float32 = F(draw >> 8) * F(1.0 / 16777216.0)
    return drawn


def rand_init(seed: int, offset: int) -> int:
    return pcg((seed + pcg(offset & 0xFFFFFFFF)) & 0xFFFFFFFF)


def _smoother(t: Any) -> Any:
    return t * t * t * (t * (t * F(6.0) - F(15.0)) + F(10.0))


def _smoother_slope(t: Any) -> Any:
    return F(30.0) * t * t * (t * (t - F(2.0)) + F(1.0))


def _corner_gradient(state: int, corner: Sequence[int]) -> list[Any]:
    n = len(corner)
    h = ((corner[-1] * PRIMES[n - 1]) + state) & 0xFFFFFFFF
    for k in range(n - 2, -1, -1):
        h ^= (corner[k] * PRIMES[k]) & 0xFFFFFFFF
    if n == 1:
        return [F(2.0) * unit(pcg(h)) + F(-1.0)]
    point = []
    for _ in range(n):
        h = pcg(h)
        point.append(unit(h) - F(0.5))
    length = np.sqrt(_dot(point, point))
    return [p / length for p in point] if length > F(0.0) else [F(0.0)] * n


def _dot(a: Sequence[Any], b: Sequence[Any]) -> Any:
    total = a[0] * b[0]
    for x, y in zip(a[1:], b[1:]):
        total = total + x * y
    return total


def _cell(x: Sequence[Any], periods: Sequence[int] | None) -> tuple[list[int], list[int], list[Any]]:
    lo, hi, d = [], [], []
    for k, v in enumerate(x):
        f = np.floor(F(v))
        d.append(F(v) - f)
        low = int(f)
        high = low + 1
        if periods is not None:
            low = int(_c_remainder(low, periods[k]))
            high = int(_c_remainder(low + 1, periods[k]))
        lo.append(low)
        hi.append(high)
    return lo, hi, d


def _c_remainder(a: int, b: int) -> int:
    """C's remainder of ints (the sign of the dividend), as Warp's mod."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _corners(state: int, cell: tuple[list[int], list[int], list[Any]]) -> tuple[list[Any], list[Any]]:
    lo, hi, d = cell
    n = len(d)
    values, gradients = [], []
    for i in range(1 << n):
        corner = [hi[k] if (i >> k) & 1 else lo[k] for k in range(n)]
        offset = [d[k] - F(1.0) if (i >> k) & 1 else d[k] for k in range(n)]
        g = _corner_gradient(state, corner)
        values.append(_dot(offset, g))
        gradients.append(np.array(g, np.float32))
    return values, gradients


def value(state: int, x: Sequence[Any], periods: Sequence[int] | None = None) -> Any:
    cell = _cell(x, periods)
    v, _ = _corners(state, cell)
    d = cell[2]
    for k in range(len(d)):
        for i in range(0, len(v), 2 << k):
            v[i] = (v[i | (1 << k)] - v[i]) * _smoother(d[k]) + v[i]
    return F(v[0])


def gradient(state: int, x: Sequence[Any], periods: Sequence[int] | None = None) -> Any:
    cell = _cell(x, periods)
    v, g = _corners(state, cell)
    d = cell[2]
    n = len(d)
    for k in range(n):
        axis = np.zeros(n, np.float32)
        axis[k] = F(1.0)
        for i in range(0, len(v), 2 << k):
            j = i | (1 << k)
            g[i] = (g[j] - g[i]) * _smoother(d[k]) + ((v[j] - v[i]) * _smoother_slope(d[k])) * axis + g[i]
            v[i] = (v[j] - v[i]) * _smoother(d[k]) + v[i]
    return g[0].astype(np.float32)


def _smoother_curvature(t: Any) -> Any:
    return F(60.0) * t * (t * (t * F(2.0) - F(3.0)) + F(1.0))


def hessian(state: int, x: Sequence[Any]) -> Any:
    """The noise's second derivatives at x (runtime noise.h perlin::hessian)."""
    cell = _cell(x, None)
    v, g = _corners(state, cell)
    d = cell[2]
    n = len(d)
    h = [np.zeros((n, n), np.float32) for _ in v]
    for k in range(n):
        s, s1, s2 = _smoother(d[k]), _smoother_slope(d[k]), _smoother_curvature(d[k])
        for i in range(0, len(v), 2 << k):
            j = i | (1 << k)
            dv, dg = v[j] - v[i], g[j] - g[i]
            h[i] = h[i] + (h[j] - h[i]) * s
            h[i][:, k] = h[i][:, k] + dg * s1
            h[i][k, :] = h[i][k, :] + dg * s1
            h[i][k, k] = h[i][k, k] + dv * s2
            g[i] = g[i] + dg * s
            g[i][k] = g[i][k] + dv * s1
            v[i] = v[i] + dv * s
    return h[0]


def _point(a: Value) -> list[Any]:
    return [F(v) for v in np.atleast_1d(np.asarray(a, np.float32))]


@impl("noise", "pnoise")
def _noise(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    periods = [int(p) for p in a[2:]] if call.op == "pnoise" else None
    return value(int(a[0]) & 0xFFFFFFFF, _point(a[1]), periods)


@impl("noise_gradient", "pnoise_gradient")
def _noise_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    periods = [int(p) for p in a[2:]] if call.op == "pnoise_gradient" else None
    g = gradient(int(a[0]) & 0xFFFFFFFF, _point(a[1]), periods)
    return g[0] if np.ndim(a[1]) == 0 else g


@impl("curlnoise")
def _curlnoise(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    state, x = int(a[0]) & 0xFFFFFFFF, np.asarray(a[1], np.float32)
    octaves, lacunarity, gain = int(a[2]), F(a[3]), F(a[4])
    sums = [np.zeros(len(x), np.float32) for _ in range(3)]
    freq, amplitude = F(1.0), F(1.0)
    for _ in range(octaves):
        p = freq * x
        if len(x) == 2:
            sums[0] = sums[0] + amplitude * gradient(state, list(p))
        else:
            for k in range(3):
                sums[k] = sums[k] + amplitude * gradient(state, list(p))
                if k < 2:
                    state = rand_init(state, (10019689, 13112221)[k])
        amplitude = amplitude * gain
        freq = freq * lacunarity
    if len(x) == 2:
        return np.array([-sums[0][1], sums[0][0]], np.float32)
    s1, s2, s3 = sums
    return np.array([s3[1] - s2[2], s1[2] - s3[0], s2[0] - s1[1]], np.float32)


@impl("curlnoise_adjoint")
def _curlnoise_adjoint(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    state, x = int(a[0]) & 0xFFFFFFFF, np.asarray(a[1], np.float32)
    octaves, lacunarity, gain, r = int(a[2]), F(a[3]), F(a[4]), np.asarray(a[5], np.float32)
    adj = np.zeros(len(x), np.float32)
    freq, amplitude = F(1.0), F(1.0)
    for _ in range(octaves):
        p = list(freq * x)
        k = amplitude * freq
        if len(x) == 2:
            h = hessian(state, p)
            adj = adj + k * (-h[1] * r[0] + h[0] * r[1])
        else:
            hs = []
            for step in range(3):
                hs.append(hessian(state, p))
                if step < 2:
                    state = rand_init(state, (10019689, 13112221)[step])
            h1, h2, h3 = hs
            adj = adj + k * (r[0] * (h3[1] - h2[2]) + r[1] * (h1[2] - h3[0]) + r[2] * (h2[0] - h1[1]))
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return adj


_LOG_GAMMA_SERIES = [F(c) for c in (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                                    -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                                    6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
                                    -1.39243221690590e+00)]


def _poisson_log_gamma(x: np.float32) -> Any:
    """runtime random.h's poisson_log_gamma, in float32."""
    if x == F(1.0) or x == F(2.0):
        return F(0.0)
    shift = int(F(7.0) - x) if x < F(7.0) else 0
    z = F(x + F(shift))
    inv = F(1.0) / z
    inv2 = inv * inv
    total = _LOG_GAMMA_SERIES[9]
    for c in reversed(_LOG_GAMMA_SERIES[:9]):
        total = total * inv2 + c
    result = total / z + F(0.5) * F(1.8378770664093453) + (z - F(0.5)) * np.log(z) - z
    for _ in range(shift):
        result = result - np.log(z - F(1.0))
        z = z - F(1.0)
    return F(result)


def poisson(state: int, lam: float) -> tuple[int, int]:
    """(value, state after) of Warp's poisson draw (runtime random.h's poisson_draw)."""
    lam32 = F(lam)

    def draw() -> np.float32:
        nonlocal state
        state = pcg(state)
        return unit(state)
    if lam32 == F(0.0):
        return 0, state
    with np.errstate(all="ignore"):
        if not lam32 >= F(10.0):
            limit, count, product = np.exp(-lam32), 0, F(1.0)
            while True:
                product = product * draw()
                if not product > limit:
                    return count, state
                count += 1
        root, log_lam = np.sqrt(lam32), np.log(lam32)
        b = F(2.53) * root + F(0.931)
        a = F(0.02483) * b + F(-0.059)
        inv_alpha = F(1.1239) + F(1.1328) / (b - F(3.4))
        v_r = F(0.9277) - F(3.6224) / (b - F(2.0))
        while True:
            u = draw() - F(0.5)
            v = draw()
            us = F(0.5) - abs(u)
            k = np.floor(((F(2.0) * a) / us + b) * u + lam32 + F(0.43))
            if us >= F(0.07) and v <= v_r:
                return int(k), state
            if k < F(0.0) or (us < F(0.013) and v > us):
                continue
            accept = -lam32 + k * log_lam - _poisson_log_gamma(F(k + F(1.0)))
            if np.log(v) + np.log(inv_alpha) - np.log(a / (us * us) + b) <= accept:
                return int(k), state


@impl("poisson", "poisson_state")
def _poisson(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    value, after = poisson(int(a[0]), float(a[1]))
    return np.uint32(value if call.op == "poisson" else after)
