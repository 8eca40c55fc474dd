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


def test_python_inside_an_output_folder_still_imports_tilec(tmp_path):
    import subprocess
    import sys

    from click.testing import CliRunner

    from tilec.cli import main

    assert CliRunner().invoke(main, ["build", str(ROOT / "samples/gemm.py"), "-o", str(tmp_path),
                                     "--emit-only"]).exit_code == 0
    folder = tmp_path / "gemm"
    vendored = [p.name for p in folder.iterdir() if p.is_dir()]
    assert vendored == ["tilec-rt"] and not vendored[0].isidentifier()
    assert '#include "tilec-rt/tilec.h"' in (folder / "gemm.cpp").read_text()
    for cwd in (folder, tmp_path):
        proc = subprocess.run([sys.executable, "-c", "import tilec, tilec.cli; print(tilec.__version__)"], cwd=cwd,
                              capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.strip() == tilec_version(), proc.stderr


def tilec_version():
    from tilec import __version__

    return __version__


def test_the_loader_is_tiny_and_its_runtime_is_shared(tmp_path):
    """A module's __init__.py names the module and executes the vendored runtime; the runtime
    files (tilec-rt/loader.py, spatial.py, structs.py, tape.py, torch_function.py) are byte-identical across
    modules."""
    from tilec.codegen.sources import loader_files
    from tilec.naming import RUNTIME_DIR

    a, b = loader_files("alpha", "alpha.py"), loader_files("beta", "beta.py")
    assert len(a["__init__.py"].splitlines()) < 25
    assert "tilec module `alpha`" in a["__init__.py"] and "import numpy" not in a["__init__.py"]
    shared = [name for name in a if name.startswith(f"{RUNTIME_DIR}/")]
    assert sorted(shared) == [f"{RUNTIME_DIR}/{n}.py" for n in ("loader", "spatial", "structs", "tape", "torch_function")]
    for name in shared:
        assert a[name] == b[name]
        assert "alpha" not in a[name] and "import tilec" not in a[name]
    assert "import numpy as np" in a[f"{RUNTIME_DIR}/loader.py"]
