"""bench/warp_tile_tests.py: every @wp.kernel of a file is found and classified (accepted, or
rejected with its first diagnostic), never dropped; a nested kernel is compiled per binding and a
kernel object Warp launches maps back to the instance of its binding."""
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


def factory(T: int):
    @wp.kernel
    def sized(a: wp.array[float]):
        t = wp.tile_load(a, shape=T)
        wp.tile_store(a, t)

    return sized


def unknowable(n):
    @wp.kernel
    def loose(a: wp.array[float]):
        a[0] = float(n)

    return loose


SIZED_4 = factory(4)
SIZED_8 = factory(8)


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
    assert set(kernels) == {"good", "fabric_param", "inner@30", "sized@38", "loose@47"}
    assert kernels["good"].status == "accepted"  # an unrelated broken func does not count against it
    assert kernels["fabric_param"].status == "rejected"
    assert kernels["fabric_param"].reason.startswith("TC0409: ") and "Fabric arrays" in kernels["fabric_param"].reason
    assert kernels["inner@30"].status == "accepted" and kernels["inner@30"].nested
    sized = kernels["sized@38"]
    assert sized.status == "accepted"
    assert sorted(i.bindings for i in sized.instances.values()) == [(("T", 4),), (("T", 8),)]
    assert kernels["loose@47"].status == "rejected" and kernels["loose@47"].reason.startswith("TC0433: ")
    assert not kernels["loose@47"].instances


def test_warp_kernel_objects_map_to_their_instance(tmp_path):
    """The kernel objects the file makes at import map, by code line and closure, to the tilec
    instance of the same binding; a binding tilec did not compile maps to none, with the reason."""
    bench = _bench()
    path = tmp_path / "test_sample_tiles.py"
    path.write_text(SOURCE)
    report = bench.static_phase(path, tmp_path / "out", build=False)
    for inst in report.kernels["sized@38"].instances.values():
        inst.status = "built"  # as if built: _find looks for a built instance
    report.module = object()
    spec = importlib.util.spec_from_file_location("test_sample_tiles", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    shadow = bench.Shadow.__new__(bench.Shadow)
    shadow.reports = {"test_sample_tiles": report}
    kr, name, _ = shadow._find(program.SIZED_8)
    assert kr is report.kernels["sized@38"] and report.kernels["sized@38"].instances[name].bindings == (("T", 8),)
    kr, name, why = shadow._find(program.factory(16))
    assert kr is report.kernels["sized@38"] and name is None and "T=16" in why
    kr, name, why = shadow._find(program.unknowable(3))
    assert kr is report.kernels["loose@47"] and name is None and why == "no instance compiled"


def test_only_integer_outputs_match_up_to_order():
    """Tile stack pops leave values in the lanes' order: the same integers in another order are
    counted apart (reordered), never other values; floats only for a kernel that pops a stack."""
    import numpy as np

    bench = _bench()
    assert bench._same_values(np.array([0, 10, 20]), np.array([20, 0, 10]))
    assert not bench._same_values(np.array([0, 10, 20]), np.array([20, 0, 11]))
    assert not bench._same_values(np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    assert bench._same_values(np.array([0.0, 1.5]), np.array([1.5, 0.0]), pops=True)
    assert not bench._same_values(np.array([0.0, 1.5]), np.array([1.5, 0.5]), pops=True)


def test_excused_mismatch_is_counted_apart():
    """A mismatch of a kernel in EXCUSED counts as excused (with the reason), never as matched."""
    bench = _bench()
    stem, name = next(iter(bench.EXCUSED))
    kr = bench.KernelReport(stem, name, 1)
    bench.Shadow._record(kr, False, False, "forward: argument(s) [0] differ from Warp")
    assert (kr.launches, kr.matched, kr.excused) == (1, 0, 1)
    assert kr.mismatch.startswith("excused: ")


def test_half_outputs_compare_at_half_resolution():
    """float16 results compare at a few half ulps (HALF_TOL); float32 at RTOL."""
    import numpy as np

    bench = _bench()
    a = np.array([12.0, 1.0], np.float16)
    assert bench._close(a, np.array([12.03125, 1.0], np.float16))  # 4 ulps at 12: 2.6e-3 relative
    assert not bench._close(a, np.array([12.25, 1.0], np.float16))
    assert not bench._close(np.array([12.0], np.float32), np.array([12.03125], np.float32))


def test_warp_builds_record_what_warp_compiled(tmp_path):
    """WarpBuilds marks a kernel "compiled" when a Warp module load holding it returns and "failed"
    (with the error) when it raises; a later successful build wins, a later failure does not
    undo one; kernels of other files are not recorded."""
    import warp as wp

    bench = _bench()
    path = tmp_path / "test_sample_tiles.py"
    path.write_text(SOURCE)
    report = bench.static_phase(path, tmp_path / "out", build=False)
    spec = importlib.util.spec_from_file_location("test_sample_tiles", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    wp.init()

    class Module:  # what record reads of a Warp module: its kernels
        def __init__(self, *kernels):
            self.kernels = {k.key: k for k in kernels}

        def _get_live_kernels(self):
            return list(self.kernels.values())

    builds = bench.WarpBuilds({"test_sample_tiles": report})
    builds.record(Module(program.fabric_param), "cpu", RuntimeError("no fabric here\nmore"))
    assert report.kernels["fabric_param"].warp == "failed"
    assert report.kernels["fabric_param"].warp_error == "RuntimeError: no fabric here"
    builds.record(Module(program.SIZED_4), "cpu", None)
    builds.record(Module(program.SIZED_4), "cpu", RuntimeError("later"))
    assert report.kernels["sized@38"].warp == "compiled"
    builds.record(Module(program.fabric_param), "cpu", None)
    assert report.kernels["fabric_param"].warp == "compiled" and not report.kernels["fabric_param"].warp_error
    assert report.kernels["good"].warp == ""  # never built
