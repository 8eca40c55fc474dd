"""A module rounds the same at every optimisation level: generated code is compiled with
-ffp-contract=off (backend_cpu/compiler.py), so `a * b + c` is two roundings at -O1 and at -O3
alike (g++ fuses them into FMAs from -O2 up otherwise, even across statements), and the runtime's
own FMAs (scalar.h's polynomials) are explicit at every level."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build_with_flags
from tilec.api import load

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def tiles(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float), C: wp.array1d(dtype=float),
          Y: wp.array1d(dtype=float), Z: wp.array1d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(256,), offset=(i * 256,))
    b = wp.tile_load(B, shape=(256,), offset=(i * 256,))
    c = wp.tile_load(C, shape=(256,), offset=(i * 256,))
    wp.tile_store(Y, a * b + c, offset=(i * 256,))
    wp.tile_store(Z, wp.tile_map(wp.tanh, a) * b - wp.tile_map(wp.exp, c) * a, offset=(i * 256,))


@wp.kernel
def lanes(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float), C: wp.array1d(dtype=float),
          Y: wp.array1d(dtype=float)):
    i = wp.tid()
    p = A[i] * B[i]
    q = p + C[i]
    Y[i] = q * A[i] - wp.log(B[i] * B[i] + 1.0)
'''

N = 256 * 16


def results(folder):
    mod = load(folder)
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    y, z, w = np.zeros(N, np.float32), np.zeros(N, np.float32), np.zeros(N, np.float32)
    mod.tiles.launch_tiled(dim=N // 256, inputs=[a, b, c, y, z])
    mod.lanes.launch(dim=N, inputs=[a, b, c, w])
    ga = np.zeros(N, np.float32)
    gy = rng.standard_normal(N).astype(np.float32)
    mod.lanes.launch(dim=N, inputs=[a, b, c, w], adj_inputs=[ga, np.zeros(N, np.float32), np.zeros(N, np.float32), gy],
                     adjoint=True)
    return {"a*b+c": y, "tanh, exp": z, "lanes": w, "adjoint": ga}


def test_minus_o1_and_minus_o3_give_the_same_bits(tmp_path):
    high = results(build_with_flags(SOURCE, "high", tmp_path))
    low = results(build_with_flags(SOURCE, "low", tmp_path, lambda flags: ["-O1" if f == "-O3" else f for f in flags]))
    for key, got in high.items():
        assert np.array_equal(got, low[key]), key
    # two roundings, not one: a * b rounded to float32, then the sum
    y = high["a*b+c"]
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    assert np.array_equal(y, (a * b) + c)
