"""Finite-difference coverage: the adjoints no other gradient test reached (acos, asin, tan, cbrt,
log10, sign, clamp, select, where, unary minus, scalar atomics, `A[i] += v` / `-=`, `t[i, j] -= v`,
the accumulator of `tile_matmul(a, b, out)`), in float64 and in float32 with a tolerance to match,
on shapes that overhang the tiles; and a check that every differentiable op of the table appears
in a kernel whose adjoint some test compares with central finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT, needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec import ir
from tilec.ops import OPS, coop

SOURCE = '''
import warp as wp


@wp.kernel
def scalar_math(A: wp.array(dtype=DT), B: wp.array(dtype=DT), C: wp.array(dtype=DT), S: wp.array(dtype=DT)):
    i = wp.tid()
    a = A[i]
    b = B[i]
    y = wp.clamp(a, DT(-0.5), DT(0.5)) + wp.select(b > DT(0.0), a * b, a - b) + wp.where(a > b, a * a, b * b)
    y += (-a) * b + wp.acos(a) + wp.asin(a) + wp.tan(a) + wp.cbrt(b) + wp.log10(wp.abs(b) + DT(0.5))
    y += wp.sign(b) * a
    C[i] = y
    wp.atomic_add(S, 0, y * a)
    S[1] += a * b
    S[2] -= b * b


@wp.kernel
def tile_math(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(4, 5), offset=(i * 4, 0))
    b = wp.tile_load(B, shape=(4, 5), offset=(i * 4, 0))
    c = wp.tile_map(wp.acos, a) + wp.tile_map(wp.asin, a) + wp.tile_map(wp.tan, a) + wp.tile_map(wp.cbrt, b)
    c += wp.tile_map(wp.log10, wp.tile_map(wp.abs, b) + DT(0.5)) + wp.tile_map(wp.sign, b) * a - b
    wp.tile_store(C, -c, offset=(i * 4, 0))


@wp.kernel
def tile_elements(A: wp.array2d(dtype=DT), V: wp.array(dtype=DT), C: wp.array2d(dtype=DT)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(3, 4), offset=(i * 3, 0))
    t[1, 2] -= V[i] * V[i]
    t[0, 3] += V[i]
    wp.tile_store(C, t, offset=(i * 3, 0))


@wp.kernel
def inplace_builtins(A: wp.array2d(dtype=DT), V: wp.array(dtype=DT), C: wp.array2d(dtype=DT)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(3, 4), offset=(i * 3, 0))
    wp.tile_add_inplace(t, 1, 2, V[i] * V[i])  # once per lane, as in Warp
    wp.tile_sub_inplace(t, 0, 3, V[i])
    wp.tile_store(C, t, offset=(i * 3, 0))


@wp.kernel
def matmul_accumulator(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C0: wp.array2d(dtype=DT),
                       C: wp.array2d(dtype=DT)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(4, 3), offset=(i * 4, 0))
    b = wp.tile_load(B, shape=(3, 5))
    acc = wp.tile_load(C0, shape=(4, 5), offset=(i * 4, 0))
    wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc * DT(2.0), offset=(i * 4, 0))
'''

DTYPES = {
    # float32: a large step on smooth functions, and a tolerance that allows for rounding
    "float64": dict(h=1e-6, rtol=1e-5, atol=1e-7),
    "float32": dict(h=1e-2, rtol=3e-2, atol=3e-2),
}


def away_from(x, points, gap):
    """x moved at least `gap` away from each of `points` (finite differences must not cross a kink)."""
    for p in points:
        near = np.abs(x - p) < gap
        x = np.where(near, p + np.where(x >= p, gap, -gap), x)
    return x


@pytest.fixture(scope="module", params=sorted(DTYPES))
def case(request):
    dtype = request.param
    source = SOURCE.replace("DT", "wp." + dtype)
    return build(source, f"fdcov_{dtype}"), np.dtype(dtype), DTYPES[dtype]


pytestmark = [pytest.mark.build, needs_cxx]


def rnd(rng, *shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def test_scalar_math_atomics_and_element_updates(case):
    mod, dtype, tol = case
    rng = np.random.default_rng(1)
    a = away_from(np.clip(rnd(rng, 13, scale=0.3), -0.6, 0.6), (-0.5, 0.5), 0.05)
    b = away_from(rnd(rng, 13), (0.0,), 0.1)
    b = np.where(np.abs(a - b) < 0.05, b + 0.1, b)  # where(a > b, ...): no tie within the step
    args = [a.astype(dtype), b.astype(dtype), np.zeros(13, dtype), np.zeros(3, dtype)]
    check_gradients(mod.scalar_math, 13, args, outputs=[2, 3], wrt=[0, 1], tiled=False, **tol)


def test_tile_maps_on_partial_tiles(case):
    mod, dtype, tol = case
    rng = np.random.default_rng(2)
    a = np.clip(rnd(rng, 7, 5, scale=0.3), -0.6, 0.6)
    b = away_from(rnd(rng, 7, 5), (0.0,), 0.1)
    args = [a.astype(dtype), b.astype(dtype), np.zeros((7, 5), dtype)]
    check_gradients(mod.tile_math, 2, args, outputs=[2], wrt=[0, 1], **tol)


def test_tile_element_add_and_subtract(case):
    mod, dtype, tol = case
    rng = np.random.default_rng(3)
    args = [rnd(rng, 5, 4).astype(dtype), rnd(rng, 2).astype(dtype), np.zeros((5, 4), dtype)]
    check_gradients(mod.tile_elements, 2, args, outputs=[2], wrt=[0, 1], **tol)


def test_inplace_element_builtins(case):
    mod, dtype, tol = case
    rng = np.random.default_rng(5)
    args = [rnd(rng, 5, 4).astype(dtype), rnd(rng, 2).astype(dtype), np.zeros((5, 4), dtype)]
    check_gradients(mod.inplace_builtins, 2, args, outputs=[2], wrt=[0, 1], **tol)


def test_matmul_accumulator_gradient(case):
    mod, dtype, tol = case
    rng = np.random.default_rng(4)
    args = [rnd(rng, 6, 3).astype(dtype), rnd(rng, 3, 5).astype(dtype), rnd(rng, 6, 5).astype(dtype),
            np.zeros((6, 5), dtype)]
    check_gradients(mod.matmul_accumulator, 2, args, outputs=[3], wrt=[0, 1, 2], **tol)


# Test modules that check adjoints against central finite differences (check_gradients, tilec.gradcheck),
# and the samples (tests/test_sample_gradients.py): the programs they hold.
FD_TEST_MODULES = ["test_gradients", "test_ops_blas1_scans", "test_ops_coop", "test_ops_linalg_forms",
                   "test_ops_maps_precision", "test_array_views", "test_tile_subscripts", "test_warp_funcs",
                   "test_register_tiles", "test_values_programs", "test_atomic_extremes", "test_ops_random_scalar",
                   "test_ops_fft", "test_ops_rint_frac_copysign", "test_tuple_returns", "test_warp_builtins", "test_noise",
                   "test_spatial", "test_mesh_queries", "test_decompositions", "test_vector_reductions",
                   "test_volumes"]


def fd_checked_sources() -> dict:
    import importlib

    sources = {"test_fd_coverage": SOURCE.replace("DT", "wp.float64")}
    for name in FD_TEST_MODULES:
        module = importlib.import_module(name)
        assert {"check_gradients", "gradcheck"} & set(vars(module)), \
            f"{name} no longer checks gradients: update FD_TEST_MODULES"
        for attr, value in vars(module).items():
            if isinstance(value, str) and "@wp.kernel" in value:
                sources[f"{name}.{attr}"] = value
    sources.update({f"samples/{p.stem}": p.read_text() for p in sorted((ROOT / "samples").glob("*.py"))})
    return sources


def test_every_differentiable_op_has_a_finite_difference_test():
    seen = set()
    for name, source in fd_checked_sources().items():
        module = compile_ir(source, name.replace("/", "_").replace(".", "_"))
        for fn in module.kernels + module.funcs:
            for stmt in ir.walk_stmts(fn.body):
                for expr in ir.stmt_exprs(stmt):
                    for e in ir.walk_expr(expr):
                        if isinstance(e, ir.OpCall):
                            seen.add(e.op)
                            if e.op == "tile_map":  # and the builtin it maps over the tile
                                seen.add(e.attr("op"))
    differentiable = {name for name, spec in OPS.items() if spec.adj_cpp is not None}
    differentiable.discard("custom_call")  # a @wp.func_grad: the user's rule by design (test_warp_funcs.py)
    differentiable.discard("native_call")  # a float snippet's adjoint is refused (test_func_native.py)
    differentiable -= {alias for alias, op in coop.ALIASES.items() if op in seen}  # lowered to their op
    untested = sorted(differentiable - seen)
    assert not untested, f"differentiable ops no finite-difference test reaches: {untested}"
