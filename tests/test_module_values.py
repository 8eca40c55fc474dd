"""Module-level values that Python computes when Warp imports the file (frontend/resolve.py): calls
of Python's builtins on constants, tuple assignments, vector constants of divisions and typed
scalars. tilec never runs the file, so it must compute what Python computes; the expected values
below are Python's own, written out.

Found in Warp's examples (warp/examples/tile): example_tile_mlp's `BATCH_SIZE = min(1024, int(...))`,
example_tile_cholesky's `np_type, wp_type = np.float64, wp.float64`, example_tile_convolution's
`scale = wp.vec2d(wp.float64(1 / TILE_N), ...)` (whose `1 / TILE_N` a kernel read as 0 before)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, first_error

SOURCE = '''
import numpy as np
import warp as wp

W, H = 512, 100
BATCH = min(1024, int((W * H) / 8))
BIG = max(3, W // 64, 5)
MIXED = abs(-0.5) + float(2) + round(2.6) + bool(3) + round(2.675, 2)
np_type, wp_type = np.float64, wp.float64
G = wp.vec3(1 / 2, W / 1024, -(1 // 3))
S = wp.vec2d(wp.float64(1 / 3), wp.float32(1 / 3))
M = wp.constant(wp.mat22(1 / 4, 0.0, -(2 ** -3), wp.float16(1 / 3)))
HENCKY = wp.constant(True)
LOW = wp.constant(1.0e-6 if HENCKY else 1.0e-2)  # Newton's implicit MPM solver
PICK = 7 if W < 100 else (8 if not HENCKY else 9)


@wp.kernel
def values(ints: wp.array(dtype=int), floats: wp.array(dtype=wp_type), g: wp.array(dtype=float),
           s: wp.array(dtype=wp_type), m: wp.array(dtype=float)):
    i = wp.tid()
    ints[0] = BATCH
    ints[1] = BIG
    ints[2] = W * H
    ints[3] = PICK
    floats[1] = wp_type(LOW)
    floats[0] = wp_type(MIXED)
    if i < 3:
        g[i] = G[i]
    if i < 2:
        s[i] = S[i]
    if i < 4:
        m[i] = M[i // 2, i % 2]
'''


@pytest.mark.build
@needs_cxx
def test_module_values_are_the_ones_python_computes():
    mod = build(SOURCE, "module_values")
    ints, floats = np.zeros(4, np.int32), np.zeros(2, np.float64)
    g, s, m = np.zeros(3, np.float32), np.zeros(2, np.float64), np.zeros(4, np.float32)
    mod.values.launch(dim=4, inputs=[ints, floats, g, s, m])
    assert list(ints) == [min(1024, int((512 * 100) / 8)), max(3, 512 // 64, 5), 512 * 100, 9]  # 1024, 8, 51200
    assert floats[0] == abs(-0.5) + float(2) + round(2.6) + bool(3) + round(2.675, 2)
    assert floats[1] == 1.0e-6  # `x if c else y` of constants: the arm Python takes
    assert list(g) == [0.5, 0.5, 0.0]  # the kernel read 1 / 2 and W / 1024 as integer divisions (0) before
    assert s[0] == 1 / 3 and s[1] == float(np.float32(1 / 3))  # each typed scalar rounded to its own dtype
    assert list(m) == [0.25, 0.0, -0.125, float(np.float16(1 / 3))]


def test_a_builtin_the_module_rebinds_is_not_folded():
    source = '''import warp as wp


def min(a, b):
    return a


N = min(4, 8)


@wp.kernel
def k(a: wp.array(dtype=int)):
    a[0] = N
'''
    assert first_error(source) == ("13:12: TC0433: `N` is bound at line 8 to `min(4, 8)`, a value tilec cannot "
                                   "compute when it compiles (it evaluates literals, module constants and "
                                   "arithmetic on them)")  # a host function's result, the binding named


def test_names_unpacked_from_a_host_value_are_host_values():
    source = '''import warp as wp

N = 4
N, R = divmod(9, 2)


@wp.kernel
def k(a: wp.array(dtype=int)):
    a[0] = N
'''
    assert first_error(source) == "9:12: TC0301: unknown name `N`"  # it was the stale 4 before


def test_pairs_of_a_tuple_assignment_bind_one_by_one():
    source = '''import warp as wp

TILE, DT = 8, wp.float64
FIRST, (SECOND, THIRD) = 1, (2, 3.5)


@wp.kernel
def k(a: wp.array(dtype=DT)):
    t = wp.tile_full(shape=TILE, value=DT(FIRST + SECOND + THIRD), dtype=DT)
    wp.tile_store(a, t)
'''
    from harness import compile_ir
    from tilec.ir.types import FLOAT64

    kernel = compile_ir(source, "pairs").kernels[0]
    assert kernel.params[0].type.dtype == FLOAT64
    assert "6.5" in repr(kernel.body)


DICT_ITEMS = '''
import warp as wp

_BINS = {"hexahedron": 6, "icosahedron": 20, 3: 2.5}
POLYHEDRON = "icosahedron"
NUM_BINS = _BINS[POLYHEDRON]  # Newton's contact_reduction.py
SLOTS = NUM_BINS * 7 + _BINS[3]
_NORMALS = {"hexahedron": (1.0, 0.0, 0.0, -1.0, 0.5, 0.25), "icosahedron": (0.5, 0.5, 0.0, 0.0, -0.5, 2.0)}
mat23 = wp.types.matrix(shape=(2, 3), dtype=wp.float32)
FACES = mat23(*_NORMALS[POLYHEDRON])  # a matrix of a constant tuple spread (Newton's FACE_NORMALS)


@wp.kernel
def k(a: wp.array(dtype=float)):
    a[0] = float(wp.static(NUM_BINS))
    a[1] = SLOTS
    a[2] = float(wp.static(_BINS["hexahedron"]))
    a[3] = FACES[1, 2] + FACES[0, 1]
'''


@pytest.mark.build
@needs_cxx
def test_an_item_of_a_dict_literal_is_a_module_constant():
    a = np.zeros(4, np.float32)
    build(DICT_ITEMS, "dict_items").k.launch(dim=1, inputs=[a])
    assert list(a) == [20.0, 20 * 7 + 2.5, 6.0, 2.0 + 0.5]


def test_an_item_of_a_dict_the_file_changes_is_no_constant():
    source = DICT_ITEMS.replace('POLYHEDRON = "icosahedron"\n', 'POLYHEDRON = "icosahedron"\n_BINS["icosahedron"] = 12\n')
    assert first_error(source) == ("16:28: TC0305: static: tilec evaluates only expressions of literals and "
                                   "constants (names, arithmetic, comparisons, tuples, wp.constant, a dict "
                                   "literal's item, an enum member's property, a plain function's result) and len() "
                                   "of a tile, vector, matrix or constant tuple; this one is not")


MEMBERSHIP = '''
import warp as wp

OPTIONS = {
    # "verbose",
}
FLAGS = {"fast", "clamp"}
MODES = {"a": 1, "b": 2}


@wp.kernel
def k(a: wp.array(dtype=float)):
    if wp.static("verbose" in OPTIONS):  # Newton's VBD_DEBUG_PRINTING_OPTIONS: an empty dict
        a[0] = 1.0
    if wp.static("clamp" in FLAGS):
        a[1] = 2.0
    if wp.static("b" not in MODES):
        a[2] = 3.0
    if wp.static("fast" not in FLAGS or "a" in MODES):
        a[3] = 4.0
'''


@pytest.mark.build
@needs_cxx
def test_a_key_tested_in_a_dict_or_set_literal_is_a_constant():
    a = np.zeros(4, np.float32)
    build(MEMBERSHIP, "membership").k.launch(dim=1, inputs=[a])
    assert list(a) == [0.0, 2.0, 0.0, 4.0]
    changed = MEMBERSHIP.replace('MODES = {"a": 1, "b": 2}\n', 'MODES = {"a": 1, "b": 2}\nMODES.pop("a")\n')
    assert first_error(changed).startswith("18:18: TC0305: static: tilec evaluates only")  # a dict the file changes


def test_an_enum_property_that_raises_is_no_constant():
    source = '''import enum

import warp as wp


class Kind(enum.IntEnum):
    A = 0
    B = 1

    @property
    def size(self) -> int:
        if self.value == self.A:
            return 3
        raise ValueError("no size")


@wp.kernel
def k(a: wp.array(dtype=int)):
    a[0] = wp.static(Kind.A.size)
    a[1] = wp.static(Kind.B.size)
'''
    assert first_error(source).startswith("20:22: TC0305: static: tilec evaluates only")  # B's raise; A's 3 is read
    from harness import compile_ir

    body = repr(compile_ir(source.replace("    a[1] = wp.static(Kind.B.size)\n", ""), "sizes").kernels[0].body)
    assert "Const(value=3, type=Scalar(name='int32'" in body


def test_a_plain_function_is_followed_within_bounds():
    # fib(10) is read (177 calls); fib(40) would take 300 million: past host_eval.MAX_CALLS it is no constant,
    # reported at once instead of tilec running for hours
    source = '''import warp as wp


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@wp.kernel
def k(a: wp.array(dtype=int)):
    a[0] = wp.static(fib(10))
    a[1] = wp.static(fib(40))
'''
    assert first_error(source).startswith("13:22: TC0305: static: tilec evaluates only")
    from harness import compile_ir

    body = repr(compile_ir(source.replace("    a[1] = wp.static(fib(40))\n", ""), "fib").kernels[0].body)
    assert "Const(value=55, type=Scalar(name='int32'" in body


def test_lists_built_in_host_code_are_sequences_within_bounds():
    """`[b] * 2 + [c]` in a method's return is the sequence Python's list holds (tuples alike); a list plus a
    tuple is Python's TypeError; a sequence past consts.MAX_SEQUENCE items is not made (a host value); a
    starred item is not followed; a known value `is not None`."""
    import libcst as cst

    from tilec.frontend import consts

    def value(text: str) -> object:
        return consts.evaluate(cst.parse_expression(text), lambda node: consts.NOT_CONST)

    assert value("[1.5] * 2 + [3]") == (1.5, 1.5, 3)
    assert value("2 * (1, 2) + ()") == (1, 2, 1, 2)
    assert isinstance(value("[1] * 2"), consts.ListValue) and not isinstance(value("(1,) * 2"), consts.ListValue)
    with pytest.raises(consts.FoldTypeError):
        value("[1, 2] + (3,)")
    assert value("[1] - [1]") is consts.NOT_CONST
    assert value("[*(1, 2)]") is consts.NOT_CONST
    assert value("3 is not None") is True and value("3 is None") is False
    assert value("[0.0] * 5000") is consts.NOT_CONST  # (made only by running the file: a host value)
    assert value("(1, 2) * 3000") is consts.NOT_CONST and value("(1, 2) * 2000 + (3,) * 97") is consts.NOT_CONST
    assert len(value("(1, 2) * 2048")) == 4096
    # the literal a constant is spelled as in a made call (a host function's argument, a vector constant)
    code = cst.Module([]).code_for_node
    assert [code(consts.spelled(v)) for v in (-0.0, -3, 2.5, True, "a")] == ["-0.0", "-3", "2.5", "True", "'a'"]
    assert consts.number_literal("a") is None and consts.spelled(float("inf")) is None
