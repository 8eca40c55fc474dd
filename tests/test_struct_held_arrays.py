"""Arrays of structs that hold arrays (issue #13): `wp.tile_load(ps[i].data, ...)` (which Warp 1.19
rejects: its tile_load takes no array read from an array of structs, so numpy and finite
differences are the reference), the loader's forms of such an argument (a structured array with
object fields, a list of struct values, numpy or Warp arrays in the fields), and its refusals of
bad input, each a Python exception naming the argument and the element."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

TILE = 8


@wp.struct
class Row:
    data: wp.array[float]
    scale: float


@wp.kernel
def sines(rows: wp.array[Row], out: wp.array2d[float]):
    i = wp.tid()
    t = wp.tile_load(rows[i].data, shape=TILE)
    wp.tile_store(out[i], wp.tile_map(wp.sin, t) * rows[i].scale)


@wp.kernel
def first(rows: wp.array[Row], out: wp.array[float]):
    i = wp.tid()
    out[i] = rows[i].data[0] * rows[i].scale
'''

DEVICES = ["cpu", "cuda-emu"]


@pytest.fixture(scope="module", params=DEVICES)
def device_mod(request):
    return request.param, build(SOURCE, "held_arrays", block_dim=8, target=request.param)


def _rows(mod, lengths=(8, 5, 8), seed=0):
    rng = np.random.default_rng(seed)
    rows = mod.Row.zeros(len(lengths))
    for i, n in enumerate(lengths):
        rows["data"][i] = rng.standard_normal(n).astype(np.float32)
    rows["scale"] = rng.random(len(lengths)).astype(np.float32) + 0.5
    return rows


def test_tile_load_through_an_element_forward_and_adjoint(device_mod):
    device, mod = device_mod
    rows = _rows(mod)  # row 1 holds 5 values: the tile's last 3 elements read as zeros
    out = np.zeros((3, 8), np.float32)
    mod.sines.launch_tiled(dim=3, inputs=[rows, out], block_dim=8, device=device)
    want = np.zeros((3, 8), np.float32)
    for i in range(3):
        d = rows["data"][i]
        want[i, :d.size] = np.sin(d) * rows["scale"][i]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)

    seed = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    adj = mod.Row.zeros(3)
    for i in range(3):
        adj["data"][i] = np.zeros_like(rows["data"][i])
    mod.sines.launch_tiled(dim=3, inputs=[rows, out], adj_inputs=[adj, seed.copy()], adjoint=True, block_dim=8,
                           device=device)
    for i in range(3):  # d/d data of sum(seed * sin(data) * scale), by float64 central differences
        d = rows["data"][i].astype(np.float64)
        scale, s = float(rows["scale"][i]), seed[i, :d.size].astype(np.float64)
        h = 1e-6
        fd = np.array([(np.sum(s * np.sin(d + h * e) * scale) - np.sum(s * np.sin(d - h * e) * scale)) / (2 * h)
                       for e in np.eye(d.size)])
        np.testing.assert_allclose(adj["data"][i], fd, rtol=1e-4, atol=1e-5)
        # the scalar field's gradient, into the adjoint structured array's field
        np.testing.assert_allclose(adj["scale"][i], np.sum(s * np.sin(d)), rtol=1e-4, atol=1e-5)


def test_an_adjoint_array_of_another_shape_is_refused():
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    rows, adj = _rows(mod), mod.Row.zeros(3)
    adj["data"][:] = [np.zeros(8, np.float32), np.zeros(4, np.float32), None]  # row 1 holds 5 values
    with pytest.raises(ValueError, match=r"adjoint of `rows.data`\[1\] has shape \(4,\) but the array it is the "
                                         r"adjoint of has shape \(5,\)"):
        mod.first.launch(dim=3, inputs=[rows, np.zeros(3, np.float32)], adj_inputs=[adj, np.ones(3, np.float32)],
                         adjoint=True)


def test_the_tape_refuses_rather_than_dropping_held_gradients():
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    with pytest.raises(ValueError, match="the tape does not record launches with an array of structs holding "
                                         "arrays \\(`rows.data`\\)"):
        with mod.Tape():
            mod.first.launch(dim=3, inputs=[_rows(mod), np.zeros(3, np.float32)])


def test_adjoint_without_adjoint_arrays_computes_nothing_else(device_mod):
    """An element whose adjoint struct holds no array (None) gets no gradient; the others do."""
    device, mod = device_mod
    rows = _rows(mod)
    adj = mod.Row.zeros(3)
    adj["data"][0] = np.zeros(8, np.float32)
    mod.first.launch(dim=3, inputs=[rows, np.zeros(3, np.float32)], adj_inputs=[adj, np.ones(3, np.float32)],
                     adjoint=True, device=device)
    np.testing.assert_allclose(adj["data"][0], np.eye(8)[0] * rows["scale"][0], rtol=1e-6)


def test_a_list_of_struct_values_with_numpy_and_warp_arrays():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    a = np.arange(1, 9, dtype=np.float32)
    b = wp.array(np.full(4, 3.0, np.float32), dtype=float, device="cpu")
    out = np.zeros(2, np.float32)
    mod.first.launch(dim=2, inputs=[[mod.Row(data=a, scale=2.0), mod.Row(data=b, scale=0.5)], out])
    np.testing.assert_allclose(out, [2.0, 1.5])

    fields = {"data": wp.array(dtype=float), "scale": float}  # not strings: this file's annotations are lazy
    warp_row = wp.struct(type("WRow", (), {"__annotations__": fields, "__module__": __name__}))()
    warp_row.data, warp_row.scale = b, 4.0  # Warp's own struct values are read by field name
    mod.first.launch(dim=1, inputs=[[warp_row], out])
    assert out[0] == 12.0


@pytest.mark.parametrize("field, error, words", [
    (np.zeros(8, np.float64), TypeError, "must have dtype float32, got float64"),
    (np.zeros((2, 4), np.float32), ValueError, "must have 1 dimension(s), got 2"),
    (None, ValueError, "is not set"),
])
def test_bad_held_array_names_the_argument_field_and_element(field, error, words):
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    rows = _rows(mod)
    rows["data"][1] = field
    with pytest.raises(error) as info:
        mod.first.launch(dim=3, inputs=[rows, np.zeros(3, np.float32)])
    assert "argument `rows.data`[1]" in str(info.value) and words in str(info.value)


def test_bad_array_of_structs_is_refused_before_the_launch():
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    with pytest.raises(TypeError, match="argument `rows` must have dtype Row.numpy_dtype()"):
        mod.first.launch(dim=3, inputs=[np.zeros(3, np.float32), np.zeros(3, np.float32)])
    with pytest.raises(TypeError, match="element 0 must be a `Row` struct"):
        mod.first.launch(dim=1, inputs=[[1.0], np.zeros(1, np.float32)])
    with pytest.raises(TypeError, match="field `Row.data` is an array of float32, got dtype int32"):
        mod.Row(data=np.zeros(3, np.int32))


ONLY_ARRAYS = '''
import warp as wp


@wp.struct
class Only:
    data: wp.array(dtype=float)


@wp.kernel
def copy_rows(inp: wp.array(dtype=Only), out: wp.array(dtype=Only)):
    wp.tile_store(out, wp.tile_load(inp, shape=4))
'''


def test_device_cuda_hands_the_driver_a_device_copy_of_the_descriptors(tmp_path, monkeypatch):
    """device='cuda' without a GPU (test_loader_cuda's recording driver): the held arrays are device
    arrays, their descriptors are packed as on the host (runtime tl::Array<T, N>) into a table copied
    to device memory for the launch, copied back where the kernel stores descriptors (the stand-in
    launch copies the input table into the output's, as the kernel would), and freed. (An array of
    structs with scalar fields passes those as numpy field views: host memory, device='cpu' or
    'cuda-emu' only, as before.)"""
    import ctypes
    import shutil
    import types
    from pathlib import Path

    import test_loader_cuda as fake
    import tilec

    class Driver(fake.FakeDriver):
        def cuMemcpyHtoD(self, device, host, count):
            ctypes.memmove(int(device), host, count)
            return (0,)

        def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            pointers = (ctypes.c_void_p * 3).from_address(params)  # the launch, inp.data, out.data
            inp, out = (fake.ArrayDesc.from_buffer_copy(ctypes.string_at(p, ctypes.sizeof(fake.ArrayDesc)))
                        for p in pointers[1:])
            assert int(inp.data) in self.memory and int(out.data) in self.memory  # device copies
            self.launches.append(np.frombuffer(ctypes.string_at(inp.data, 4 * 24), np.dtype(
                [("data", "<u8"), ("shape", "<i8", (1,)), ("strides", "<i8", (1,))])).copy())
            ctypes.memmove(int(out.data), int(inp.data), 4 * 24)  # what copy_rows does
            return (0,)

    built = build(ONLY_ARRAYS, "held_cuda", block_dim=32, target="cuda-emu")
    folder = tmp_path / "held_cuda"
    shutil.copytree(Path(built.__file__).parent, folder)
    (folder / "held_cuda.fatbin").write_bytes(b"fatbin bytes")
    driver = Driver((0, 0))
    bindings, cuda = types.ModuleType("cuda.bindings"), types.ModuleType("cuda")
    bindings.driver, cuda.bindings = driver, bindings
    for name, module in (("cuda", cuda), ("cuda.bindings", bindings), ("cuda.bindings.driver", driver)):
        monkeypatch.setitem(sys.modules, name, module)
    mod = tilec.load(folder)
    arrays = [fake.DeviceArray(np.arange(i + 1, dtype=np.float32)) for i in range(4)]
    inp, out = mod.Only.zeros(4), mod.Only.zeros(4)
    for i in range(4):
        inp["data"][i] = arrays[i]
    mod.copy_rows.launch_tiled(dim=1, inputs=[inp, out], block_dim=32, device="cuda")
    (table,) = driver.launches
    assert [int(x) for x in table["data"]] == [a.array.ctypes.data for a in arrays]
    assert [int(x) for x in table["shape"][:, 0]] == [1, 2, 3, 4] and set(table["strides"][:, 0]) == {4}
    assert all(out["data"][i] is arrays[i] for i in range(4))  # read back and mapped to the same objects
    assert driver.memory == {}  # both tables freed
    out["data"][2] = np.zeros(3, np.float32)  # refused after inp's table went to the device: freed too
    with pytest.raises(ValueError, match=r"argument `out.data`\[2\] is a host \(numpy\) array but this launch"):
        mod.copy_rows.launch_tiled(dim=1, inputs=[inp, out], block_dim=32, device="cuda")
    assert driver.memory == {}


INDEXED = '''
import warp as wp


@wp.struct
class Picks:
    data: wp.indexedarray(dtype=float)
    tag: int


@wp.kernel
def pick(p: Picks, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = p.data[i] * p.data[i] + float(p.tag) + float(p.data.shape[0])


@wp.kernel
def pick_each(ps: wp.array(dtype=Picks), out: wp.array(dtype=float)):
    i = wp.tid()
    v = ps[i]
    out[i] = wp.sin(v.data[0]) * v.data[1] + float(v.tag)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_array_field_of_a_struct_parameter(device):
    """Read through its index array, forward and adjoint; Warp 1.19 computes the same forward and a
    zero gradient for an indexed array in a struct (no adjoint through indexed arrays at all), so the
    gradient's reference is the closed form: out[i] = base[idx[i]]^2, d base[k] = sum of 2 base[k]
    over the i with idx[i] = k."""
    mod = build(INDEXED, "held_indexed", block_dim=8, target=device)
    base = np.linspace(-1.0, 1.0, 10).astype(np.float32)
    idx = np.array([3, 1, 4, 1], np.int32)
    p = mod.Picks(data=mod.IndexedArray(base, [idx]), tag=2)
    out = np.zeros(4, np.float32)
    mod.pick.launch(dim=4, inputs=[p, out], device=device)
    np.testing.assert_allclose(out, base[idx] ** 2 + 2 + 4, rtol=1e-6)
    adj = mod.Picks(data=np.zeros(10, np.float32))
    seed = np.array([1.0, 2.0, -1.0, 0.5], np.float32)
    mod.pick.launch(dim=4, inputs=[p, out], adj_inputs=[adj, seed.copy()], adjoint=True, device=device)
    want = np.zeros(10)
    np.add.at(want, idx, 2 * base[idx] * seed)
    np.testing.assert_allclose(adj.data, want, rtol=1e-6, atol=1e-7)


INDEXED_WRITES = '''
import warp as wp


@wp.struct
class Picks:
    data: wp.indexedarray(dtype=float)
    tag: int


@wp.kernel
def update(p: Picks, ps: wp.array(dtype=Picks), scale: wp.array(dtype=float)):
    i = wp.tid()
    p.data[i] = 2.0 * p.data[i] * scale[i]
    wp.atomic_add(p.data, i, 1.0)
    v = ps[0]
    v.data[i] += scale[i]
'''


@pytest.mark.parametrize("device", DEVICES)
def test_an_indexed_array_field_is_written_and_updated_through_its_indices(device):
    """`p.data[i] = ...`, `wp.atomic_add(p.data, i, v)` and `v.data[i] += ...` of a struct's indexed
    array field, of a parameter and of an array's element (Warp's test_indexedarray kernels), write
    the base at the gathered elements; tilec had refused every use but a read."""
    mod = build(INDEXED_WRITES, "held_indexed_writes", block_dim=8, target=device)
    base = np.linspace(-1.0, 1.0, 10).astype(np.float32)
    other = np.arange(8, dtype=np.float32)
    idx = np.array([7, 2, 5], np.int32)
    scale = np.array([0.5, 2.0, -1.0], np.float32)
    b, o = base.copy(), other.copy()
    p = mod.Picks(data=mod.IndexedArray(b, [idx]), tag=0)
    ps = mod.Picks.zeros(1)
    ps["data"][0] = (o, [idx[::-1].copy()])
    mod.update.launch(dim=3, inputs=[p, ps, scale], device=device)
    want_b, want_o = base.copy(), other.copy()
    want_b[idx] = 2 * base[idx] * scale + 1
    want_o[idx[::-1]] += scale
    np.testing.assert_allclose(b, want_b, rtol=1e-6)
    np.testing.assert_allclose(o, want_o, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_array_field_of_an_array_of_structs(device):
    """Each element holds its own indexed array ((base, indices) pairs here); the gradient goes to
    each element's base, checked by float64 central differences."""
    mod = build(INDEXED, "held_indexed", block_dim=8, target=device)
    rng = np.random.default_rng(3)
    bases = [rng.standard_normal(6).astype(np.float32) for _ in range(3)]
    picks = [np.array([5, 0], np.int32), np.array([2, 2], np.int32), np.array([1, 4], np.int32)]
    ps = mod.Picks.zeros(3)
    for e in range(3):
        ps["data"][e] = (bases[e], [picks[e]])
    ps["tag"] = [1, 2, 3]
    out = np.zeros(3, np.float32)
    mod.pick_each.launch(dim=3, inputs=[ps, out], device=device)
    want = [np.sin(b[k[0]]) * b[k[1]] + t for b, k, t in zip(bases, picks, (1, 2, 3))]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    adj = mod.Picks.zeros(3)
    for e in range(3):
        adj["data"][e] = np.zeros(6, np.float32)
    mod.pick_each.launch(dim=3, inputs=[ps, out], adj_inputs=[adj, np.ones(3, np.float32)], adjoint=True,
                         device=device)
    h = 1e-6
    for e in range(3):
        b, k = bases[e].astype(np.float64), picks[e]
        fd = [(np.sin((b + h * d)[k[0]]) * (b + h * d)[k[1]] - np.sin((b - h * d)[k[0]]) * (b - h * d)[k[1]]) / (2 * h)
              for d in np.eye(6)]
        np.testing.assert_allclose(adj["data"][e], fd, rtol=1e-4, atol=1e-5)


def test_bad_indexed_field_is_refused_naming_the_element():
    mod = build(INDEXED, "held_indexed", block_dim=8, target="cpu")
    ps = mod.Picks.zeros(2)
    ps["data"][0] = (np.zeros(4, np.float32), [np.array([0, 9], np.int32)])
    ps["data"][1] = (np.zeros(4, np.float32), [np.array([0], np.int32)])
    with pytest.raises(ValueError, match=r"argument `ps.data`\[0\]: index array 0 holds 0..9, outside"):
        mod.pick_each.launch(dim=2, inputs=[ps, np.zeros(2, np.float32)])
    ps["data"][0] = (np.zeros(4, np.float64), [np.array([0, 1], np.int32)])
    with pytest.raises(TypeError, match=r"argument `ps.data`\[0\] must have dtype float32, got float64"):
        mod.pick_each.launch(dim=2, inputs=[ps, np.zeros(2, np.float32)])
    with pytest.raises(ValueError, match=r"argument `p`: array field `data` is not set"):
        mod.pick.launch(dim=2, inputs=[mod.Picks(tag=1), np.zeros(2, np.float32)])


TILES = '''
import warp as wp

M = 8


@wp.struct
class Payload:
    data: wp.array(dtype=float)
    tag: wp.int32


@wp.struct
class Picks:
    data: wp.indexedarray(dtype=float)
    tag: int


@wp.kernel
def sort_payloads(inp: wp.array(dtype=Payload), keys: wp.array(dtype=int), out: wp.array(dtype=Payload)):
    k = wp.tile_load(keys, shape=M, storage="shared")
    v = wp.tile_load(inp, shape=M, storage="shared")
    wp.tile_sort(k, v)
    wp.tile_store(out, v)


@wp.kernel
def sort_picks(inp: wp.array(dtype=Picks), keys: wp.array(dtype=int), out: wp.array(dtype=Picks)):
    k = wp.tile_load(keys, shape=M, storage="shared")
    v = wp.tile_load(inp, shape=M, storage="shared")
    wp.tile_sort(k, v)
    wp.tile_store(out, v)


@wp.kernel
def zero_payloads(out: wp.array(dtype=Payload)):
    wp.tile_store(out, wp.tile_zeros(M, dtype=Payload))
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tiles_of_structs_holding_arrays_move_their_arrays(device):
    """A tile of structs holding arrays is loaded, sorted as tile_sort's values and stored (Warp's
    test_tile_struct array payloads): the output's elements hold the input's arrays themselves, in
    key order; tile_zeros of such structs stores elements that hold no array (None), as Warp's
    zero-initialised array_t."""
    mod = build(TILES, "held_tiles", block_dim=32, target=device)
    arrays = [np.array([100.0 + i], np.float32) for i in range(8)]
    inp = mod.Payload.zeros(8)
    for i in range(8):
        inp["data"][i], inp["tag"][i] = arrays[i], i
    keys = np.array([3, 7, 0, 5, 1, 6, 2, 4], np.int32)
    out = mod.Payload.zeros(8)
    mod.sort_payloads.launch_tiled(dim=1, inputs=[inp, keys, out], block_dim=32, device=device)
    order = np.argsort(keys, kind="stable")
    assert all(out["data"][k] is arrays[order[k]] for k in range(8))
    np.testing.assert_array_equal(out["tag"], order)

    bases = [np.arange(4, dtype=np.float32) * (i + 1) for i in range(8)]
    picks = mod.Picks.zeros(8)
    for i in range(8):
        picks["data"][i], picks["tag"][i] = (bases[i], [np.array([i % 4], np.int32)]), i
    sorted_picks = mod.Picks.zeros(8)
    mod.sort_picks.launch_tiled(dim=1, inputs=[picks, keys, sorted_picks], block_dim=32, device=device)
    for k in range(8):  # an indexed array comes back as (base, [index arrays])
        base, indices = sorted_picks["data"][k]
        assert base is bases[order[k]] and indices[0][0] == order[k] % 4

    out["data"][:] = [np.ones(2, np.float32) for _ in range(8)]
    mod.zero_payloads.launch_tiled(dim=1, inputs=[out], block_dim=32, device=device)
    assert all(x is None for x in out["data"])


def test_warp_arrays_of_structs_holding_arrays(tmp_path, monkeypatch):
    """A Warp `wp.array(dtype=S)` of structs holding arrays is passed as it is (Warp's own array_t
    records, read and, where the kernel stores descriptors, written back), so Warp reads what tilec
    sorted; its struct type is checked against the kernel's (the records alone cannot tell)."""
    from harness import import_under_warp

    wp, prog = import_under_warp(TILES, "held_tiles_warp", tmp_path, monkeypatch)
    mod = build(TILES, "held_tiles", block_dim=32, target="cpu")
    arrays = [wp.array(np.array([100.0 + i], np.float32), dtype=float, device="cpu") for i in range(8)]
    items = []
    for i in range(8):
        s = prog.Payload()
        s.data, s.tag = arrays[i], i
        items.append(s)
    inp = wp.array(items, dtype=prog.Payload, device="cpu")
    keys = np.arange(7, -1, -1, dtype=np.int32)
    out = wp.empty(8, dtype=prog.Payload, device="cpu")  # uninitialised records: stored before read
    garbage = out.numpy()  # what wp.empty may hold: a record that reads as a 1-d array at a misaligned address
    garbage["data"]["data"][7], garbage["data"]["ndim"][7] = 0x1003, 1
    assert out.numpy()["data"]["data"][7] == 0x1003  # (the view is the array's memory)
    mod.sort_payloads.launch_tiled(dim=1, inputs=[inp, keys, out], block_dim=32)
    records = out.numpy()
    assert [int(r) for r in records["data"]["data"]] == [arrays[7 - k].ptr for k in range(8)]
    np.testing.assert_array_equal(records["tag"], np.arange(7, -1, -1))

    mod.zero_payloads.launch_tiled(dim=1, inputs=[out], block_dim=32)
    assert not out.numpy()["data"]["data"].any() and not out.numpy()["data"]["ndim"].any()
    with pytest.raises(ValueError, match=r"argument `inp.data`\[0\] holds no array"):
        mod.sort_payloads.launch_tiled(dim=1, inputs=[out, keys, inp], block_dim=32)

    fields = {"data": wp.array(dtype=wp.float64), "tag": wp.int32}  # not strings: this file's annotations are lazy
    Wide = wp.struct(type("Wide", (), {"__annotations__": fields, "__module__": __name__}))
    with pytest.raises(TypeError, match="field `data` of the Warp struct is 1-d float64, the kernel's "
                                        "`Payload.data` is 1-d float32"):
        mod.sort_payloads.launch_tiled(dim=1, inputs=[wp.zeros(8, dtype=Wide, device="cpu"), keys, inp], block_dim=32)


def test_scalar_field_gradient_through_a_copied_element():
    """`s = sigs[i]; ... * s.gain`: the gain's gradient reaches the adjoint array's field (Warp 1.19
    leaves it zero; the conformance case held_energy therefore compares only the held arrays'
    gradients with Warp's). Closed form: d out[i] / d gain[i] = sum(data_i^2)."""
    from pathlib import Path

    path = Path(__file__).parent / "conformance" / "programs" / "structs_held.py"
    mod = build(path.read_text(), "structs_held", block_dim=64, target="cpu")
    rng = np.random.default_rng(0)
    sigs, adj = mod.Signal.zeros(3), mod.Signal.zeros(3)
    for i in range(3):
        sigs["data"][i], adj["data"][i] = rng.standard_normal(6).astype(np.float32), np.zeros(6, np.float32)
    sigs["gain"], sigs["tag"] = [0.5, 1.5, 2.5], [0, 1, 2]
    mod.energy.launch(dim=3, inputs=[sigs, np.zeros(3, np.float32)], adj_inputs=[adj, np.ones(3, np.float32)],
                      adjoint=True)
    want = [float(np.sum(d.astype(np.float64) ** 2)) for d in sigs["data"]]
    np.testing.assert_allclose(adj["gain"], want, rtol=1e-5)
    for i in range(3):
        np.testing.assert_allclose(adj["data"][i], 2 * sigs["data"][i] * sigs["gain"][i], rtol=1e-5)
