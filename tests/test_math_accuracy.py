"""The runtime's own vectorisable float exp and tanh against float64 numpy, in ulps."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def k(X: wp.array1d(dtype=float), E: wp.array1d(dtype=float), T: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1024,), offset=(i * 1024,))
    wp.tile_store(E, wp.tile_map(wp.exp, x), offset=(i * 1024,))
    wp.tile_store(T, wp.tile_map(wp.tanh, x), offset=(i * 1024,))
'''


def ulps(got, ref):
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)


def test_exp_and_tanh_within_two_ulps():
    mod = build(SOURCE, "accuracy")
    x = np.concatenate([np.linspace(-88, 88, 100000), np.linspace(-1, 1, 100000),
                        np.geomspace(1e-8, 0.7, 50000), -np.geomspace(1e-8, 0.7, 50000),
                        [0.0, 100.0, -120.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    x = np.pad(x, (0, 1024 - len(x) % 1024))
    E, T = np.zeros_like(x), np.zeros_like(x)
    mod.k.launch_tiled(dim=len(x) // 1024, inputs=[x, E, T])
    with np.errstate(over="ignore"):
        ref_e, ref_t = np.exp(x.astype(np.float64)), np.tanh(x.astype(np.float64))
        normal = (ref_e > np.finfo(np.float32).tiny) & (ref_e < np.finfo(np.float32).max)
    assert ulps(E[normal], ref_e[normal]).max() <= 2
    nz = (ref_t != 0) & np.isfinite(ref_t)
    assert ulps(T[nz], ref_t[nz]).max() <= 2
    assert np.isnan(E[np.isnan(x)]).all() and np.isnan(T[np.isnan(x)]).all()
    assert E[x == 100.0][0] == np.inf or E[x == 100.0][0] > 3e38  # overflow saturates high
    assert E[x == -120.0][0] == 0.0 and T[x == np.inf][0] == 1.0 and T[x == -np.inf][0] == -1.0
