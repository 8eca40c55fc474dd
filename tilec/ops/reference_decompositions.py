"""The reference interpreter's matrix decompositions (ops/decompositions.py): Warp's conventions for
svd3, svd2, qr3 and eig3, written in numpy: LAPACK's factors (numpy.linalg), brought to those
conventions, independently of the runtime's Jacobi rotations (decompositions.h). The signs of
singular vectors and the order of eigenvalues Warp leaves free are the runtime's only where a
convention fixes them; the adjoints are the analytic ones."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import ir
from ..ir.types import TupleT
from .core import registrar
from .reference_values import Context, Impl, Value, make_value

IMPL: dict[str, Impl] = {}
impl = registrar(IMPL)


def _f64(x: Value) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _out(call: ir.OpCall, values: Sequence[np.ndarray]) -> tuple[Value, ...]:
    assert isinstance(call.type, TupleT)
    return tuple(make_value(t, v) for t, v in zip(call.type.items, values))


def svd3(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U, sigma, V with det(U) = det(V) = +1, sigma by decreasing magnitude, sigma[2] signed as det(a)."""
    u, s, vt = np.linalg.svd(a)
    v = vt.T
    if np.linalg.det(u) < 0:
        u[:, 2] = -u[:, 2]
        s[2] = -s[2]
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
        s[2] = -s[2]
    return u, s, v


def svd2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U, sigma, V with sigma >= 0 by decreasing value and V a rotation (U a reflection where det(a) < 0)."""
    u, s, vt = np.linalg.svd(a)
    v = vt.T
    if np.linalg.det(v) < 0:
        v[:, 1] = -v[:, 1]
        u[:, 1] = -u[:, 1]
    return u, s, v


def qr3(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q a rotation, R upper triangular with R[0, 0], R[1, 1] >= 0."""
    q, r = np.linalg.qr(a)
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)
    q, r = q * signs, r * signs[:, None]
    if np.linalg.det(q) < 0:
        q[:, 2] = -q[:, 2]
        r[2] = -r[2]
    return q, r


def eig3(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d, q = np.linalg.eigh((a + a.T) / 2)
    if np.linalg.det(q) < 0:
        q[:, 2] = -q[:, 2]
    return q, d


def _reciprocal_or_zero(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(x != 0, 1.0 / np.where(x != 0, x, 1.0), 0.0)


def svd_adjoint(u: np.ndarray, s: np.ndarray, v: np.ndarray, gu: np.ndarray, gs: np.ndarray,
                gv: np.ndarray) -> np.ndarray:
    f = _reciprocal_or_zero(s[None, :] ** 2 - s[:, None] ** 2)
    np.fill_diagonal(f, 0.0)
    ug, vg = u.T @ gu, v.T @ gv
    inner = (f * (ug - ug.T)) * s[None, :] + np.diag(gs) + s[:, None] * (f * (vg - vg.T))
    return np.asarray(u @ inner @ v.T)


def qr_adjoint(q: np.ndarray, r: np.ndarray, gq: np.ndarray, gr: np.ndarray) -> np.ndarray:
    m = r @ gr.T - gq.T @ q
    lower = np.tril(m)
    return np.asarray(np.linalg.solve(r, (gq + q @ (lower + np.tril(m, -1).T)).T).T)


def eig_adjoint(q: np.ndarray, d: np.ndarray, gq: np.ndarray, gd: np.ndarray) -> np.ndarray:
    f = _reciprocal_or_zero(d[None, :] - d[:, None])
    np.fill_diagonal(f, 0.0)
    g = q @ (np.diag(gd) + f * (q.T @ gq)) @ q.T
    return np.asarray((g + g.T) / 2)


@impl("svd3", "svd2", "qr3", "eig3")
def _decompose(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    factors = {"svd3": svd3, "svd2": svd2, "qr3": qr3, "eig3": eig3}[call.op](_f64(a[0]))
    return _out(call, factors)


@impl("svd3_grad", "svd2_grad")
def _svd_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    u, s, v = (svd3 if call.op == "svd3_grad" else svd2)(_f64(a[0]))
    return make_value(call.type, svd_adjoint(u, s, v, *(_f64(x) for x in a[1:])))


@impl("qr3_grad")
def _qr_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    q, r = qr3(_f64(a[0]))
    return make_value(call.type, qr_adjoint(q, r, _f64(a[1]), _f64(a[2])))


@impl("eig3_grad")
def _eig_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    q, d = eig3(_f64(a[0]))
    return make_value(call.type, eig_adjoint(q, d, _f64(a[1]), _f64(a[2])))
