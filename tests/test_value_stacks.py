"""Block stacks of vectors and structs: a float that went through one gets no adjoint (Warp drops
its gradient there), whether it is a vector's component or a struct's field read at the slot the
struct's first (int) field was popped from; the forward is unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.struct
class Item:
    k: int
    x: float


@wp.kernel
def through_struct(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=Item)
    it = Item()
    it.k = lane
    it.x = x[lane] * 2.0
    wp.tile_stack_push(s, it, True)
    got, slot = wp.tile_stack_pop(s)
    y[got.k] = got.x


@wp.kernel
def through_vec(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=wp.vec2)
    wp.tile_stack_push(s, wp.vec2(x[lane], float(lane)), True)
    v, slot = wp.tile_stack_pop(s)
    y[int(v[1])] = v[0] * 3.0
'''
BLOCK = 8


@pytest.mark.parametrize("kernel, scale", [("through_struct", 2.0), ("through_vec", 3.0)])
def test_forward_and_refused_adjoint(kernel, scale):
    m = build(SOURCE, "value_stacks", block_dim=BLOCK)
    x, y = np.arange(1, BLOCK + 1, dtype=np.float32), np.zeros(BLOCK, np.float32)
    k = getattr(m, kernel)
    k.launch_tiled(dim=1, inputs=[x, y], block_dim=BLOCK)
    np.testing.assert_array_equal(y, x * scale)  # each value comes back to the lane that pushed it
    with pytest.raises(Exception, match="tile_stack_pop"):
        k.launch_tiled(dim=1, inputs=[x, y], block_dim=BLOCK, adj_inputs=[np.zeros_like(x), np.ones_like(y)],
                       adjoint=True)
