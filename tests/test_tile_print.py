"""print(t) of a tile (issue #13, Warp's test_tile_print): once per block, in Warp 1.19's layout
(`[[1 1 1]\\n [1 1 1]] = tile(shape=(2,3), storage=shared)`), with the storage Warp gives the
tile (codegen/tile_print.py), on the CPU and through the .cu code's printf (CUDA emulation).
1-d and 2-d tiles are compared with Warp's own output; for 3-d and more Warp 1.19 prints the
wrong elements (its nested levels step by one axis's extent instead of the sub-tile's size), so
those are compared with the layout rule (ops/reference.py tile_text) on numpy's values."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, import_under_warp
from tilec.ops.reference import tile_text

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def row(x: wp.array(dtype=wp.int32), y: wp.array(dtype=wp.int32)):
    t = wp.tile_load(x, shape=(8,), storage="register")
    wp.print(t)
    wp.tile_store(y, t * 2)


@wp.kernel
def grids(x: wp.array2d(dtype=float)):
    shared_tile = wp.tile_ones(shape=(4, 3), dtype=float, storage="shared")
    wp.print(shared_tile)
    t = wp.tile_load(x, shape=(2, 5))
    print(t * 0.5)
    print(wp.tile_matmul(t, wp.tile_transpose(t)))


@wp.kernel
def deep(x: wp.array3d(dtype=float)):
    c = wp.tile_load(x, shape=(2, 2, 3))
    print(c)
    print(wp.tile_reshape(c, shape=(3, 1, 2, 2)))
'''
X2 = (np.arange(10, dtype=np.float32).reshape(2, 5) - 3) / 4


def _warp_output(capfd, tmp_path, monkeypatch, launches):
    wp, prog = import_under_warp(SOURCE, "tile_print_prog", tmp_path, monkeypatch)
    capfd.readouterr()
    for name, args, bd in launches:
        wp.launch_tiled(getattr(prog, name), dim=1, inputs=[wp.array(a, device="cpu") for a in args], block_dim=bd,
                        device="cpu")
    wp.synchronize()
    return "".join(line for line in capfd.readouterr().out.splitlines(keepends=True)
                   if not line.startswith("Module tile_print_prog "))  # Warp's own note that it compiled


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_1d_and_2d_tiles_print_as_warp_prints_them(device, capfd, tmp_path, monkeypatch):
    x = np.arange(1, 9, dtype=np.int32)
    launches = [("row", [x, np.zeros(8, np.int32)], 16), ("grids", [X2], 16)]
    want = _warp_output(capfd, tmp_path, monkeypatch, launches)
    assert want.startswith("[1 2 3 4 5 6 7 8] = tile(shape=(8), storage=register)\n")  # Warp's test's line
    assert "[[1 1 1]\n [1 1 1]\n [1 1 1]\n [1 1 1]] = tile(shape=(4,3), storage=shared)\n" in want
    m = build(SOURCE, "tile_print_prog", block_dim=16, target="cpu" if device == "cpu" else "cuda-emu")
    for name, args, bd in launches:
        getattr(m, name).launch_tiled(dim=1, inputs=args, block_dim=bd, device=device)
    assert capfd.readouterr().out == want


def test_deeper_tiles_keep_warps_layout_with_the_right_elements(capfd):
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3) + 0.25
    m = build(SOURCE, "tile_print_prog", block_dim=16)
    capfd.readouterr()
    m.deep.launch_tiled(dim=1, inputs=[x], block_dim=16)
    out = capfd.readouterr().out
    assert out == tile_text(x, "register") + "\n" + tile_text(x.reshape(3, 1, 2, 2), "shared") + "\n"
    assert out.startswith("[[[0.25 1.25 2.25]\n  [3.25 4.25 5.25]]\n\n [[6.25 7.25 8.25]\n  [9.25 10.25 11.25]]]")


def test_nothing_is_printed_by_the_adjoint(capfd):
    m = build(SOURCE, "tile_print_prog", block_dim=16)
    x, y = np.arange(8, dtype=np.int32), np.zeros(8, np.int32)
    capfd.readouterr()
    m.grids.launch_tiled(dim=2, inputs=[X2], block_dim=16)
    assert capfd.readouterr().out.count(" = tile(") == 6  # once per block
    m.grids.launch_tiled(dim=1, inputs=[X2], adj_inputs=[np.zeros_like(X2)], adjoint=True, block_dim=16)
    assert capfd.readouterr().out == ""
    del x, y
