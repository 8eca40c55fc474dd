"""What an output folder holds, as a user reads it: the header's comments, the loader's account of
what was built."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT, needs_cxx
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate


def test_header_kernel_comment_keeps_one_parameter_per_line():
    source = (ROOT / "samples/gemm.py").read_text()
    header = generate(compile_ir(source, "gemm"), source, build_flags(256))["gemm.h"]
    start = header.index("/* kernel gemm")
    comment = header[start:header.index("*/", start) + 2].splitlines()
    assert comment == [
        "/* kernel gemm (gemm.py:15), block_dim 256, tiled",
        " *   A: array of float32, 2-d",
        " *   B: array of float32, 2-d",
        " *   C: array of float32, 2-d",
        " */",
    ]


SIMT = '''import warp as wp


@wp.kernel
def twice(A: wp.array1d(dtype=float)):
    i = wp.tid()
    A[i] = A[i] * 2.0
'''


def test_header_comment_of_a_plain_kernel():
    header = generate(compile_ir(SIMT, "simt"), SIMT, build_flags(256))["simt.h"]
    assert "/* kernel twice (simt.py:5), block_dim 256\n *   A: array of float32, 1-d\n */" in header


@needs_cxx
@pytest.mark.build
def test_loader_lists_exactly_what_was_built():
    mod = build(SIMT, "built_for_cpu")
    assert mod.built_for() == ["cpu"]
    a = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"device='tpu' is not available in this build \(built for: cpu\)$"):
        mod.twice.launch(dim=4, inputs=[a], device="tpu")
    with pytest.raises(RuntimeError, match=r"libbuilt_for_cpu_cuda_emu.so is missing \(built for: cpu\): run "
                                           r"`tilec build built_for_cpu.py --target cuda-emu`"):
        mod.twice.launch(dim=4, inputs=[a], device="cuda-emu")
    mod.twice.launch(dim=4, inputs=[a])
    assert a.tolist() == [2.0] * 4
