"""The numpy interpreter agrees with the compiled CPU code, forward and adjoint, on the samples
and on op programs; and it covers every op of the table."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.interp import Interpreter
from tilec.ops import OPS
from tilec.ops.reference import IMPL

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_every_op_has_a_reference_implementation():
    assert sorted(set(OPS) - set(IMPL)) == []


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def run_both(name, kernel, dim, make_args, adj_out=None, f64=True):
    source = (SAMPLES / f"{name}.py").read_text()
    if f64:
        source = re.sub(r"(?<![\w.])float(?![\w])", "wp.float64", source)
    module = compile_ir(source, f"{name}_i")
    interp = Interpreter(module)
    compiled = build(source, f"{name}_i")
    a_args, b_args = make_args(), make_args()
    getattr(compiled, kernel).launch_tiled(dim=dim, inputs=a_args)
    interp.launch(kernel, dim, b_args)
    for x, y in zip(a_args, b_args):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11)
    if adj_out is not None:
        adj_a = [np.zeros_like(x) if isinstance(x, np.ndarray) else 0 for x in a_args]
        adj_b = [np.zeros_like(x) if isinstance(x, np.ndarray) else 0 for x in b_args]
        adj_a[adj_out] = np.ones_like(a_args[adj_out])
        adj_b[adj_out] = np.ones_like(b_args[adj_out])
        getattr(compiled, kernel).launch_tiled(dim=dim, inputs=a_args, adj_inputs=adj_a, adjoint=True)
        interp.launch(kernel, dim, b_args, adjoint=True, adj_inputs=adj_b)
        for x, y in zip(adj_a, adj_b):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-10)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("name,kernel,dim,make,adj", [
    ("gemm", "gemm", (2, 2), lambda: [rnd(40, 37, seed=1), rnd(37, 35, seed=2), np.zeros((40, 35))], 2),
    ("softmax", "softmax", 2, lambda: [rnd(7, 256, seed=3), np.zeros((7, 256))], 1),
    ("layernorm", "layernorm", 2, lambda: [rnd(7, 256, seed=4), rnd(256, seed=5), rnd(256, seed=6), np.zeros((7, 256))], 3),
    ("mlp", "mlp", 2, lambda: [rnd(20, 64, seed=7), rnd(64, 64, seed=8) / 8, rnd(64, seed=9), rnd(64, 32, seed=10) / 8, rnd(32, seed=11), np.zeros((20, 32))], 5),
    ("attention", "attention", 2, lambda: [rnd(20, 32, seed=12), rnd(64, 32, seed=13), rnd(64, 32, seed=14), np.zeros((20, 32))], 3),
], ids=["gemm", "softmax", "layernorm", "mlp", "attention"])
def test_interpreter_matches_compiled_samples(name, kernel, dim, make, adj):
    run_both(name, kernel, dim, make, adj_out=adj)


def test_interpreter_runs_plain_kernels_with_control_flow():
    src = '''
import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=int), O: wp.array1d(dtype=int)):
    i = wp.tid()
    n = A[i]
    s = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        s += 1
        if s > 50:
            break
    O[i] = s
'''
    interp = Interpreter(compile_ir(src, "collatz"))
    A, O = np.array([1, 6, 7, 27], np.int32), np.zeros(4, np.int32)
    interp.launch("k", 4, [A, O], tiled=False)
    assert list(O) == [0, 8, 16, 51]


VEC_ARRAYS = """
import warp as wp


@wp.kernel
def vec_rows(x: wp.array2d(dtype=wp.vec3d), y: wp.array2d(dtype=wp.vec3d), z: wp.array2d(dtype=wp.vec3d)):
    i = wp.tid()
    t = wp.tile_load(x, shape=(2, 4), offset=(i * 2, 1))
    wp.tile_store(y, t * wp.float64(2.0), offset=(i * 2, 0))
    wp.tile_atomic_add(z, t + t * wp.float64(0.5), offset=(i * 2, 2))
"""


@pytest.mark.build
@needs_cxx
def test_interpreter_loads_and_stores_tiles_of_arrays_of_vectors():
    """Arrays of vectors are numpy arrays with the components as trailing axes: tile windows index
    the element axes only (the interpreter indexed the components as a third axis and failed);
    windows overhang the array, forward and adjoint against the compiled CPU code."""
    module = compile_ir(VEC_ARRAYS, "vec_arrays_i")
    interp = Interpreter(module)
    compiled = build(VEC_ARRAYS, "vec_arrays_i")
    make = lambda: [rnd(3, 5, 3, seed=21), np.zeros((3, 5, 3)), np.zeros((3, 5, 3))]  # noqa: E731
    a_args, b_args = make(), make()
    compiled.vec_rows.launch_tiled(dim=2, inputs=a_args)
    interp.launch("vec_rows", 2, b_args)
    for k in (1, 2):
        np.testing.assert_allclose(b_args[k], a_args[k], rtol=1e-12)
        assert np.any(b_args[k] != 0)
    adj_a = [np.zeros_like(a_args[0]), np.ones_like(a_args[1]), rnd(3, 5, 3, seed=22)]
    adj_b = [np.zeros_like(b_args[0]), np.ones_like(b_args[1]), adj_a[2].copy()]
    compiled.vec_rows.launch_tiled(dim=2, inputs=a_args, adj_inputs=adj_a, adjoint=True)
    interp.launch("vec_rows", 2, b_args, adjoint=True, adj_inputs=adj_b)
    np.testing.assert_allclose(adj_b[0], adj_a[0], rtol=1e-12)
    assert np.any(adj_b[0] != 0)
