"""Global scratch for tiles past the shared-memory budget (issue #17 item 3, CUDA side): the layout
(backend_cuda/storage.shared_layout) keeps what fits the budget in shared memory and moves the
largest tiles to a per-block slice of a global buffer; the generated .cu, the manifest and the header
agree with it; kernels with 256x256 tiles (a matmul / map / transpose chain, full and partial tiles)
run on the CUDA emulation and match numpy forward and finite differences backward; the launch's
allocation failure is a MemoryError (emulation) and the loader's device path allocates, passes
and frees the scratch (driver stand-in). tests/test_gpu.py runs the same kernel on a device."""
from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build, compile_ir

N = 256
# A matmul / map / transpose chain on 256x256 float64 tiles (512 KiB each: far past any shared budget).
CHAIN = '''
import warp as wp

N = 256


@wp.kernel
def chain(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(N, N), offset=(i * N, 0))
    b = wp.tile_load(B, shape=(N, N))
    c = wp.tile_matmul(a, b)
    d = wp.tile_map(wp.tanh, c) * wp.float64(0.5)
    wp.tile_store(C, wp.tile_transpose(d), offset=(i * N, 0))
'''
# The same in float32 (256 KiB tiles), for the device (tests/test_gpu.py).
CHAIN_FLOAT32 = CHAIN.replace("wp.float64(0.5)", "0.5").replace("wp.float64", "float")

# Tiles of three sizes the program keeps in shared memory, and a register tile's whole-tile sum
# (its reduction scratch always stays in shared memory).
MIXED = '''
import warp as wp


@wp.kernel(enable_backward=False)
def mixed(A: wp.array2d(dtype=float), S: wp.array1d(dtype=float)):
    small = wp.tile_load(A, shape=(64, 64), storage="shared")
    big = wp.tile_load(A, shape=(128, 128), storage="shared")
    mid = wp.tile_load(A, shape=(64, 128), storage="shared")
    r = wp.tile_load(A, shape=(32, 32))
    wp.tile_store(S, wp.tile_sum(r))
    wp.tile_store(A, big)
    wp.tile_store(A, mid)
    wp.tile_store(A, small)
'''


def chain_reference(A, B, C_shape, blocks):
    """numpy: each block's zero-padded tiles through the chain, stored transposed, cropped to C."""
    Ap = np.zeros((blocks * N, N))
    Ap[:A.shape[0], :A.shape[1]] = A
    Bp = np.zeros((N, N))
    Bp[:B.shape[0], :B.shape[1]] = B
    Cp = np.zeros((max(blocks * N, C_shape[0]), max(N, C_shape[1])))
    for i in range(blocks):
        d = np.tanh(Ap[i * N:(i + 1) * N] @ Bp) * 0.5
        Cp[i * N:(i + 1) * N, :N] = d.T
    return Cp[:C_shape[0], :C_shape[1]]


def layout_of(source: str, name: str, budget: int | None, direction: str = "forward"):
    from tilec.backend_cuda.shared_memory import kernel_shared_memory

    return kernel_shared_memory(compile_ir(source, name), limit=budget)[name][direction]


# ---------------------------------------------------------------- the layout

def test_the_largest_tiles_move_until_the_rest_fits_the_budget():
    unlimited = layout_of(MIXED, "mixed", None)
    sizes = {sym.name: sym.type.nbytes for sym, _ in unlimited.tiles}
    assert sizes == {"small": 16384, "big": 65536, "mid": 32768, "_tmp": 4}  # _tmp: the sum, one element
    partials = unlimited.total - unlimited.scratch_offset
    assert partials == 8 * 256 and unlimited.global_tiles == ()  # block_dim 256, 8 bytes per thread
    # 112 KiB of tiles + 2 KiB of partials: past a 64 KiB budget; moving `big` (the largest) suffices
    fitted = layout_of(MIXED, "mixed", 64 * 1024)
    assert [(s.name, off) for s, off in fitted.tiles] == [("small", 0), ("mid", 16384), ("_tmp", 49152)]
    assert [(s.name, off) for s, off in fitted.global_tiles] == [("big", 0)]
    assert fitted.scratch_offset == 49168 and fitted.total == 49168 + partials <= 64 * 1024
    assert fitted.global_total == 65536
    # a budget of 40 KiB moves `mid` too; the reduction scratch stays in shared memory
    tight = layout_of(MIXED, "mixed", 40 * 1024)
    assert [(s.name, off) for s, off in tight.tiles] == [("small", 0), ("_tmp", 16384)]
    assert [(s.name, off) for s, off in tight.global_tiles] == [("big", 0), ("mid", 65536)]
    assert tight.total == 16400 + partials and tight.global_total == 65536 + 32768
    # a budget everything fits changes nothing
    assert layout_of(MIXED, "mixed", 1 << 20) == unlimited


def test_equal_sizes_move_the_later_declared_first_and_offsets_never_overlap():
    layout = layout_of(CHAIN, "chain", 48 * 1024, "backward")
    assert layout.tiles == () and layout.total == 0  # no 512 KiB tile fits 48 KiB
    spans = sorted((off, off + sym.type.nbytes) for sym, off in layout.global_tiles)
    assert all(off % 16 == 0 for off, _ in spans)
    assert all(end <= nxt for (_, end), (nxt, _) in zip(spans, spans[1:]))
    assert layout.global_total == spans[-1][1] == 7 * 512 * 1024
    mm = textwrap.dedent('''
        import warp as wp


        @wp.kernel
        def mm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
            a = wp.tile_load(A, shape=(128, 128))
            b = wp.tile_load(B, shape=(128, 128))
            wp.tile_store(C, wp.tile_matmul(a, b))
    ''')
    half = layout_of(mm, "mm", 64 * 1024)
    assert [s.name for s, _ in half.tiles] == ["a"] and [s.name for s, _ in half.global_tiles] == ["b"]


def test_generated_code_manifest_and_header_follow_the_layout():
    from tilec.cli import build_flags
    from tilec.driver import generate

    module = compile_ir(MIXED, "mixed")
    files = generate(module, MIXED, build_flags(256, max_shared=64 * 1024))
    cu = files["mixed.cu"]
    assert "auto& v_small = *reinterpret_cast<tl::Tile<float, 64, 64>*>(ctx.smem + 0);" in cu
    assert "auto& v_mid = *reinterpret_cast<tl::Tile<float, 64, 128>*>(ctx.smem + 16384);" in cu
    assert "auto& v_big = *reinterpret_cast<tl::Tile<float, 128, 128>*>(ctx.gmem + 0);" in cu
    kernel = json.loads(files["manifest.json"])["kernels"]["mixed"]
    assert kernel["cuda_shared_bytes"] == {"forward": 49168 + 2048}
    assert kernel["cuda_scratch_bytes"] == {"forward": 65536}
    assert "#define MIXED_MIXED_CUDA_FORWARD_LAUNCH_SCRATCH_BYTES 65536" in files["mixed.h"]
    # with the default budget (sm_80's 163 KiB) everything stays in shared memory, as before
    roomy = generate(module, MIXED, build_flags(256))
    assert "ctx.gmem" not in roomy["mixed.cu"] and "SCRATCH_BYTES" not in roomy["mixed.h"]
    assert "cuda_scratch_bytes" not in json.loads(roomy["manifest.json"])["kernels"]["mixed"]


def test_the_architectures_set_the_budget_tiles_are_placed_by():
    from tilec.cli import build_flags
    from tilec.driver import generate

    module = compile_ir(MIXED, "mixed")
    sm75 = json.loads(generate(module, MIXED, build_flags(256, cuda_archs=("sm_75",)))["manifest.json"])
    assert sm75["flags"]["cuda_archs"] == ["sm_75"]  # 64 KiB a block
    assert sm75["kernels"]["mixed"]["cuda_scratch_bytes"] == {"forward": 65536}
    default = json.loads(generate(module, MIXED, build_flags(256, cuda_archs=("sm_80", "sm_90")))["manifest.json"])
    assert "cuda_archs" not in default["flags"] and "cuda_scratch_bytes" not in default["kernels"]["mixed"]


# ---------------------------------------------------------------- what is still refused

HUGE = '''import warp as wp


@wp.kernel(enable_backward=False)
def huge(A: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    b = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    c = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    wp.tile_store(A, a + b + c)
'''


def test_a_block_past_the_global_scratch_limit_is_refused_at_its_kernel(tmp_path):
    (tmp_path / "huge.py").write_text(HUGE)
    proc = subprocess.run([sys.executable, "-m", "tilec", "build", "huge.py", "-o", "out", "--target", "cuda",
                           "--emit-only"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(
        "huge.py:5:5: error[TC0109]: kernel `huge` (forward) needs 1.5 GiB of memory per block on the GPU for "
        "tiles that do not fit the 163 KiB a block may use on sm_80 (tried: the largest in global scratch, at most "
        "1 GiB per block): `a` (67108864,) float64 (512 MiB), `b` (67108864,) float64 (512 MiB), `c` (67108864,) "
        "float64 (512 MiB)\n"), proc.stderr
    assert not (tmp_path / "out" / "huge").exists()
    cpu = subprocess.run([sys.executable, "-m", "tilec", "build", "huge.py", "-o", "out", "--target", "cpu",
                          "--emit-only"], cwd=tmp_path, capture_output=True, text=True)
    assert cpu.returncode == 0 and "TC0109" not in cpu.stderr, cpu.stderr


# ---------------------------------------------------------------- running it (CUDA emulation)

def _random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape) * 0.1


@pytest.mark.cuda
@needs_cxx
@pytest.mark.parametrize("case", ["full", "partial"])
def test_big_tiles_run_on_the_emulation_forward_and_backward(case, monkeypatch):
    """Three blocks on two emulation workers: two slices, one reused (zeroed per block)."""
    monkeypatch.setenv("TILEC_NUM_THREADS", "2")
    mod = build(CHAIN, "chain", block_dim=64, target="cuda-emu")
    assert mod.chain.meta["cuda_shared_bytes"] == {"forward": 0, "backward": 0}
    assert mod.chain.meta["cuda_scratch_bytes"] == {"forward": 4 * 512 * 1024, "backward": 7 * 512 * 1024}
    if case == "full":
        A, B, C = _random((3 * N, N), 1), _random((N, N), 2), np.zeros((3 * N, N))
    else:  # the last block's rows, the columns of A and B and the stores are partial tiles
        A, B, C = _random((600, 200), 1), _random((200, 180), 2), np.zeros((700, 230))
    mod.chain.launch_tiled(dim=(3,), inputs=[A, B, C], device="cuda-emu")
    np.testing.assert_allclose(C, chain_reference(A, B, C.shape, 3), rtol=1e-12, atol=1e-12)
    check_gradients(OnEmulator(mod.chain), (3,), [A, B, C], outputs=[2], wrt=[0, 1], samples=6, rtol=1e-5,
                    atol=1e-8)


LAUNCH_UNDER_A_MEMORY_LIMIT = '''
import resource, sys
import numpy as np
import tilec

mod = tilec.load(sys.argv[1])
limit = 3 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
A = np.zeros(1, np.float32)
try:
    mod.big.launch_tiled(dim=(64,), inputs=[A], device="cuda-emu", num_threads=64)
except MemoryError as e:
    print("MemoryError:", e)
'''

BIG_BLOCKS = '''
import warp as wp


@wp.kernel(enable_backward=False)
def big(A: wp.array1d(dtype=float)):
    a = wp.tile_zeros(shape=(8192, 8192), dtype=float, storage="shared")
    wp.tile_store(A, wp.tile_sum(a))
'''


@pytest.mark.cuda
@needs_cxx
def test_scratch_the_host_cannot_allocate_is_a_memory_error(tmp_path):
    """64 workers x 256 MiB slices under a 3 GiB address-space limit: the launch returns status 2."""
    mod = build(BIG_BLOCKS, "big", block_dim=32, target="cuda-emu")
    assert mod.big.meta["cuda_scratch_bytes"] == {"forward": 256 << 20}
    from pathlib import Path

    folder = Path(mod.__file__).parent
    proc = subprocess.run([sys.executable, "-c", LAUNCH_UNDER_A_MEMORY_LIMIT, str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "MemoryError: big: out of memory in the native launch", proc.stdout


# ---------------------------------------------------------------- the loader's device path

def _driver_with_scratch(free_bytes, out_of_memory=False):
    from test_loader_cuda import FakeDriver

    class Driver(FakeDriver):
        """The stand-in, plus what the scratch needs: 4 multiprocessors of one resident block each."""

        class CUdevice_attribute(FakeDriver.CUdevice_attribute):
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16

        def cuDeviceGetAttribute(self, attribute, device):
            return (0, 4) if attribute == 16 else super().cuDeviceGetAttribute(attribute, device)

        def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, fn, block_dim, shared):
            return (0, 1)

        def cuMemGetInfo(self):
            return (0, free_bytes, 1 << 40)

        def cuMemAllocAsync(self, size, stream):
            self.allocations.append(size)
            return (2, None) if out_of_memory else self.cuMemAlloc(size)

        def cuMemFreeAsync(self, pointer, stream):
            return self.cuMemFree(pointer)

        def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            count = 5 if fn.endswith("_forward") else 8  # launch, 3 arrays (and 3 adjoints), the scratch
            pointers = (ctypes.c_void_p * count).from_address(params)
            scratch = ScratchDesc.from_buffer_copy(ctypes.string_at(pointers[-1], ctypes.sizeof(ScratchDesc)))
            self.launches.append({"fn": fn, "grid": (gx, gy, gz), "shared": shared, "scratch": scratch,
                                  "live": scratch.base in self.memory})
            return (0,)

    driver = Driver((0, 0))
    driver.allocations = []
    return driver


class ScratchDesc(ctypes.Structure):  # runtime global_scratch.h
    _fields_ = [("base", ctypes.c_void_p), ("block_bytes", ctypes.c_int64), ("slots", ctypes.c_int64),
                ("blocks", ctypes.c_int64)]


def _load_with(driver, tmp_path, monkeypatch):
    import shutil
    import types
    from pathlib import Path

    import tilec

    built = build(CHAIN, "chain", block_dim=64, target="cuda-emu")
    folder = tmp_path / "chain"
    shutil.copytree(Path(built.__file__).parent, folder)
    (folder / "chain.fatbin").write_bytes(b"fatbin bytes")
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    for name, module in (("cuda", cuda), ("cuda.bindings", bindings), ("cuda.bindings.driver", driver)):
        monkeypatch.setitem(sys.modules, name, module)
    return tilec.load(folder)


@pytest.mark.cuda
@needs_cxx
def test_the_loader_allocates_a_slice_per_resident_block_and_frees_it(tmp_path, monkeypatch):
    from test_loader_cuda import DeviceArray

    driver = _driver_with_scratch(free_bytes=1 << 34)
    mod = _load_with(driver, tmp_path, monkeypatch)
    A, B, C = (DeviceArray(np.zeros(shape)) for shape in ((10 * N, N), (N, N), (10 * N, N)))
    mod.chain.launch_tiled(dim=(10,), inputs=[A, B, C], device="cuda")
    adj = [DeviceArray(np.zeros((10 * N, N))), None, DeviceArray(np.ones((10 * N, N)))]
    mod.chain.launch_tiled(dim=(10,), inputs=[A, B, C], adj_inputs=adj, adjoint=True, device="cuda")
    forward, backward = driver.launches
    for launch, per_block in ((forward, 4 * 512 * 1024), (backward, 7 * 512 * 1024)):
        # 4 resident blocks (4 multiprocessors x 1) loop over the grid's 10
        assert launch["grid"] == (4, 1, 1) and launch["shared"] == 0 and launch["live"]
        desc = launch["scratch"]
        assert (desc.block_bytes, desc.slots, desc.blocks) == (per_block, 4, 10)
    assert driver.allocations == [4 * 4 * 512 * 1024, 4 * 7 * 512 * 1024]
    assert driver.memory == {}  # freed after each launch


@pytest.mark.cuda
@needs_cxx
def test_the_loader_fits_the_slices_to_free_memory_and_raises_memory_error(tmp_path, monkeypatch):
    from test_loader_cuda import DeviceArray

    A, B, C = (DeviceArray(np.zeros(shape)) for shape in ((10 * N, N), (N, N), (10 * N, N)))
    driver = _driver_with_scratch(free_bytes=5 << 20)  # half of it holds one 2 MiB slice
    mod = _load_with(driver, tmp_path, monkeypatch)
    mod.chain.launch_tiled(dim=(10,), inputs=[A, B, C], device="cuda")
    assert driver.launches[0]["grid"] == (1, 1, 1) and driver.launches[0]["scratch"].slots == 1
    full = _driver_with_scratch(free_bytes=1 << 34, out_of_memory=True)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", full)
    mod = _load_with(full, tmp_path / "again", monkeypatch)
    with pytest.raises(MemoryError, match=r"chain_cuda_forward: out of device memory for 4 x 2097152 bytes of "
                                          r"global scratch"):
        mod.chain.launch_tiled(dim=(10,), inputs=[A, B, C], device="cuda")
    assert full.launches == [] and full.memory == {}


def test_a_folder_built_for_other_architectures_is_checked_and_rebuilt_with_them(tmp_path):
    (tmp_path / "mixed.py").write_text(MIXED)

    def tilec(*args):
        return subprocess.run([sys.executable, "-m", "tilec", "build", "mixed.py", "-o", "out", "--target", "cuda",
                               "--emit-only", *args], cwd=tmp_path, capture_output=True, text=True)

    assert tilec("--arch", "sm_75").returncode == 0
    manifest = json.loads((tmp_path / "out" / "mixed" / "manifest.json").read_text())
    assert manifest["kernels"]["mixed"]["cuda_scratch_bytes"] == {"forward": 65536}
    assert tilec("--arch", "sm_75", "--check").returncode == 0
    stale = tilec("--check")  # the default architectures place every tile in shared memory
    assert stale.returncode == 1
    assert "tilec build mixed.py -o out --target cuda --arch sm_75 --emit-only" in stale.stdout + stale.stderr


# A data-dependent loop: the adjoint saves each iteration's tile on the device tape (device_tape.h),
# relaunching until the tape fits, with its tiles in global scratch.
TAPED = '''
import warp as wp


@wp.kernel
def loop(A: wp.array2d(dtype=wp.float64), K: wp.array1d(dtype=int), C: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(128, 128), offset=(i * 128, 0))
    k = 0
    while k < K[i]:
        a = wp.tile_map(wp.sin, a) * wp.float64(1.5)
        k += 1
    wp.tile_store(C, wp.tile_transpose(a), offset=(i * 128, 0))
'''


@pytest.mark.cuda
@needs_cxx
def test_an_adjoint_with_a_tape_and_global_scratch_matches_finite_differences(monkeypatch):
    monkeypatch.setenv("TILEC_NUM_THREADS", "2")
    mod = build(TAPED, "taped", block_dim=32, target="cuda-emu")
    assert mod.loop.meta["cuda_tape"] == ["backward"]
    assert mod.loop.meta["cuda_shared_bytes"] == {"forward": 0, "backward": 0}  # the harness's 48 KiB budget
    assert mod.loop.meta["cuda_scratch_bytes"] == {"forward": 2 * 131072, "backward": 3 * 131072}
    A, K, C = _random((3 * 128, 100), 3), np.array([2, 0, 3], np.int32), np.zeros((3 * 128, 128))
    mod.loop.launch_tiled(dim=(3,), inputs=[A, K, C], device="cuda-emu")
    expected = np.zeros_like(C)
    for i, k in enumerate(K):
        a = np.zeros((128, 128))
        a[:, :100] = A[i * 128:(i + 1) * 128]
        for _ in range(k):
            a = np.sin(a) * 1.5
        expected[i * 128:(i + 1) * 128] = a.T
    np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-12)
    check_gradients(OnEmulator(mod.loop), (3,), [A, K, C], outputs=[2], wrt=[0], samples=8, rtol=1e-5, atol=1e-8)
