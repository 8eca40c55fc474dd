"""Warp's annotation spellings and scalar types, built and run: every array spelling binds the
arrays it names, and uint64/int16/uint16/bfloat16 (storage only, computed in float32) store what
numpy computes with the same widths."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

VALID = Path(__file__).parent / "valid"


def to_bf16(x) -> np.ndarray:
    """float32 -> bfloat16 bits, rounded to nearest even (as Warp and tilec do)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


@pytest.fixture(scope="module")
def spellings():
    return build((VALID / "v28_array_spellings.py").read_text(), "v28_array_spellings", block_dim=8)


@needs_cxx
@pytest.mark.build
def test_scalar_types_compute_like_numpy(spellings):
    rng = np.random.default_rng(0)
    n = 5
    a = np.array([1, 2**63, 2**64 - 10, 7, 0], np.uint64)
    b = rng.integers(-100, 100, n).astype(np.int16)
    c = np.array([1, 65530, 300, 0, 9], np.uint16)
    d32 = rng.standard_normal(n).astype(np.float32)
    d = to_bf16(d32)
    e = np.array([127, 0, -128, 5, 1], np.int8)
    f = np.array([255, 0, 3, 5, 1], np.uint8)
    g = np.array([2**32 - 1, 0, 3, 5, 1], np.uint32)
    h = rng.standard_normal(n).astype(np.float16)
    args = [x.copy() for x in (a, b, c, d, e, f, g, h)]
    u, s, v, w, x, k = 9, -3, 7, 1.3, 0.25, 2
    spellings.scalars.launch(dim=n, inputs=[*args, u, s, v, w, x, k, True])
    np.testing.assert_array_equal(args[0], a + np.uint64(u))  # wraps modulo 2**64
    np.testing.assert_array_equal(args[1], (b.astype(np.int32) * s).astype(np.int16))
    np.testing.assert_array_equal(args[2], (c.astype(np.int32) + v).astype(np.uint16))
    # bfloat16 * bfloat16: both rounded to bfloat16, multiplied in float32, rounded again
    np.testing.assert_array_equal(args[3], to_bf16(from_bf16(d) * from_bf16(to_bf16(w))))
    np.testing.assert_array_equal(args[4], (e.astype(np.int32) + 1).astype(np.int8))
    np.testing.assert_array_equal(args[5], (f.astype(np.int32) + k).astype(np.uint8))
    np.testing.assert_array_equal(args[6], (g.astype(np.uint64) + k).astype(np.uint32))
    np.testing.assert_allclose(args[7].astype(np.float32), (h.astype(np.float32) + np.float16(x)), rtol=1e-3)


@needs_cxx
@pytest.mark.build
def test_every_array_spelling_binds_its_array(spellings):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(2).astype(np.float32)
    b = np.zeros(2, np.float32)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    d = np.full((1, 1, 1), 0.5)
    e = np.full((1, 1, 1, 1), 3, np.int32)
    f = rng.standard_normal(2).astype(np.float32)
    g = np.zeros((1, 1))
    h = np.full((1, 1), 0.25)
    r = np.full(1, 2.0)
    m = np.full((1, 1, 1), 4, np.int64)
    c0 = c.copy()
    spellings.spellings.launch_tiled(dim=(2,), inputs=[a, b, c, d, e, f, g, h, r, m])
    np.testing.assert_allclose(c, c0 * np.repeat(a * 2.0, 8)[:, None], rtol=1e-6)
    np.testing.assert_allclose(b, f + (a >= 0), rtol=1e-6)
    assert g[0, 0] == 0.25 + 2.0 + 0.5 + 3 + 4


def test_bfloat16_bits_helper():
    assert from_bf16(to_bf16(np.float32(1.5)))[()] == 1.5
    assert to_bf16(np.float32(1.0 + 2**-8))[()] == to_bf16(np.float32(1.0))[()]  # ties to even


def test_warp_port_sample_differs_from_its_warp_original_only_in_the_import():
    """samples/warp_port.py with `import warp as wp` restored emits the same sources."""
    from tilec.codegen.sources import plan_kernels
    from tilec.driver import generate
    from harness import compile_ir

    sample = Path(__file__).parent.parent / "samples" / "warp_port.py"
    ported = sample.read_text()
    original = ported.replace("import tilec as wp  # the one change: was `import warp as wp`",
                              "import warp as wp")
    assert original != ported and "\nimport tilec" not in original
    emitted = []
    for text in (ported, original):
        module = compile_ir(text, "warp_port")
        files = generate(module, text, {"block_dim": 256}, plan_kernels(module))
        emitted.append({k: v for k, v in files.items() if k.endswith((".cpp", ".cu", ".h"))})
    assert emitted[0] == emitted[1]
