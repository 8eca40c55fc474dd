"""bfloat16 tiles (storage only, computed in float32 and rounded back at each operation, as Warp):
tile_load/tile_store, tile_map with a @wp.func and a builtin, tile_transpose, tile_astype and
tile_matmul of bfloat16 operands into a float32 `out` (Warp allows that only without a backward
pass, hence the module option). Bit for bit against Warp 1.19 on the CPU and against numpy with the
rounding modelled, on the CPU and the CUDA emulation; a bfloat16 accumulator is a diagnostic, as
Warp refuses it. Arrays of bfloat16 are their raw bits (uint16) in numpy, as Warp's .numpy()."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, import_under_warp
from test_annotations import from_bf16, to_bf16
from tilec.diagnostics import CompileError
from tilec.pipeline import compile_source

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''import warp as wp

BF = wp.bfloat16
wp.set_module_options({"enable_backward": False})  # Warp: bfloat16 matmul operands need it


@wp.func
def scaled(x: wp.bfloat16, y: wp.bfloat16):
    return x * y + wp.bfloat16(0.5)


@wp.kernel
def ops(a: wp.array2d(dtype=BF), b: wp.array2d(dtype=BF), c: wp.array2d(dtype=BF), d: wp.array2d(dtype=float),
        s: wp.array2d(dtype=BF), e: wp.array2d(dtype=float)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=(4, 8), offset=(i * 4, 0))
    tb = wp.tile_load(b, shape=(8, 4))
    wp.tile_store(c, wp.tile_map(scaled, ta, ta), offset=(i * 4, 0))
    acc = wp.tile_zeros(shape=(4, 4), dtype=float)
    wp.tile_matmul(ta, tb, acc)
    wp.tile_store(d, acc, offset=(i * 4, 0))
    wp.tile_store(s, wp.tile_map(wp.sin, ta), offset=(i * 4, 0))
    wp.tile_store(e, wp.tile_astype(wp.tile_transpose(tb), float) * 3.0)
'''
ROWS = 7  # two blocks of 4 rows: the second overhangs the arrays


def inputs():
    rng = np.random.default_rng(16)
    return to_bf16(rng.standard_normal((ROWS, 8))), to_bf16(rng.standard_normal((8, 4)))


def outputs():
    return [np.zeros((ROWS, 8), np.uint16), np.zeros((ROWS, 4), np.float32), np.zeros((ROWS, 8), np.uint16),
            np.zeros((4, 8), np.float32)]


def rounded(x):
    return from_bf16(to_bf16(np.asarray(x, np.float32)))


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_bfloat16_tiles_against_numpy(device):
    A, B = inputs()
    outs = outputs()
    build(SOURCE, "bf16tiles", block_dim=16, target=device).ops.launch_tiled(dim=2, inputs=[A, B, *outs],
                                                                              block_dim=16, device=device)
    a, b = from_bf16(A), from_bf16(B)
    np.testing.assert_array_equal(outs[0], to_bf16(rounded(a * a) + np.float32(0.5)))  # each op rounds
    np.testing.assert_allclose(outs[1], a @ b, rtol=1e-6, atol=1e-6)  # accumulated in float32
    np.testing.assert_array_equal(outs[2], to_bf16(np.sin(a)))
    np.testing.assert_array_equal(outs[3], b.T * np.float32(3.0))


def test_bfloat16_tiles_match_warp_bit_for_bit(tmp_path, monkeypatch):
    wp, theirs_mod = import_under_warp(SOURCE, "warp_bf16tiles", tmp_path, monkeypatch)
    A, B = inputs()
    a = wp.array(A, dtype=wp.uint16, device="cpu").view(wp.bfloat16)
    b = wp.array(B, dtype=wp.uint16, device="cpu").view(wp.bfloat16)
    theirs = [wp.zeros((ROWS, 8), dtype=wp.bfloat16, device="cpu"), wp.zeros((ROWS, 4), dtype=float, device="cpu"),
              wp.zeros((ROWS, 8), dtype=wp.bfloat16, device="cpu"), wp.zeros((4, 8), dtype=float, device="cpu")]
    wp.launch_tiled(theirs_mod.ops, dim=2, inputs=[a, b, *theirs], block_dim=16, device="cpu")
    mine = outputs()
    build(SOURCE, "bf16tiles", block_dim=16).ops.launch_tiled(dim=2, inputs=[A, B, *mine], block_dim=16)
    for t, m in zip(theirs, mine):
        np.testing.assert_array_equal(t.numpy().view(m.dtype), m)
    sys.modules.pop("warp_bf16tiles", None)


HEAD = """import warp as wp


@wp.kernel
def k(a: wp.array2d(dtype=wp.bfloat16), d: wp.array2d(dtype=wp.bfloat16)):
    t = wp.tile_load(a, shape=(4, 4))
"""


@pytest.mark.parametrize("line, col, where", [
    ("wp.tile_store(d, wp.tile_matmul(t, t))", 37, "the result"),
    ("acc = wp.tile_zeros(shape=(4, 4), dtype=wp.bfloat16)\n    wp.tile_matmul(t, t, acc)", 26, "`out`"),
])
def test_bfloat16_accumulator_is_refused_as_in_warp(line, col, where):
    with pytest.raises(CompileError) as err:
        compile_source(HEAD + "    " + line + "\n", "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.col) == ("TC0203", col)
    assert "cannot accumulate in bfloat16" in diag.message and where in diag.message
