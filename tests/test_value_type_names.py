"""Warp's vector and matrix type names, as annotations and module-level declarations read them:
every named type Warp 1.19 exports resolves, with its component dtype and size, and a declared
`wp.vec(length=n, dtype=T)` / `wp.types.matrix(shape=(m, n), dtype=T)` is a type alias."""
from __future__ import annotations

import libcst as cst
import pytest

from tilec.diagnostics import Diagnostics
from tilec.frontend import annotations as ann
from tilec.frontend.parse import parse
from tilec.frontend.resolve import resolve
from tilec.ir.types import FLOAT16, FLOAT32, FLOAT64, INT8, UINT8, UINT64, VALUE_TYPE_NAMES, ArrayT, MatT, VecT

SOURCE = """\
import warp as wp
vec5 = wp.vec(length=5, dtype=float)
vec2d_alias = wp.types.vector(2, wp.float64)
M23 = wp.types.matrix(shape=(2, 3), dtype=wp.float64)
Arr = wp.array2d[wp.mat33h]
"""


def scope_of(source: str):
    diags = Diagnostics()
    return resolve(parse(source, "m.py", diags), diags)


@pytest.mark.parametrize("name, expected, printed", [
    ("vec3", VecT(FLOAT32, 3), "vec3f"), ("vec4ub", VecT(UINT8, 4), "vec4ub"),
    ("vec2b", VecT(INT8, 2), "vec2b"), ("vec3ul", VecT(UINT64, 3), "vec3ul"),
    ("mat22d", MatT(FLOAT64, 2, 2), "mat22d"), ("mat44", MatT(FLOAT32, 4, 4), "mat44f"),
    ("quath", VecT(FLOAT16, 4, "quat"), "quath"), ("transform", VecT(FLOAT32, 7, "transform"), "transformf"),
    ("spatial_vectord", VecT(FLOAT64, 6, "spatial_vector"), "spatial_vectord"),
    ("spatial_matrix", MatT(FLOAT32, 6, 6, "spatial_matrix"), "spatial_matrixf"),
])
def test_named_types(name, expected, printed):
    scope = scope_of("import warp as wp\n")
    t = ann.element_type(cst.parse_expression(f"wp.{name}"), scope)
    assert t == expected
    assert str(t) == printed


def test_every_warp_value_type_name_is_known():
    wp = pytest.importorskip("warp")
    exported = {n for n in dir(wp) if n.startswith(("vec", "mat", "quat", "transform", "spatial_"))
                and isinstance(getattr(wp, n), type)}
    assert exported == set(VALUE_TYPE_NAMES)
    for name in exported:
        cls, t = getattr(wp, name), VALUE_TYPE_NAMES[name]
        assert cls.__name__ == str(t)
        assert cls._length_ == t.length


def test_declared_types_are_aliases():
    scope = scope_of(SOURCE)
    assert scope.type_aliases["vec5"] == VecT(FLOAT32, 5)
    assert scope.type_aliases["vec2d_alias"] == VecT(FLOAT64, 2)
    assert scope.type_aliases["M23"] == MatT(FLOAT64, 2, 3)
    assert str(scope.type_aliases["M23"]) == "matrix(shape=(2, 3), dtype=float64)"
    assert ann.element_type(cst.parse_expression("Arr"), scope) is None  # an array is not an element
    assert ann.read_annotation(cst.parse_expression("Arr"), scope) == ArrayT(MatT(FLOAT16, 3, 3), 2)


@pytest.mark.parametrize("expr, message", [
    ("wp.vec(length=0, dtype=float)", "a vector length must be a positive integer constant"),
    ("wp.types.matrix(shape=3, dtype=float)", "a matrix shape must be a constant pair"),
    ("wp.vec(length=3, dtype=list)", "not a dtype"),
])
def test_malformed_declarations(expr, message):
    with pytest.raises(ann.AnnotationError, match=message):
        ann.element_type(cst.parse_expression(expr), scope_of("import warp as wp\n"))


def test_value_type_parameters_and_tiles_of_them_compile(tmp_path):
    from tilec.cli import main
    from click.testing import CliRunner

    src = tmp_path / "m.py"
    src.write_text("import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=wp.vec3), m: wp.mat22d):\n    i = wp.tid()\n")
    result = CliRunner().invoke(main, ["check", str(src)])
    assert result.exit_code == 0, result.output
    src.write_text("import warp as wp\n\n@wp.func\ndef f(t: wp.tile(dtype=wp.vec3, shape=(4,))):\n    return t\n")
    result = CliRunner().invoke(main, ["check", str(src)])
    assert result.exit_code == 0, result.output
