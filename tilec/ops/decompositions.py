"""Warp's matrix decompositions: `wp.svd3`, `wp.svd2`, `wp.qr3` and `wp.eig3`. Each gives a tuple of factors
that a statement unpacks (`U, sigma, V = wp.svd3(A)`; Warp's form with output arguments,
`wp.svd3(A, U, sigma, V)`, is lowered to that). The runtime computes them (decompositions.h); their
adjoints are the analytic ones, `<op>_grad(A, adjoints of the factors)`, which recompute the factors
from A (passes/adjoint_statements.py reverses the unpacking with them)."""
from __future__ import annotations

from typing import NamedTuple

from ..ir.types import MatT, TupleT, Type, VecT, describe
from .core import Bound, OpSpec, Param


class Factors(NamedTuple):
    size: int  # the matrix is size x size
    names: tuple[str, ...]  # Warp's names of the factors (its output arguments: `wp.svd3(A, U, sigma, V)`)
    kinds: str  # what each factor is: "m" a matrix like A, "v" a vector of its dtype


A = Param("A", "value")
FACTORS = {"svd3": Factors(3, ("U", "sigma", "V"), "mvm"), "svd2": Factors(2, ("U", "sigma", "V"), "mvm"),
           "qr3": Factors(3, ("Q", "R"), "mm"), "eig3": Factors(3, ("Q", "d"), "mv")}
DOCS = {
    "svd3": "(U, sigma, V): A = U diag(sigma) V^T, U and V rotations, sigma by decreasing magnitude (sigma[2] "
            "signed as det(A))",
    "svd2": "(U, sigma, V): A = U diag(sigma) V^T, U and V orthogonal, sigma >= 0 by decreasing value",
    "qr3": "(Q, R): A = Q R, Q a rotation, R upper triangular (R[2, 2] signed as det(A))",
    "eig3": "(Q, d): A's symmetric part = Q diag(d) Q^T, Q a rotation of eigenvectors",
}


def _matrix(b: Bound, n: int) -> MatT:
    t = b.types["A"]
    if not (isinstance(t, MatT) and t.rows == n and t.cols == n and t.dtype.is_float):
        b.fail("TC0201", f"takes a {n}x{n} matrix of floats, got {describe(t)}", "A")
    return t


def _factors(op: str, t: MatT) -> tuple[Type, ...]:
    return tuple(t if kind == "m" else VecT(t.dtype, t.rows) for kind in FACTORS[op].kinds)


def _decomposition(b: Bound) -> Type:
    return TupleT(_factors(b.op, _matrix(b, FACTORS[b.op].size)))


def _gradient(b: Bound) -> Type:
    return _matrix(b, FACTORS[b.op.removesuffix("_grad")].size)


OPS = (
    [OpSpec(op, (A,), _decomposition, op, DOCS[op], adj_cpp=f"{op}_grad") for op in FACTORS]
    + [OpSpec(f"{op}_grad", (A, *(Param(f"adj{k}", "value") for k in range(len(f.kinds)))), _gradient,
              f"{op}_grad", f"the adjoint of A given the adjoints of {op}'s factors", api=False, elementwise=True)
       for op, f in FACTORS.items()]
)
