"""The runtime's own vectorisable float exp, log and tanh (scalar.h) against float64 numpy, in ulps,
over a dense sweep of every float32 bit pattern (the bound docs/language.md states)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import sampling
from conftest import needs_cxx
from harness import build, build_with_flags
from tilec.api import load

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def k(X: wp.array1d(dtype=float), E: wp.array1d(dtype=float), L: wp.array1d(dtype=float),
      T: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1024,), offset=(i * 1024,))
    wp.tile_store(E, wp.tile_map(wp.exp, x), offset=(i * 1024,))
    wp.tile_store(L, wp.tile_map(wp.log, x), offset=(i * 1024,))
    wp.tile_store(T, wp.tile_map(wp.tanh, x), offset=(i * 1024,))
'''

ROOT = Path(__file__).resolve().parent.parent
MAX_ULPS = 1.5  # docs/language.md, "Floating-point math"
STRIDE = 1021  # every 1021st float32 bit pattern: ~4.2 million inputs, both signs, subnormals to NaN


def ulps(got, ref):
    """|got - ref| in units of the float32 spacing at ref (2^-149 among subnormals); a result
    that must be inf, 0 or NaN counts 0 when it is, inf when it is not."""
    ref32 = ref.astype(np.float32)
    err = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref32)).astype(np.float64)
    special = ~np.isfinite(ref32)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    return np.where(special, np.where(same, 0.0, np.inf), err)


def sweep():
    bits = np.arange(0, 2 ** 32, STRIDE, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])])
    return np.pad(x, (0, -len(x) % 1024), constant_values=1.0)


def run(x, target="cpu"):
    mod = build(SOURCE, "accuracy", block_dim=64, target=target)
    E, L, T = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    mod.k.launch_tiled(dim=len(x) // 1024, inputs=[x, E, L, T], device=target)
    return E, L, T


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda-emu", marks=pytest.mark.cuda)])
def test_exp_log_tanh_within_the_documented_ulps_over_a_float32_sweep(target):
    x = sweep()
    if target == "cuda-emu":  # the same functions compiled from the .cu: every 8th input suffices
        x = np.pad(x[::8], (0, -len(x[::8]) % 1024), constant_values=1.0)
    E, L, T = run(x, target)
    with np.errstate(all="ignore"):  # the references overflow, divide by zero, take NaNs
        x64 = x.astype(np.float64)
        for got, ref in ((E, np.exp(x64)), (L, np.log(x64)), (T, np.tanh(x64))):
            assert ulps(got, ref).max() <= MAX_ULPS


def test_edges():
    nans_with_payloads = np.uint32([0x7FC00001, 0xFFC00123, 0x7F800001]).view(np.float32)
    x = np.pad(np.concatenate([np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -120.0, 88.72, -103.0, 1e-45,
                                           -1.0, 9.5]), nans_with_payloads]), (0, 1009), constant_values=1.0)
    E, L, T = run(x)
    assert E[:4].tolist() == [1.0, 1.0, np.inf, 0.0] and np.isnan(E[4])
    assert E[5] == np.inf and E[6] == 0.0 and np.isfinite(E[7]) and 0 < E[8] < 1.2e-38  # subnormal, not flushed
    assert L[:3].tolist() == [-np.inf, -np.inf, np.inf] and np.isnan(L[3]) and np.isnan(L[4])
    assert abs(L[9] - np.log(np.float64(x[9]))) < 1e-5 and np.isnan(L[10])  # the smallest subnormal
    assert T[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.isnan(T[4]) and T[11] == 1.0
    assert np.signbit(T[1]) and abs(T[10] - np.tanh(-1.0)) < 1e-7
    assert np.isnan(E[12:15]).all() and np.isnan(L[12:15]).all() and np.isnan(T[12:15]).all()


def test_exp_polynomial_is_the_one_its_fitting_script_derives():
    """scalar.h's exp_reduced holds exactly the float coefficients bench/fit_exp_poly.py prints."""
    spec = importlib.util.spec_from_file_location("fit_exp_poly", ROOT / "bench" / "fit_exp_poly.py")
    fitting = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fitting)
    coeffs, error = fitting.fit()
    scalar_h = (ROOT / "runtime_headers" / "tilec" / "scalar.h").read_text()
    body = scalar_h[scalar_h.index("TL_HD float exp_reduced(float r) {"):]
    body = body[:body.index("\n}")]
    written = [float(np.float32(v)) for v in re.findall(r"(-?\d+\.\d+(?:e-?\d+)?)f", body)]
    assert written == [*reversed(coeffs), 1.0, 1.0]
    assert error < 0.1 * 2.0 ** -24


# Every float32 bit pattern, in 256 chunks of 2^24 consecutive patterns, through the library as the
# product builds it (-O3): TILEC_TESTS_FULL=1 runs them all (about 5 minutes; the per-function
# maxima docs/language.md quotes), the default run the chunk sampling.shard() picks.
CHUNK = 1 << 24
CHUNKS = range(256) if sampling.full() else [sampling.shard() % 256]


@pytest.fixture(scope="module")
def product_library(tmp_path_factory):
    return load(build_with_flags(SOURCE, "accuracy_o3", tmp_path_factory.mktemp("accuracy"), block_dim=64))


@pytest.mark.parametrize("chunk", CHUNKS)
def test_every_float32_of_a_chunk_within_the_documented_ulps(product_library, chunk):
    x = np.arange(chunk * CHUNK, (chunk + 1) * CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
    E, L, T = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    product_library.k.launch_tiled(dim=CHUNK // 1024, inputs=[x, E, L, T])
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        for got, ref in ((E, np.exp(x64)), (L, np.log(x64)), (T, np.tanh(x64))):
            assert ulps(got, ref).max() <= MAX_ULPS
