"""tile_fft / tile_ifft static checks: a tile that is not of complex values (vec2f/vec2d), a 1-d
tile, a non-power-of-two length past Warp's limit, a non-tile, extra arguments and a temporary
argument are diagnostics at exact line:col; long power-of-two rows and 3-d tiles check."""
from __future__ import annotations

import pytest

import harness
from tilec.frontend.check import Options
from tilec.pipeline import compile_source

KERNEL = """import warp as wp


@wp.kernel
def k(x: wp.array2d(dtype=wp.vec2f), v: wp.array2d(dtype=wp.vec3), f: wp.array2d(dtype=float), y: wp.array(dtype=wp.vec2f)):
    t = wp.tile_load(x, shape=(4, 8))
    {line}
"""


def first_error(line: str) -> str:
    return harness.first_error(KERNEL.format(line=line))


@pytest.mark.parametrize("line, want", [
    ("wp.tile_fft(wp.tile_load(f, shape=(4, 8)))", "7:17: TC0203: tile_fft: needs a tile of complex values "
     "(wp.vec2f or wp.vec2d: [real, imag]), got a float32 tile of shape (4, 8)"),
    ("wp.tile_ifft(wp.tile_load(v, shape=(2, 4)))", "7:18: TC0203: tile_ifft: needs a tile of complex values "
     "(wp.vec2f or wp.vec2d: [real, imag]), got a vec3f tile of shape (2, 4)"),
    ("wp.tile_fft(wp.tile_load(y, shape=8))", "7:17: TC0107: tile_fft: `inout` must be a tile of 2 or more "
     "dimensions (leading ones are batches, the transform runs along the last), got shape (8,)"),
    ("wp.tile_fft(wp.tile_zeros(shape=(1, 4097), dtype=wp.vec2f))", "7:17: TC0111: tile_fft: a transform length "
     "that is not a power of two must be at most 4096 (as in Warp), got 4097 (shape (1, 4097))"),
    ("wp.tile_fft(x)", "7:17: TC0303: tile_fft: `inout` must be a tile, got"),
    ("wp.tile_fft(t, t)", "7:20: TC0303: tile_fft: takes at most 1 positional argument(s), got 2"),
])
def test_static_checks_name_the_line_and_column(line, want):
    got = first_error(line)
    assert got.startswith(want), got


def test_long_power_of_two_rows_and_3d_tiles_check():
    for line in ("z = wp.tile_zeros(shape=(1, 8192), dtype=wp.vec2f); wp.tile_fft(z)",
                 "z = wp.tile_zeros(shape=(2, 3, 5), dtype=wp.vec2d); wp.tile_ifft(z)"):
        compile_source(KERNEL.format(line=line), "prog.py", Options(block_dim=32))


def test_argument_must_be_a_variable():
    got = first_error("wp.tile_fft(wp.tile_zeros(shape=(2, 8), dtype=wp.vec2f))")
    assert got == "7:5: TC0408: tile_fft: `inout` must be a variable (it is updated in place)", got
