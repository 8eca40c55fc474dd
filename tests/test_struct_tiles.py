"""Tiles of @wp.struct elements (frontend/lower_struct_tiles.py): adjoints tilec refuses name the line,
gradients it gives match float64 finite differences on both emitted paths, and the IR past the
checker holds only the leaves' tiles. Conformance (cases_struct_tiles.py) compares with Warp."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec import ir
from tilec.ir.types import StructT, TileT

SOURCE = '''import warp as wp

N = 8


@wp.struct
class Cell:
    rho: float
    u: wp.vec2


@wp.func
def flux(c: Cell) -> float:
    return c.rho * c.u[0] - c.u[1] * c.u[1]


@wp.func
def relaxed(c: Cell, k: float) -> Cell:
    r = Cell()
    r.rho = c.rho * k
    r.u = c.u * (c.rho + k)
    return r


@wp.kernel
def fluxes(cells: wp.array[Cell], out: wp.array[float]):
    t = wp.tile_load(cells, shape=N)
    w = wp.tile_map(relaxed, t, 0.5) + t
    wp.tile_store(out, wp.tile_map(flux, w))


@wp.kernel
def scattered(cells: wp.array[Cell], idx: wp.array[int], out: wp.array[Cell]):
    i = wp.tile_load(idx, shape=N)
    t = wp.tile_load(cells, shape=N)
    wp.tile_store_indexed(out, indices=i, t=t, axis=0)
'''


def test_ir_holds_only_leaf_tiles():
    module = compile_ir(SOURCE, "cells")
    for fn in module.kernels:
        for stmt in ir.walk_stmts(fn.body):
            for e in ir.stmt_exprs(stmt):
                for sub in ir.walk_expr(e):
                    assert not (isinstance(sub.type, TileT) and isinstance(sub.type.dtype, StructT)), sub


def test_refused_adjoint_names_the_line(tmp_path):
    path = tmp_path / "cells.py"
    path.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{path}:36:5: warning[TC0501]: tile_store_indexed of a vec2f tile" in proc.stderr
    assert proc.stderr.count("warning[TC0501]") == 1  # fluxes is differentiated


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_gradient_through_struct_funcs_matches_finite_differences(device):
    module = build(SOURCE, "cells", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    dt = module.Cell.numpy_dtype()
    rng = np.random.default_rng(3)
    cells = np.zeros(8, dt)
    cells["rho"], cells["u"] = rng.random(8) + 0.5, rng.standard_normal((8, 2))
    seed = rng.standard_normal(8).astype(np.float32)

    def loss(c) -> float:  # float64 on the host from the float32 kernel's outputs
        out = np.zeros(8, np.float32)
        module.fluxes.launch_tiled(dim=(1,), inputs=[c, out], device=device, block_dim=8)
        return float(np.dot(seed.astype(np.float64), out))

    adj = np.zeros(8, dt)
    module.fluxes.launch_tiled(dim=(1,), inputs=[cells, np.zeros(8, np.float32)], adj_inputs=[adj, seed.copy()],
                               adjoint=True, device=device, block_dim=8)
    h = 1e-2
    for field, shape in (("rho", (8,)), ("u", (8, 2))):
        d = rng.standard_normal(shape)
        plus, minus = cells.copy(), cells.copy()
        plus[field] += (h * d).astype(np.float32)
        minus[field] -= (h * d).astype(np.float32)
        numeric = (loss(plus) - loss(minus)) / (2 * h)
        analytic = float(np.sum(adj[field].astype(np.float64) * d))
        assert abs(numeric - analytic) <= 2e-2 * max(1.0, abs(numeric)), (field, numeric, analytic)


REDUCE_SOURCE = '''import warp as wp


@wp.struct
class Cell:
    rho: float
    u: wp.vec2


@wp.func
def pooled(a: Cell, b: Cell) -> Cell:
    r = Cell()
    r.rho = a.rho + b.rho
    r.u = a.u + b.u * 1.0
    return r


@wp.kernel
def pool(cells: wp.array2d[Cell], out: wp.array[float]):
    t = wp.tile_load(cells, shape=(3, 7))
    total = wp.tile_reduce(pooled, t)
    if wp.tile_reduce(pooled, t)[0].rho > -1.0e30:
        out[0] = total[0].rho * total[0].u[0] + total[0].u[1]


@wp.kernel
def pool_wide(cells: wp.array[Cell], out: wp.array[Cell]):
    wp.tile_store(out, wp.tile_reduce(pooled, wp.tile_load(cells, shape=256)))
'''


def test_reduce_tree_stays_linear_in_the_tile_size():
    """A reduction is log2(n) levels of tile_maps over hoisted leaves, not a tree of copied expressions."""
    module = compile_ir(REDUCE_SOURCE, "pooling")
    wide = next(fn for fn in module.kernels if fn.name.endswith("pool_wide"))
    nodes = sum(1 for stmt in ir.walk_stmts(wide.body) for e in ir.stmt_exprs(stmt) for _ in ir.walk_expr(e))
    assert nodes < 400, nodes


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_struct_reduce_matches_numpy_and_finite_differences(device):
    module = build(REDUCE_SOURCE, "pooling", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    dt = module.Cell.numpy_dtype()
    rng = np.random.default_rng(5)
    cells = np.zeros((3, 7), dt)
    cells["rho"], cells["u"] = rng.standard_normal((3, 7)), rng.standard_normal((3, 7, 2))

    def run(c) -> float:
        out = np.zeros(1, np.float32)
        module.pool.launch_tiled(dim=(1,), inputs=[c, out], device=device, block_dim=8)
        return float(out[0])

    rho, u = cells["rho"].astype(np.float64).sum(), cells["u"].astype(np.float64).sum(axis=(0, 1))
    assert run(cells) == pytest.approx(rho * u[0] + u[1], rel=1e-4, abs=1e-4)
    adj = np.zeros((3, 7), dt)
    module.pool.launch_tiled(dim=(1,), inputs=[cells, np.zeros(1, np.float32)],
                             adj_inputs=[adj, np.ones(1, np.float32)], adjoint=True, device=device, block_dim=8)
    np.testing.assert_allclose(adj["rho"], np.full((3, 7), u[0]), rtol=1e-4)
    np.testing.assert_allclose(adj["u"], np.broadcast_to([rho, 1.0], (3, 7, 2)), rtol=1e-4, atol=1e-4)
    h, d = 1e-2, rng.standard_normal((3, 7))
    plus, minus = cells.copy(), cells.copy()
    plus["rho"] += (h * d).astype(np.float32)
    minus["rho"] -= (h * d).astype(np.float32)
    numeric = (run(plus) - run(minus)) / (2 * h)
    assert numeric == pytest.approx(float(np.sum(adj["rho"] * d)), rel=2e-2, abs=2e-2)
    wide = np.zeros(256, dt)
    wide["rho"], wide["u"] = rng.standard_normal(256), rng.standard_normal((256, 2))
    total = np.zeros(1, dt)
    module.pool_wide.launch_tiled(dim=(1,), inputs=[wide, total], device=device, block_dim=8)
    assert total["rho"][0] == pytest.approx(wide["rho"].astype(np.float64).sum(), abs=1e-3)
    np.testing.assert_allclose(total["u"][0], wide["u"].astype(np.float64).sum(axis=0), atol=1e-3)


KEYED_SOURCE = '''import warp as wp


@wp.struct
class KeyValue:
    key: wp.int32
    value: wp.float32


@wp.func
def kv_max(a: KeyValue, b: KeyValue) -> KeyValue:
    return wp.where(a.value < b.value, b, a)


@wp.func
def larger(a: float, b: float) -> float:
    return wp.where(a < b, b, a)


@wp.kernel
def argmax(values: wp.array2d[KeyValue], res: wp.array[KeyValue]):
    i = wp.tid()
    t = wp.tile_load(values, shape=(1, 16), offset=(i, 0))
    wp.tile_store(res, wp.tile_reduce(kv_max, t), offset=i)


@wp.kernel
def larger_of(x: wp.array[float], y: wp.array[float], out: wp.array[float]):
    wp.tile_store(out, wp.tile_map(larger, wp.tile_load(x, shape=16), wp.tile_load(y, shape=16)))
'''


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_where_on_structs_and_its_lifted_adjoint(device):
    """wp.where of two struct values selects field by field (Warp's keyed argmax through tile_reduce);
    a tile_map over a func using wp.where has the adjoint of a per-element select (was an internal error)."""
    module = build(KEYED_SOURCE, "keyed", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    rng = np.random.default_rng(11)
    values = np.zeros((3, 16), module.KeyValue.numpy_dtype())
    values["key"] = np.arange(16)
    values["value"] = rng.permuted(np.tile(np.arange(16, dtype=np.float32), (3, 1)), axis=1)
    res = np.zeros(3, values.dtype)
    module.argmax.launch_tiled(dim=(3,), inputs=[values, res], device=device, block_dim=8)
    np.testing.assert_array_equal(res["key"], np.argmax(values["value"], axis=1))
    np.testing.assert_array_equal(res["value"], np.full(3, 15.0, np.float32))
    x, y = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    out, seed = np.zeros(16, np.float32), rng.standard_normal(16).astype(np.float32)
    module.larger_of.launch_tiled(dim=(1,), inputs=[x, y, out], device=device, block_dim=8)
    np.testing.assert_array_equal(out, np.maximum(x, y))
    adj_x, adj_y = np.zeros(16, np.float32), np.zeros(16, np.float32)
    module.larger_of.launch_tiled(dim=(1,), inputs=[x, y, out], adj_inputs=[adj_x, adj_y, seed.copy()],
                                  adjoint=True, device=device, block_dim=8)
    np.testing.assert_array_equal(adj_x, np.where(x < y, 0, seed))
    np.testing.assert_array_equal(adj_y, np.where(x < y, seed, 0))
