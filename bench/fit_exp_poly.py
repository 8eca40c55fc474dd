"""Derive the coefficients of scalar.h's exp_reduced: e^r ~ 1 + r (1 + r P(r)) on |r| <= ln2/2.

P has degree 4. The fit minimises the largest relative error over a grid (least squares whose
weights grow where the error is largest, Lawson's iteration towards the minimax polynomial); then
the highest coefficient is rounded to float32 and the others refit around it, down to the lowest,
so the coefficients scalar.h writes are the ones the error was measured with.

    python bench/fit_exp_poly.py      # prints the coefficients, highest first, and the error

tests/test_math_accuracy.py checks that scalar.h holds exactly these coefficients.
"""
from __future__ import annotations

import numpy as np

DEGREE = 4  # of P: e^r's polynomial has degree DEGREE + 2
POINTS = 20001
ITERATIONS = 60


def fit() -> tuple[list[float], float]:
    """The float32 coefficients of P, lowest degree first, and the fit's largest relative error."""
    half = np.log(2.0) / 2 * 1.0001  # the reduction's |r| bound plus its rounding
    r = np.linspace(-half, half, POINTS)
    exact = np.exp(r)
    # relative error of 1 + r + sum_k c_k r^(k + 2) against e^r, linear in the c_k
    basis = np.stack([r ** (k + 2) for k in range(DEGREE + 1)], axis=1) / exact[:, None]
    target = (exact - 1.0 - r) / exact
    fixed: dict[int, float] = {}
    coeffs = np.zeros(DEGREE + 1)
    error = np.inf
    for _ in range(DEGREE + 2):
        free = [k for k in range(DEGREE + 1) if k not in fixed]
        rest = target - sum((basis[:, k] * v for k, v in fixed.items()), np.zeros_like(r))
        weights = np.ones_like(r)
        for _ in range(ITERATIONS if free else 1):
            if free:
                sol, *_ = np.linalg.lstsq(basis[:, free] * weights[:, None], rest * weights, rcond=None)
                coeffs[free] = sol
            residual = np.abs(basis @ coeffs - target)
            weights = weights * np.sqrt(np.sqrt(residual / residual.max())) + 1e-300
            weights /= weights.mean()
        error = float(residual.max())
        if not free:
            break
        top = max(free)
        fixed[top] = float(np.float32(coeffs[top]))
        coeffs[top] = fixed[top]
    return [float(np.float32(c)) for c in coeffs], error


def main() -> None:
    coeffs, error = fit()
    for c in reversed(coeffs):
        print(f"{c!r}f")
    print(f"max relative error {error:.3e} ({error / 2.0 ** -24:.3f} of 2^-24)")


if __name__ == "__main__":
    main()
