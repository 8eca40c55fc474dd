"""The command line: exit codes, messages, emit targets, and no tracebacks."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tilec(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tilec.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_check_success_is_silent():
    proc = tilec("check", ROOT / "samples/gemm.py")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_missing_file_is_a_clean_error():
    proc = tilec("check", "does/not/exist.py")
    assert proc.returncode == 1 and "cannot read file" in proc.stderr and "Traceback" not in proc.stderr


def test_internal_errors_apologise_in_one_line_with_exit_2(tmp_path):
    # a sitecustomize that breaks the checker simulates a compiler bug
    (tmp_path / "sitecustomize.py").write_text(
        "import tilec.frontend.module as m\n"
        "def boom(self):\n    raise RuntimeError('simulated bug')\n"
        "m.ModuleChecker.run = boom\n")
    env_path = f"{tmp_path}"
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", str(ROOT / "samples/gemm.py")],
                          capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal compiler error" in lines[0] and "simulated bug" in lines[0]


def test_dump_after_check_prints_the_typed_ir():
    proc = tilec("check", ROOT / "samples/softmax.py", "--dump-after", "check")
    assert proc.returncode == 0
    assert "kernel softmax(X: array2d(float32), Y: array2d(float32))" in proc.stdout
    assert "tile_max(x, axis=1)" in proc.stdout


def test_emit_targets_print_generated_text():
    cpp = tilec("emit", ROOT / "samples/gemm.py", "--target", "cpu").stdout
    assert "extern \"C\" int gemm_gemm_cpu_forward(" in cpp and "gemm_gemm_cpu_backward(" in cpp
    assert "// gemm.py:21" in cpp
    header = tilec("emit", ROOT / "samples/gemm.py", "--target", "header").stdout
    assert ("int gemm_gemm_cpu_forward(const tilec_launch* launch, tilec_array v_A, tilec_array v_B, "
            "tilec_array v_C);") in header
    loader = tilec("emit", ROOT / "samples/gemm.py", "--target", "loader").stdout
    assert "tilec module `gemm`" in loader and "tilec-rt" in loader and "import tilec" not in loader
    cu = tilec("emit", ROOT / "samples/gemm.py", "--target", "cuda").stdout
    assert 'extern "C" __global__ void __launch_bounds__(256) gemm_gemm_cuda_forward(' in cu
    assert "tl::Reg<tl::Tile<float, 32, 32>, 256> v_acc;" in cu


def test_show_types_reports_where_the_gpu_keeps_each_tile():
    out = tilec("check", ROOT / "samples/softmax.py", "--show-types").stdout
    # x and e feed axis reductions (other threads' elements): shared; m and s only elementwise
    assert "  x: tile(float32, (4, 256))  storage=shared  (local)" in out
    assert "  e: tile(float32, (4, 256))  storage=shared  (local)" in out
    assert "  m: tile(float32, (4, 256))  storage=register  (local)" in out
    assert "  s: tile(float32, (4, 256))  storage=register  (local)" in out


def test_all_errors_reported_in_one_run():
    proc = tilec("check", ROOT / "tests/ui/shapes.py")
    assert proc.returncode == 1 and proc.stderr.count("error[") == 29 and proc.stderr.strip().endswith("29 errors found")


BIG_TILES = '''import warp as wp


@wp.kernel
def big(A: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(128, 128))
    b = wp.tile_load(A, shape=(128, 128))
    wp.tile_store(C, wp.tile_transpose(wp.tile_matmul(a, b)))
'''


def test_gpu_shared_memory_past_an_architectures_limit_is_a_warning(tmp_path):
    (tmp_path / "big.py").write_text(BIG_TILES)
    # a budget raised past what the architectures allow (--max-shared): a warning per architecture
    proc = tilec("build", "big.py", "-o", "out", "--target", "cuda", "--arch", "sm_80,sm_90", "--emit-only",
                 "--max-shared", str(1 << 20), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # a, b, the product and its transpose: 4 x 64 KiB in shared memory
    assert ("big.py:5:5: warning[TC0601]: kernel `big` (forward) needs 256 KiB of shared memory per block on the "
            "GPU (sm_80 allows 163 KiB, sm_90 allows 227 KiB): its CUDA launches will fail") in proc.stderr
    assert "kernel `big` (backward) needs" in proc.stderr
    # by default the budget is the architectures' limit: the tiles past it live in global scratch
    # (tests/test_global_scratch.py), with no warning
    default = tilec("build", "big.py", "-o", "out", "--target", "cuda", "--emit-only", cwd=tmp_path)
    assert default.returncode == 0 and "TC0601" not in default.stderr and "TC0109" not in default.stderr
    # the CPU build has no such limit; nor has a kernel with small tiles
    assert "TC0601" not in tilec("build", "big.py", "-o", "out", "--target", "cpu", "--emit-only", cwd=tmp_path).stderr
    small = tilec("build", ROOT / "samples/gemm.py", "-o", tmp_path / "g", "--target", "cuda", "--emit-only")
    assert small.returncode == 0 and "TC0601" not in small.stderr


def test_a_projects_own_module_named_like_the_standard_librarys_does_not_shadow_it(tmp_path):
    """`python -m tilec` puts the working folder first on sys.path; inside a Warp project that holds a
    math.py (Newton's newton/ folder) click's `import math` took the project's. tilec drops that entry."""
    import os

    (tmp_path / "math.py").write_text('raise ImportError("the project\'s math.py was imported")\n')
    (tmp_path / "prog.py").write_text("import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                                      "    a[wp.tid()] = 1.0\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}  # CI's setting would hide the case
    proc = subprocess.run([sys.executable, "-m", "tilec", "check", "prog.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
