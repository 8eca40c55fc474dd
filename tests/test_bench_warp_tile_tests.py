"""bench/warp_tile_tests.py's static phase: every @wp.kernel of a file is found and classified
(accepted, rejected with its first diagnostic, or nested and unseen), never dropped."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "warp_tile_tests.py"

SOURCE = '''import warp as wp

TILE = 8


@wp.func
def twice(x: float) -> float:
    return 2.0 * x


@wp.func
def broken(x: float) -> float:
    return undefined_name


@wp.kernel
def good(a: wp.array[float], b: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(b, wp.tile_map(twice, t), offset=i * TILE)


@wp.kernel
def fabric_param(a: wp.fabricarray(dtype=float)):
    pass


def make():
    @wp.kernel
    def inner(a: wp.array[float]):
        pass

    return inner


def launch():
    wp.launch_tiled(good, dim=1, inputs=[], block_dim=32)
'''


def _bench():
    spec = importlib.util.spec_from_file_location("warp_tile_tests_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_static_phase_classifies_every_kernel(tmp_path):
    bench = _bench()
    path = tmp_path / "test_sample_tiles.py"
    path.write_text(SOURCE)
    report = bench.static_phase(path, tmp_path / "out", build=False)
    assert report.block_dim == 32  # from the launch's block_dim=
    kernels = report.kernels
    assert set(kernels) == {"good", "fabric_param", "inner@30"}
    assert kernels["good"].status == "accepted"  # an unrelated broken func does not count against it
    assert kernels["fabric_param"].status == "rejected"
    assert kernels["fabric_param"].reason.startswith("TC0409: ") and "Fabric arrays" in kernels["fabric_param"].reason
    assert kernels["inner@30"].status == "unseen"
