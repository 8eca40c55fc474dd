"""Generic kernels and funcs (issue #13 item 5): `Any` dtypes, one kernel instance per
`wp.overload` / `@wp.overload` stub, the loader picking the instance by argument dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build, compile_ir

PROGRAM = '''\
import typing
from typing import Any

import warp as wp


@wp.func
def twice(x: Any):
    return x + x


@wp.kernel
def scale(a: wp.array(dtype=Any), b: wp.array(dtype=Any), s: Any):
    i = wp.tid()
    t = wp.tile_load(a, shape=4, offset=i * 4)
    wp.tile_store(b, wp.tile_map(twice, t) * s, offset=i * 4)


wp.overload(scale, [wp.array(dtype=float), wp.array(dtype=float), float])
wp.overload(scale, {"a": wp.array(dtype=wp.float64), "b": wp.array(dtype=wp.float64), "s": wp.float64})


@wp.kernel
def first_col(a: wp.array2d(dtype=typing.Any), out: wp.array(dtype=typing.Any)):
    i = wp.tid()
    out[i] = twice(a[i, 0])


@wp.overload
def first_col(a: wp.array2d(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    ...


@wp.overload
def first_col(a: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    ...
'''


def test_one_instance_per_overload():
    module = compile_ir(PROGRAM, "generic")
    got = sorted((k.name, k.launch_name, tuple(str(p.type) for p in k.params)) for k in module.kernels)
    assert got == [
        ("first_col__float64_float64", "first_col", ("array2d(float64)", "array1d(float64)")),
        ("first_col__int32_int32", "first_col", ("array2d(int32)", "array1d(int32)")),
        ("scale__float32_float32_float32", "scale", ("array1d(float32)", "array1d(float32)", "float32")),
        ("scale__float64_float64_float64", "scale", ("array1d(float64)", "array1d(float64)", "float64")),
    ]
    # the generic func is specialised once per dtype it is called with
    assert sorted(str(f.params[0].type) for f in module.funcs if f.source_name == "twice") == [
        "float32", "float64", "int32"]


CONDITIONAL = '''\
from typing import Any

import warp as wp

USE_F64 = False
N = 16


@wp.kernel
def scale(x: wp.array[Any], y: wp.array[Any]):
    t = wp.tile_load(x, shape=N)
    wp.tile_store(y, t + t)


if USE_F64:
    wp.overload(scale, [wp.array[wp.float64], wp.array[wp.float64]])
elif N > 8 and not USE_F64:
    wp.overload(scale, [wp.array[wp.float32], wp.array[wp.float32]])
else:
    wp.overload(scale, [wp.array[wp.float16], wp.array[wp.float16]])

if wp.static(N != 16):
    wp.overload(scale, {"x": wp.array[wp.int32], "y": wp.array[wp.int32]})

if __name__ == "__main__":
    wp.overload(scale, [wp.array[wp.int64], wp.array[wp.int64]])

for T in (wp.float32, wp.float64, wp.int8):
    if T == wp.int8 or T is wp.float32:
        pass
    else:
        wp.overload(scale, [wp.array[T], wp.array[T]])

if N in (8, 32):
    @wp.overload
    def scale(x: wp.array[wp.int16], y: wp.array[wp.int16]): ...
'''


def test_an_overload_under_if_is_declared_only_when_its_branch_is_taken():
    """Warp declares the overloads of the branch the file runs: module constants, wp.static,
    comparisons, `and`/`or`/`not`, loop values and `__name__ == "__main__"` (the file run as the
    program) are evaluated; float16, int32 and int16 are on branches not taken."""
    module = compile_ir(CONDITIONAL, "conditional")
    assert sorted(k.name for k in module.kernels) == [
        "scale__float32_float32", "scale__float64_float64", "scale__int64_int64"]


@needs_cxx
@pytest.mark.build
def test_the_loader_dispatches_on_argument_dtypes():
    mod = build(PROGRAM, "generic", block_dim=32)
    for dtype in (np.float32, np.float64):
        a = np.linspace(-1, 1, 8).astype(dtype)
        b = np.zeros_like(a)
        mod.scale.launch_tiled(dim=2, inputs=[a, b, 1.5])
        np.testing.assert_allclose(b, 3 * a.astype(np.float64), rtol=1e-6)
        adj_a = np.zeros_like(a)
        mod.scale.launch_tiled(dim=2, inputs=[a, b, 1.5], adj_inputs=[adj_a, np.ones_like(b), 0], adjoint=True)
        np.testing.assert_allclose(adj_a, np.full(8, 3.0), rtol=1e-6)
    ints = np.arange(12, dtype=np.int32).reshape(6, 2)
    out = np.zeros(6, np.int32)
    mod.first_col.launch(dim=6, inputs=[ints, out])
    assert list(out) == [2 * v for v in ints[:, 0]]
    with pytest.raises(TypeError, match=r"scale: no instance takes these argument dtypes; compiled for "
                                         r"\(a: float32, b: float32, s: float32\)"):
        mod.scale.launch_tiled(dim=2, inputs=[np.zeros(8, np.int32), np.zeros(8, np.int32), 1.0])


VALUE_PROGRAM = '''\
from typing import Any

import warp as wp


@wp.kernel
def spread(x: wp.array[Any], y: wp.array[Any]):
    t = wp.tile(x[0], preserve_type=True)
    wp.tile_store(y, t)


wp.overload(spread, {"x": wp.array[wp.vec3], "y": wp.array[wp.vec3]})
wp.overload(spread, {"x": wp.array[wp.quat], "y": wp.array[wp.quat]})
wp.overload(spread, {"x": wp.array[wp.mat33], "y": wp.array[wp.mat33]})
'''


def test_overloads_on_value_types_are_named_by_them():
    """An overload whose generic parameters are vectors, quaternions or matrices (found by Warp's
    own tile tests: an internal error before) is an instance named after them."""
    module = compile_ir(VALUE_PROGRAM, "spread", block_dim=8)
    assert sorted(k.name for k in module.kernels) == ["spread__mat33f_mat33f", "spread__quatf_quatf",
                                                      "spread__vec3f_vec3f"]


@needs_cxx
@pytest.mark.build
def test_value_type_overloads_run():
    mod = build(VALUE_PROGRAM, "spread", block_dim=8)
    for shape in ((3,), (4,), (3, 3)):
        x = np.arange(2 * int(np.prod(shape)), dtype=np.float32).reshape((2,) + shape) + 1
        y = np.zeros((8,) + shape, np.float32)
        mod.spread.launch_tiled(dim=1, inputs=[x, y], block_dim=8)
        np.testing.assert_array_equal(y, np.broadcast_to(x[0], y.shape))


DTYPE_OF_ARRAY = '''\
from typing import Any

import warp as wp


@wp.kernel
def gemm(A: wp.array2d[Any], B: wp.array2d[Any], C: wp.array2d[Any]):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(4, 4), dtype=A.dtype)
    a = wp.tile_load(A, shape=(4, 8), offset=(i * 4, 0))
    b = wp.tile_load(B, shape=(8, 4), offset=(0, j * 4))
    wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * 4, j * 4))


wp.overload(gemm, {"A": wp.array2d[wp.float32], "B": wp.array2d[wp.float32], "C": wp.array2d[wp.float32]})
wp.overload(gemm, {"A": wp.array2d[wp.float64], "B": wp.array2d[wp.float64], "C": wp.array2d[wp.float64]})
'''


@needs_cxx
@pytest.mark.build
def test_dtype_of_an_array_parameter_names_the_tile_dtype():
    """`dtype=A.dtype` (Warp's generic GEMM in its tile tests) is the instance's element type."""
    mod = build(DTYPE_OF_ARRAY, "dtype_of", block_dim=16)
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a, b = rng.standard_normal((8, 8)).astype(dtype), rng.standard_normal((8, 8)).astype(dtype)
        c = np.zeros((8, 8), dtype)
        mod.gemm.launch_tiled(dim=(2, 2), inputs=[a, b, c], block_dim=16)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


THREE_DEFS = '''\
import warp as wp


@wp.func
def f(x: float, y: float):
    return x + y


@wp.func
def f(x: wp.vec3, y: float):
    return x * y


@wp.func
def f(x: int):
    return x * 2


@wp.kernel
def calls(a: wp.array[float], n: wp.array[int], v: wp.array[wp.vec3]):
    i = wp.tid()
    a[i] = f(a[i], 0.5)
    n[i] = f(n[i])
    v[i] = f(v[i], 3.0)
'''


@needs_cxx
@pytest.mark.build
def test_a_func_defined_three_times_takes_each_definition_by_argument_types():
    """Every redefinition of a @wp.func is an overload (the third one hid the first two's calls:
    `f(a[i], 0.5)` was checked against `f(x: int)`)."""
    mod = build(THREE_DEFS, "three_defs", target="cpu")
    a = np.array([1.0, -2.0], np.float32)
    n = np.array([3, 4], np.int32)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    mod.calls.launch(dim=2, inputs=[a, n, v], device="cpu")
    np.testing.assert_array_equal(a, [1.5, -1.5])
    np.testing.assert_array_equal(n, [6, 8])
    np.testing.assert_array_equal(v, np.arange(6).reshape(2, 3) * 3.0)


LIBRARY = '''\
from typing import Any

import warp as wp


@wp.kernel
def scale_values(values: wp.array[Any], factor: wp.array[float]):
    i = wp.tid()
    values[i] = values[i] * factor[i]


@wp.kernel
def double(a: wp.array[float]):
    i = wp.tid()
    a[i] = a[i] * 2.0
'''


def test_a_generic_kernel_launched_only_from_other_files_is_left_out_and_says_so(tmp_path):
    """A file of kernels whose generic one is launched elsewhere (warp.fem's examples, Newton) builds
    as a C++ file with an uninstantiated template does: its other kernels work, the generic one is a
    warning (TC0436) at its line, `check -v` lists it as not compiled, and the loader's launch of it
    raises naming the line and what to declare."""
    from click.testing import CliRunner
    from tilec.cli import main

    src = tmp_path / "lib.py"
    src.write_text(LIBRARY)
    result = CliRunner().invoke(main, ["check", "-v", str(src)])
    assert result.exit_code == 0, result.output
    assert f"{src}:7:5: warning[TC0436]: generic kernel `scale_values` has no overload in this file: parameter " \
        "`values` is `Any`; it is not compiled" in result.stderr
    assert f"{src}:7: not compiled: kernel scale_values: generic kernel" in result.stdout
    assert "1 kernel compiled, 1 not compiled" in result.stdout
    mod = build(LIBRARY, "genlib", block_dim=32)
    a = np.arange(4, dtype=np.float32)
    mod.double.launch(dim=4, inputs=[a])
    assert list(a) == [0.0, 2.0, 4.0, 6.0]
    assert "scale_values" in mod.__all__ and repr(mod.scale_values) == "<tilec kernel scale_values: not compiled>"
    with pytest.raises(TypeError, match=r"scale_values was not compiled: genlib.py:7: generic kernel `scale_values` "
                                        r"has no overload in this file.*declare its types with "
                                        r"wp.overload\(scale_values, \[...\]\) in the source file and rebuild"):
        mod.scale_values.launch(dim=4, inputs=[a, a])
