"""FFT on tiles of complex values (Warp's tile_fft / tile_ifft), in place along the last axis.

A complex value is a `wp.vec2f` or `wp.vec2d` holding [real, imaginary]. Every leading axis of
the tile (at least one: Warp wants a 2-d or higher tile) is a batch; the last axis, of length N,
is transformed. The transforms are unnormalised, as Warp 1.19 documents them and numpy.fft
computes them:

    tile_fft:  X[k] = sum_n x[n] exp(-2 pi i k n / N)   (numpy.fft.fft)
    tile_ifft: x[n] = sum_k X[k] exp(+2 pi i k n / N)   (N * numpy.fft.ifft)

Both are linear; seen as real maps on the [re, im] pairs, the adjoint of the forward DFT matrix F
is its conjugate transpose, which is the unnormalised inverse DFT (and vice versa), so the
gradient of tile_fft is tile_ifft of the incoming gradient and the other way round
(ops/adjoints.py). The runtime (runtime_headers/tilec/fft.h) runs a radix-2 FFT for
power-of-two N and a direct O(N^2) DFT otherwise, limited like Warp's CPU path to MAX_DFT_LENGTH.
The op updates its argument (MUTATES): `wp.tile_fft(t)` is `t = tile_fft(t)` in the IR.

tilec takes every block_dim and any tile storage here; Warp 1.19 is narrower (a register tile; on
its CPU, with block_dim > 1, a power-of-two N divisible by block_dim, other N only with block_dim=1;
on a GPU, limits that depend on its cuFFTDx build), so every program Warp compiles compiles here.
"""
from __future__ import annotations

from ..ir.types import FLOAT32, FLOAT64, TileT, VecT, describe, fmt_shape
from . import rules
from .core import Bound, OpSpec, Param

# Longest non-power-of-two transform (Warp 1.19's CPU limit for its O(N^2) DFT): the runtime
# keeps one row of N values as scratch.
MAX_DFT_LENGTH = 4096


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _transform(b: Bound) -> TileT:
    t = rules.tile(b, "inout")
    d = t.dtype
    if not (isinstance(d, VecT) and d.family == "vec" and d.length == 2 and d.dtype in (FLOAT32, FLOAT64)):
        b.fail("TC0203", f"needs a tile of complex values (wp.vec2f or wp.vec2d: [real, imag]), got "
               f"{describe(t)}", "inout")
    if t.ndim < 2:
        b.fail("TC0107", f"`inout` must be a tile of 2 or more dimensions (leading ones are batches, the "
               f"transform runs along the last), got shape {fmt_shape(t.shape)}", "inout")
    n = t.shape[-1]
    # A symbolic length (str) raises TypeError, which the checker reports as TC0111 (lower_call.py).
    if not is_power_of_two(n) and n > MAX_DFT_LENGTH:  # type: ignore[arg-type, operator]
        b.fail("TC0111", f"a transform length that is not a power of two must be at most {MAX_DFT_LENGTH} "
               f"(as in Warp), got {n} (shape {fmt_shape(t.shape)})", "inout")
    return t


INOUT = Param("inout", "value")

OPS = [
    OpSpec("tile_fft", (INOUT,), _transform, "tile_fft",
           "in place: the unnormalised DFT of each row along the last axis, X[k] = sum_n x[n] e^(-2 pi i kn/N) "
           "(numpy.fft.fft), on vec2f/vec2d tiles of 2+ dims", adj_cpp="tile_ifft"),
    OpSpec("tile_ifft", (INOUT,), _transform, "tile_ifft",
           "in place: the unnormalised inverse DFT along the last axis, x[n] = sum_k X[k] e^(+2 pi i kn/N) "
           "(N * numpy.fft.ifft)", adj_cpp="tile_fft"),
]
MUTATES = {"tile_fft": ("inout",), "tile_ifft": ("inout",)}
