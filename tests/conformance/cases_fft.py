"""Conformance cases for tile_fft / tile_ifft (issue #14 item 8): complex (vec2f/vec2d) tiles
transformed in place along the last axis, against Warp 1.19's CPU path (its power-of-two FFT with
block_dim > 1; the O(N^2) DFT it runs for other lengths needs block_dim=1 on the CPU)."""
from cases import Arr, Case

F = "fft_rows.py"


def carr(*shape, vt="vec2", role="in"):
    """An array of complex values: numpy's shape is the array's shape and then [re, im]."""
    dtype = "float64" if vt.endswith("d") else "float32"
    return Arr(tuple(shape) + (2,), dtype, role, "zeros" if role == "out" else "randn", value=vt)


def cout(*shape, vt="vec2"):
    return carr(*shape, vt=vt, role="out")


CASES = [
    Case("fft_spectrum", F, "spectrum", dim=(2,), args=(carr(7, 16), cout(7, 16)), block_dim=8,
         rtol=1e-4, atol=1e-4),
    Case("fft_inverse_of_doubled", F, "inverse_of_doubled", dim=(1,), args=(carr(2, 8, vt="vec2d"),
         cout(2, 8, vt="vec2d")), block_dim=4),
    Case("fft_round_trip", F, "round_trip", dim=(1,), args=(carr(3, 30, vt="vec2d"), cout(3, 32, vt="vec2d"),
         cout(3, 32, vt="vec2d")), block_dim=8),
    Case("fft_odd_length", F, "odd_length", dim=(1,), args=(carr(2, 12, vt="vec2d"), cout(2, 12, vt="vec2d")),
         block_dim=1),
    Case("fft_batched3d", F, "batched3d", dim=(1,), args=(carr(2, 3, 8), cout(2, 3, 8)), block_dim=4,
         rtol=1e-4, atol=1e-4),
]
