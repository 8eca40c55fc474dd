"""Every sample's adjoint against float64 central finite differences.

Each sample is compiled as written except for its float width: `float` becomes
`wp.float64` so finite differences are accurate. Sizes do not divide the tiles.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def float64_variant(name: str):
    source = (SAMPLES / f"{name}.py").read_text()
    source = re.sub(r"(?<![\w.])float(?![\w])", "wp.float64", source)
    return build(source, f"{name}64")


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_gemm():
    mod = float64_variant("gemm")
    A, B = rnd(40, 37, seed=1), rnd(37, 35, seed=2)
    check_gradients(mod.gemm, (2, 2), [A, B, np.zeros((40, 35))], outputs=[2], wrt=[0, 1], samples=60)


def test_softmax():
    mod = float64_variant("softmax")
    X = rnd(6, 256, seed=3)
    check_gradients(mod.softmax, 2, [X, np.zeros((6, 256))], outputs=[1], wrt=[0], samples=80)


def test_layernorm():
    mod = float64_variant("layernorm")
    X, g, b = rnd(5, 256, seed=4) * 2 + 1, rnd(256, seed=5), rnd(256, seed=6)
    check_gradients(mod.layernorm, 2, [X, g, b, np.zeros((5, 256))], outputs=[3], wrt=[0, 1, 2], samples=60,
                    rtol=1e-5, atol=1e-7)


def test_mlp():
    mod = float64_variant("mlp")
    X, W1, b1 = rnd(20, 64, seed=7), rnd(64, 64, seed=8) / 8, rnd(64, seed=9)
    W2, b2 = rnd(64, 32, seed=10) / 8, rnd(32, seed=11)
    check_gradients(mod.mlp, 2, [X, W1, b1, W2, b2, np.zeros((20, 32))], outputs=[5], wrt=[0, 1, 2, 3, 4],
                    samples=40, rtol=1e-5, atol=1e-7)


def test_attention():
    mod = float64_variant("attention")
    Q, K, V = rnd(20, 32, seed=12), rnd(64, 32, seed=13), rnd(64, 32, seed=14)
    check_gradients(mod.attention, 2, [Q, K, V, np.zeros((20, 32))], outputs=[3], wrt=[0, 1, 2], samples=40,
                    rtol=1e-5, atol=1e-7)


def test_cholesky():
    mod = float64_variant("cholesky")
    M = rnd(3, 8, 8, seed=15)
    A = M @ M.transpose(0, 2, 1) + 8 * np.eye(8)
    Y = rnd(3, 8, seed=16)
    # the solve reads the lower triangle of A: perturbing it is what finite differences see
    check_gradients(mod.cholesky_solve, 3, [A, Y, np.zeros((3, 8))], outputs=[2], wrt=[0, 1], samples=80,
                    rtol=1e-5, atol=1e-8)


def test_nbody():
    source = (SAMPLES / "nbody.py").read_text().replace("wp.vec3", "wp.vec3d").replace("* DT", "* wp.float64(DT)")
    mod = build(re.sub(r"(?<![\w.])float(?![\w])", "wp.float64", source), "nbody64")
    rng = np.random.default_rng(8)
    pos, vel, mass = rng.standard_normal((256, 3)), 0.1 * rng.standard_normal((256, 3)), rng.uniform(0.5, 1.5, 256)
    check_gradients(mod.step, 8, [pos, vel, mass, np.zeros((256, 3)), np.zeros((256, 3))], outputs=[3, 4],
                    wrt=[0, 1, 2], samples=20, rtol=1e-5, atol=1e-7)
