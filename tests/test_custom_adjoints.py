"""Custom adjoints tilec cannot apply exactly: a TC0501 warning at the exact line:col, the kernel
built without an adjoint, its forward intact and its adjoint launch refused with the reason. Never
a decorator silently ignored (frontend errors on the decorators themselves: tests/ui/custom_adjoints.py)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx

SOURCE = '''import warp as wp

N = 8


@wp.func
def visit(counter: wp.array(dtype=int), x: float):
    wp.atomic_add(counter, 0, 1)


@wp.func_replay(visit)
def replay_visit(counter: wp.array(dtype=int), x: float):
    wp.atomic_add(counter, 1, 1)


@wp.func
def bump(t: wp.tile(dtype=float, shape=(N,))):
    t += t * 2.0


@wp.func_grad(bump)
def adj_bump(t: wp.tile(dtype=float, shape=(N,))):
    wp.adjoint[t] += t


@wp.func
def larger(x: float, y: float):
    return wp.max(x, y)


@wp.func_grad(larger)
def adj_larger(x: float, y: float, adj_ret: float):
    wp.adjoint[x] += adj_ret * 0.5
    wp.adjoint[y] += adj_ret * 0.5


@wp.kernel
def counted(a: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    visit(counter, a[i])
    out[i] = a[i] * 2.0


@wp.kernel
def bumped(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    bump(t)
    wp.tile_store(out, t)


@wp.kernel
def reduced(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    wp.tile_store(out, wp.tile_reduce(larger, t))
'''


@pytest.mark.build
@needs_cxx
def test_unapplicable_custom_adjoints_warn_at_the_line_and_refuse_adjoints(tmp_path):
    path = tmp_path / "nd.py"
    path.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(tmp_path / "out"),
                           "--target", "cpu"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{path}:13:5: warning[TC0501]: the @wp.func_replay of `visit` makes `atomic_add`" in proc.stderr
    assert f"{path}:47:5: warning[TC0501]: `bump` has a custom adjoint (@wp.func_grad on a func that updates " \
           "a tile argument in place)" in proc.stderr
    assert f"{path}:54:24: warning[TC0501]: tile_reduce over `larger`, which has a @wp.func_grad" in proc.stderr
    for kernel in ("counted", "bumped", "reduced"):
        assert f"kernel `{kernel}` is built without an adjoint" in proc.stderr
    import tilec

    mod = tilec.load(tmp_path / "out/nd")
    a = np.linspace(-1, 1, 8).astype(np.float32)
    counter, out = np.zeros(2, np.int32), np.zeros(8, np.float32)
    mod.counted.launch(dim=8, inputs=[a, counter, out])  # the forward runs the func itself
    np.testing.assert_array_equal(counter, [8, 0])
    np.testing.assert_allclose(out, a * 2)
    with pytest.raises(ValueError, match="no backward kernel.*func_replay of `visit`"):
        mod.counted.launch(dim=8, inputs=[a, counter, out], adjoint=True,
                           adj_inputs=[np.zeros_like(a), np.zeros(2, np.int32), np.ones_like(out)])
    mod.bumped.launch_tiled(dim=1, inputs=[a, out])
    np.testing.assert_allclose(out, a * 3)  # the update by reference reaches the caller
    with pytest.raises(ValueError, match="no backward kernel.*updates a tile argument in place"):
        mod.bumped.launch_tiled(dim=1, inputs=[a, out], adj_inputs=[np.zeros_like(a), np.ones_like(out)],
                                adjoint=True)
    with pytest.raises(ValueError, match="no backward kernel.*tile_reduce over `larger`"):
        mod.reduced.launch_tiled(dim=1, inputs=[a, out], adj_inputs=[np.zeros_like(a), np.ones_like(out)],
                                 adjoint=True)
