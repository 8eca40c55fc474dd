"""A negative test at exact line:col for each Warp tile builtin the #14 audit found without one: the
diagnostic names the op (its message starts with it), points at the offending argument (or the
call, for an argument count) and offers no spelling suggestion for another op."""
from __future__ import annotations

import pytest

from tilec.diagnostics import CompileError
from tilec.frontend.check import Options
from tilec.pipeline import compile_source

KERNEL = """import warp as wp


@wp.kernel
def k(a: wp.array2d(dtype=float), i: wp.array1d(dtype=int), v: wp.array1d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 4))
    r = wp.tile_load(v, shape=4)
    {line}
"""

CASES = [
    ('x = wp.tile(t)',
     '8:17: TC0303: tile: `x` must be a per-lane scalar, got a float32 tile of shape (4, 4)'),
    ('x = wp.untile(a)',
     '8:19: TC0303: untile: `a` must be a tile, got a 2-d float32 array'),
    ('wp.tile_add_inplace(t, 0, 1.0)',
     '8:5: TC0303: tile_add_inplace: needs 2 index(es), then `value`'),
    ('wp.tile_sub_inplace(r, 0, t)',
     '8:31: TC0303: tile_sub_inplace: `value` must be a scalar, got a float32 tile of shape (4, 4)'),
    ('wp.tile_bit_xor_inplace(t, 0, 0, 1)',
     '8:29: TC0203: tile_bit_xor_inplace: needs an integer tile, got float32'),
    ('x = wp.tile_argmax(a)',
     '8:24: TC0303: tile_argmax: `a` must be a tile, got a 2-d float32 array'),
    ('x = wp.tile_min(t, axis=2)',
     '8:29: TC0106: tile_min: axis 2 is out of range for a 2-d tile'),
    ('wp.tile_atomic_add(v, t)',
     '8:27: TC0107: tile_atomic_add: a 2-d tile cannot be stored into a 1-d array'),
    ('wp.tile_atomic_add_indexed(a, r, t, axis=0)',
     '8:35: TC0303: tile_atomic_add_indexed: `indices` must be a 1-d int32 tile, got tile(float32, (4,))'),
    ('wp.tile_store_indexed(a, wp.tile_load(i, shape=4), t, axis=2)',
     '8:64: TC0106: tile_store_indexed: axis 2 is out of range for a 2-d tile'),
    ('wp.tile_cholesky_solve_inplace(t, wp.tile_load(v, shape=5))',
     '8:39: TC0101: tile_cholesky_solve_inplace: `y` has 5 rows but `L` is (4, 4)'),
    ('x = wp.tile_lower_solve(r, r)',
     '8:29: TC0107: tile_lower_solve: `L` must be a 2-d tile, got shape (4,)'),
    ('x = wp.tile_upper_solve(wp.tile_load(a, shape=(4, 3)), r)',
     '8:29: TC0101: tile_upper_solve: `U` must be square, got (4, 3)'),
    ('x = wp.tile_empty(shape=(0, 4), dtype=float)',
     '8:30: TC0111: tile_empty: `shape` must be positive, got (0, 4)'),
    ('x = wp.tile_extract(t, 1)',
     '8:9: TC0304: tile_extract: element access needs 2 index(es) for a tile of shape (4, 4), got 1'),
    ('s = wp.tile_stack(capacity=0, dtype=float)',
     '8:32: TC0303: tile_stack: `capacity` must be a positive compile-time integer, got 0'),
    ('s = wp.tile_stack(capacity=8, dtype=float)\n    wp.tile_stack_push(s, 1.0, 1)',
     '9:32: TC0203: tile_stack_push: `has_value` must be a bool, got an int32 scalar'),
    ('x = wp.tile_stack_pop(t)',
     '8:27: TC0203: tile_stack_pop: `s` must be a tile stack (from wp.tile_stack), got a float32 tile of shape (4, 4)'),
    ('x = wp.tile_stack_count(r)',
     '8:29: TC0203: tile_stack_count: `s` must be a tile stack (from wp.tile_stack), got a float32 tile of shape (4,)'),
    ('wp.tile_stack_clear(a)',
     '8:25: TC0203: tile_stack_clear: `s` must be a tile stack (from wp.tile_stack), got a 2-d float32 array'),
]


@pytest.mark.parametrize("line, want", CASES, ids=[want.split(": ")[2] for _, want in CASES])
def test_misuse_is_a_diagnostic_at_the_argument(line, want):
    with pytest.raises(CompileError) as info:
        compile_source(KERNEL.format(line=line), "prog.py", Options(block_dim=32))
    d = info.value.diagnostics[0]
    assert f"{d.span.line}:{d.span.col}: {d.code}: {d.message}" == want
    assert d.help is None or "did you mean" not in d.help
