"""`mod.<kernel>.torch_function(...)`: a torch.autograd.Function whose backward launches the generated
adjoint; its gradient equals the loader's adjoint launch and float64 finite differences (CPU tensors;
skipped without torch)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''import warp as wp


@wp.kernel
def gemm_tanh(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64),
              s: wp.float64):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(4, 8), offset=(i * 4, 0))
    b = wp.tile_load(B, shape=(8, 4), offset=(0, j * 4))
    c = wp.tile_matmul(a, b)
    wp.tile_store(C, wp.tile_map(wp.tanh, c * s), offset=(i * 4, j * 4))


@wp.kernel
def rows(X: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64), Z: wp.array1d(dtype=wp.float64)):
    i = wp.tid()
    Y[i] = X[i] * X[i]
    Z[i] = wp.sin(X[i])
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "torch_bridge")


def operands():
    rng = np.random.default_rng(7)
    return rng.uniform(-1, 1, (8, 8)), rng.uniform(-1, 1, (8, 8))


def test_gradient_equals_the_loaders_adjoint_and_finite_differences(mod):
    A0, B0 = operands()
    weights = np.random.default_rng(8).uniform(0.5, 1.5, (8, 8))
    GemmTanh = mod.gemm_tanh.torch_function(dim=(2, 2), outputs=["C"])
    assert issubclass(GemmTanh, torch.autograd.Function)
    A = torch.tensor(A0, requires_grad=True)
    B = torch.tensor(B0, requires_grad=True)
    initial = torch.zeros(8, 8, dtype=torch.float64)
    C = GemmTanh.apply(A, B, initial, 0.5)
    assert torch.allclose(C, torch.tanh(0.5 * (A @ B)))
    assert not initial.any()  # the output buffer passed in is not written
    (C * torch.tensor(weights)).sum().backward()

    # the loader's own adjoint launch on the same values
    dA, dB = np.zeros((8, 8)), np.zeros((8, 8))
    mod.gemm_tanh.launch_tiled(dim=(2, 2), inputs=[A0, B0, np.zeros((8, 8)), 0.5],
                               adj_inputs=[dA, dB, weights.copy(), 0.0], adjoint=True)
    assert np.array_equal(A.grad.numpy(), dA) and np.array_equal(B.grad.numpy(), dB)

    # float64 central differences of sum(weights * tanh(0.5 * A @ B))
    def loss(a, b):
        c = np.zeros((8, 8))
        mod.gemm_tanh.launch_tiled(dim=(2, 2), inputs=[a, b, c, 0.5])
        return float((c * weights).sum())

    h = 1e-6
    for k, (X0, grad) in enumerate(((A0, dA), (B0, dB))):
        for idx in [(0, 0), (3, 5), (7, 2)]:
            up, down = X0.copy(), X0.copy()
            up[idx] += h
            down[idx] -= h
            args_up = (up, B0) if k == 0 else (A0, up)
            args_down = (down, B0) if k == 0 else (A0, down)
            assert grad[idx] == pytest.approx((loss(*args_up) - loss(*args_down)) / (2 * h), rel=1e-6, abs=1e-9)

    # and autograd agrees with torch's own derivative of the same expression
    A2, B2 = torch.tensor(A0, requires_grad=True), torch.tensor(B0, requires_grad=True)
    (torch.tanh(0.5 * (A2 @ B2)) * torch.tensor(weights)).sum().backward()
    assert torch.allclose(A.grad, A2.grad) and torch.allclose(B.grad, B2.grad)


def test_several_outputs_and_torch_gradcheck(mod):
    Rows = mod.rows.torch_function(dim=5, outputs=["Y", "Z"])
    X = torch.linspace(-1, 1, 5, dtype=torch.float64, requires_grad=True)
    Y, Z = Rows.apply(X, torch.zeros(5, dtype=torch.float64), torch.zeros(5, dtype=torch.float64))
    assert torch.allclose(Y, X * X) and torch.allclose(Z, torch.sin(X))
    assert torch.autograd.gradcheck(lambda x: Rows.apply(x, torch.zeros(5, dtype=torch.float64),
                                                         torch.zeros(5, dtype=torch.float64)), (X,))


def test_bad_uses_are_clean_errors(mod):
    with pytest.raises(ValueError, match="no parameter `D`"):
        mod.rows.torch_function(dim=5, outputs=["D"])
    with pytest.raises(ValueError, match="output `s` is not an array"):
        mod.gemm_tanh.torch_function(dim=(2, 2), outputs=["s"])
    Rows = mod.rows.torch_function(dim=5, outputs=["Y"])
    with pytest.raises(TypeError, match="argument `X` must be a torch.Tensor, got list"):
        Rows.apply([1.0] * 5, torch.zeros(5, dtype=torch.float64), torch.zeros(5, dtype=torch.float64))
    with pytest.raises(TypeError, match="argument `X` must have dtype float64, got float32"):
        Rows.apply(torch.zeros(5), torch.zeros(5, dtype=torch.float64), torch.zeros(5, dtype=torch.float64))

