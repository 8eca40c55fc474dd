"""`wp.atomic_max` / `wp.atomic_min` into float arrays: the gradient goes to the winner.

The element's adjoint goes to the thread whose value is the element's final value (ties between
threads: exactly one of them, the first to claim it; a thread tying with the element's old value
wins over it), and the old value's adjoint is consumed when a thread won, kept when none did.
Checked against float64 central differences of the whole final state (`tilec.gradcheck`, with the
adjoint launched on the arrays as the forward found them and as it left them), with several
threads per element and ties, on the CPU and the CUDA emulation, and against Warp 1.19 on the CPU
where Warp is right (no ties). What is still refused is checked with its diagnostic.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from tilec.gradcheck import gradcheck

pytestmark = [pytest.mark.build, needs_cxx]

F = "wp.array(dtype=wp.float64)"
SOURCE = f'''import warp as wp


@wp.kernel
def max_of_squares(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_max(M, i // 3, X[i] * X[i])


@wp.kernel
def min_2d(X: {F}, M: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_min(M, i % 2, i // 4, wp.sin(X[i]) * 2.0)


@wp.kernel
def max_shared_input(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_max(M, 0, X[i % 2] * 3.0)


@wp.kernel
def max_then_store(X: {F}, M: {F}, Y: {F}):
    i = wp.tid()
    Y[i] = X[i] * 2.0
    wp.atomic_max(M, 0, X[i] + 1.0)
    wp.atomic_max(M, 1, -X[i])


@wp.kernel
def max_of_tile_sums(X: wp.array2d(dtype=wp.float64), M: {F}):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 4), offset=(i, 0))
    s = wp.tile_sum(x * x)
    wp.atomic_max(M, 0, s[0])


@wp.kernel
def max_and_read(X: {F}, M: {F}, Y: {F}):
    i = wp.tid()
    wp.atomic_max(M, 0, X[i])
    Y[i] = M[0] * 2.0


@wp.kernel
def max_and_min(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_max(M, 0, X[i])
    wp.atomic_min(M, 0, X[i] * 2.0)


@wp.kernel
def max_and_add(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_max(M, 0, X[i])
    wp.atomic_add(M, 0, X[i])


@wp.kernel
def max_and_view(X: {F}, M: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_max(M, 0, i, X[i])
    row = M[1]
    row[i] = X[i]


@wp.kernel
def max_into_view(X: {F}, M: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    row = M[0]
    wp.atomic_max(row, i, X[i])


@wp.kernel
def vector_extremes(X: wp.array(dtype=wp.vec3d), V: wp.array(dtype=wp.vec3d), M: wp.array(dtype=wp.mat22d)):
    # component by component: each component's winner takes that component's adjoint
    i = wp.tid()
    wp.atomic_min(V, i // 3, X[i] * X[i][1])
    x = X[i % 4]  # threads 0 and 4 tie on every component
    wp.atomic_max(M, 0, wp.mat22d(x[0], x[1] * 2.0, wp.sin(x[2]), x[0] * x[1]))


@wp.kernel
def max_of_written(X: {F}, Y: {F}, M: {F}):
    i = wp.tid()
    Y[i] = X[i]
    wp.atomic_max(M, 0, Y[i] * 2.0)
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "extremes")


def _line(text: str, kernel: str = "") -> int:
    """The line of `text`, first after `def kernel(`."""
    lines = SOURCE.splitlines()
    start = next(n for n, s in enumerate(lines) if f"def {kernel}(" in s) if kernel else 0
    return next(n for n, s in enumerate(lines[start:], start + 1) if text in s)


def warnings() -> dict:
    """kernel name -> the code of the warning refusing its adjoint."""
    from harness import compile_ir
    from tilec.codegen.sources import adjoint_warnings

    module = compile_ir(SOURCE, "extremes")
    names = {k.span.line: k.name for k in module.kernels}
    return {max((ln, n) for ln, n in names.items() if ln <= d.span.line)[1]: d.code
            for d in adjoint_warnings(module)}


def rand(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


def exact(kernel, dim, inputs, device="cpu"):
    report = gradcheck(kernel, dim, inputs, device=device)
    assert report.ok, str(report)


def test_atomic_max_with_three_threads_per_element_matches_finite_differences(mod):
    exact(mod.max_of_squares, 9, [rand(9), np.array([0.2, 5.0, -1.0])])


def test_atomic_min_on_a_2d_array_matches_finite_differences(mod):
    exact(mod.min_2d, 16, [rand(16, seed=3), np.full((2, 4), 0.5)])


def test_the_old_value_keeps_its_gradient_when_no_thread_beats_it(mod):
    """M[1] = 5 beats every square: its seed stays; M[0] and M[2] are overwritten: consumed."""
    x = np.array([0.3, -1.2, 0.5, 1.0, 0.1, -0.4, 2.0, 0.2, 0.1])
    m0 = np.array([0.2, 5.0, -1.0])
    exact(mod.max_of_squares, 9, [x, m0])
    adj = [np.zeros(9), np.array([1.0, 10.0, 100.0])]
    out = m0.copy()
    mod.max_of_squares.launch(dim=9, inputs=[x.copy(), out], adj_inputs=adj, adjoint=True)
    assert out.tolist() == m0.tolist()  # the adjoint launch leaves the arrays as it found them
    assert adj[1].tolist() == [0.0, 10.0, 0.0]
    assert adj[0].tolist() == [0, 2 * -1.2 * 1.0, 0, 0, 0, 0, 2 * 2.0 * 100.0, 0, 0]


def test_threads_reading_one_input_tie_and_the_gradient_counts_once(mod):
    """Every thread with i % 2 == 1 writes the same value 3 * X[1]: d max / d X[1] is 3, not 3 per thread
    (Warp 1.19 gives every tied thread the whole gradient)."""
    x = np.array([0.5, 1.5])
    exact(mod.max_shared_input, 8, [x, np.array([-9.0])])
    adj = [np.zeros(2), np.array([1.0])]
    mod.max_shared_input.launch(dim=8, inputs=[x.copy(), np.array([-9.0])], adj_inputs=adj, adjoint=True)
    assert adj[0].tolist() == [0.0, 3.0]


@pytest.mark.parametrize("state", ["before", "after"])
def test_ties_between_distinct_inputs_give_the_gradient_to_exactly_one(mod, state):
    x = np.array([1.0, 2.0, 2.0, 0.5, 2.0, 2.0, -3.0, 1.0, 1.0])
    m = np.zeros(3)
    if state == "after":
        mod.max_of_squares.launch(dim=9, inputs=[x, m])
    adj = [np.zeros(9), np.array([1.0, 1.0, 1.0])]
    mod.max_of_squares.launch(dim=9, inputs=[x, m], adj_inputs=adj, adjoint=True)
    # element 0: x[1] = x[2] = 2 tie; element 1: x[4] = x[5] tie; element 2: x[6] = -3 wins alone
    assert adj[1].tolist() == [0.0, 0.0, 0.0]
    g = adj[0]
    assert sorted(g[1:3].tolist()) == [0.0, 4.0] and sorted(g[4:6].tolist()) == [0.0, 4.0]
    assert g[6] == -6.0 and g[[0, 3, 7, 8]].tolist() == [0, 0, 0, 0]
    adj = [np.zeros(9), np.array([1.0, 1.0, 1.0])]
    mod.max_of_squares.launch(dim=9, inputs=[x, m], adj_inputs=adj, adjoint=True, num_threads=1)
    assert adj[0][1:6].tolist() == [4.0, 0.0, 0.0, 4.0, 0.0]  # one CPU thread: the lowest index (documented)


def test_a_value_tying_with_the_old_value_takes_the_gradient(mod):
    """M[0] = 4 and X[0]**2 = 4: the thread wins (in both launch states alike, since after the
    forward the old value cannot be told from the thread's)."""
    x = np.array([2.0, 1.0, 0.5])
    adj = [np.zeros(3), np.array([1.0])]
    mod.max_of_squares.launch(dim=3, inputs=[x, np.array([4.0])], adj_inputs=adj, adjoint=True)
    assert adj[1].tolist() == [0.0] and adj[0].tolist() == [4.0, 0.0, 0.0]


def test_extremes_next_to_other_stores_match_finite_differences(mod):
    exact(mod.max_then_store, 6, [rand(6, seed=5), np.array([-5.0, -5.0]), np.zeros(6)])


def test_vector_and_matrix_extremes_match_finite_differences_component_by_component(mod):
    exact(mod.vector_extremes, 6, [rand(6, 3, seed=4), np.full((2, 3), 0.25), np.full((1, 2, 2), -0.5)])


def test_extremes_in_a_tile_kernel_with_cooperating_lanes(mod):
    exact(mod.max_of_tile_sums, 5, [rand(5, 4, seed=2), np.array([0.1])])


def test_on_the_cuda_emulation():
    try:
        m = build(SOURCE, "extremes", target="cuda-emu")
    except Exception as e:  # no nvcc headers
        pytest.skip(f"cuda-emu build unavailable: {e}")
    exact(m.max_of_squares, 9, [rand(9), np.array([0.2, 5.0, -1.0])], device="cuda-emu")
    exact(m.max_of_tile_sums, 5, [rand(5, 4, seed=2), np.array([0.1])], device="cuda-emu")
    exact(m.vector_extremes, 6, [rand(6, 3, seed=4), np.full((2, 3), 0.25), np.full((1, 2, 2), -0.5)],
          device="cuda-emu")


@pytest.mark.parametrize("kernel, other, why", [
    ("max_and_read", "Y[i] = M[0]", "is also read"),
    ("max_and_min", "wp.atomic_min(M", "updated by `atomic_min`"),
    ("max_and_add", "wp.atomic_add(M", "accumulated into"),
])
def test_other_accesses_to_an_extreme_array_are_refused(mod, kernel, other, why):
    k = getattr(mod, kernel)
    reason = k.meta["no_backward"]
    assert warnings()[kernel] == "TC0505", reason
    assert "`M`" in reason and why in reason
    assert f"line {_line(other, kernel)}" in reason and f"line {_line('wp.atomic_max(M', kernel)}" in reason
    with pytest.raises(ValueError, match="no backward"):
        k.launch(dim=2, inputs=[np.ones(2), np.zeros(1)] + ([np.zeros(2)] if kernel == "max_and_read" else []),
                 adj_inputs=[np.zeros(2), np.zeros(1)] + ([np.zeros(2)] if kernel == "max_and_read" else []),
                 adjoint=True)


@pytest.mark.parametrize("kernel, needle", [("max_and_view", "through a view"), ("max_into_view", "into a view")])
def test_extremes_and_views_are_refused(mod, kernel, needle):
    reason = getattr(mod, kernel).meta["no_backward"]
    assert warnings()[kernel] == "TC0505" and needle in reason, reason


def test_an_extreme_of_a_value_read_from_a_written_array_is_refused(mod):
    reason = mod.max_of_written.meta["no_backward"]
    assert warnings()["max_of_written"] == "TC0502", reason
    assert "`Y`" in reason and f"line {_line('wp.atomic_max(M', 'max_of_written')}" in reason


WARP_SOURCE = """import warp as wp


@wp.kernel
def max_of_squares(X: wp.array(dtype=float), M: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_max(M, i // 3, X[i] * X[i])


@wp.kernel
def min_of_products(X: wp.array(dtype=float), W: wp.array(dtype=float), M: wp.array2d(dtype=float)):
    i = wp.tid()
    wp.atomic_min(M, i % 2, i // 4, X[i] * W[i])
"""


def _warp_gradients(wp, kernel, dim, inputs, seeds):
    arrays = [wp.array(a, dtype=float, requires_grad=True, device="cpu") for a in inputs]
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=dim, inputs=arrays, device="cpu")
    tape.backward(grads={a: wp.array(g, dtype=float, device="cpu") for a, g in zip(arrays, seeds) if g is not None})
    return [a.numpy() for a in arrays], [a.grad.numpy() for a in arrays]


def _tilec_gradients(kernel, dim, inputs, seeds):
    values = [np.array(a, dtype=np.float32) for a in inputs]
    kernel.launch(dim=dim, inputs=values)
    adj = [np.array(g, dtype=np.float32) if g is not None else np.zeros_like(v) for v, g in zip(values, seeds)]
    kernel.launch(dim=dim, inputs=values, adj_inputs=adj, adjoint=True)
    return values, adj


@pytest.fixture(scope="module")
def warp_and_tilec(tmp_path_factory):
    from harness import import_under_warp

    monkeypatch = pytest.MonkeyPatch()
    try:
        wp, prog = import_under_warp(WARP_SOURCE, "extremes_warp", tmp_path_factory.mktemp("warp"), monkeypatch)
        yield wp, prog, build(WARP_SOURCE, "extremes_warp")
    finally:
        monkeypatch.undo()


def test_same_gradients_as_warp_without_ties(warp_and_tilec):
    """Warp 1.19 routes the gradient to every thread whose value equals the element's final value;
    without ties that is the winner alone, and both agree (values and gradients of the inputs)."""
    wp, prog, mine = warp_and_tilec
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(16), rng.standard_normal(16)
    cases = [(prog.max_of_squares, mine.max_of_squares, 9, [x[:9], np.array([0.2, 0.5, -1.0])],
              [None, np.array([1.0, -2.0, 3.0])]),
             (prog.min_of_products, mine.min_of_products, 16, [x, w, np.full((2, 4), 0.5)],
              [None, None, rng.standard_normal((2, 4))])]
    for warp_kernel, kernel, dim, inputs, seeds in cases:
        (*_, m_warp), grads_warp = _warp_gradients(wp, warp_kernel, dim, inputs, seeds)
        (*_, m_mine), grads_mine = _tilec_gradients(kernel, dim, inputs, seeds)
        np.testing.assert_array_equal(m_mine, m_warp)
        for g_mine, g_warp in zip(grads_mine[:-1], grads_warp[:-1]):
            np.testing.assert_allclose(g_mine, g_warp, rtol=1e-6)
            assert np.count_nonzero(g_mine) > 0


def test_on_ties_warp_counts_the_gradient_once_per_tied_thread_and_tilec_once(warp_and_tilec):
    """x[1] = x[2] tie for M[0]: Warp gives both threads the whole gradient (M[0]'s total doubles);
    tilec gives it to one. Where the old value 5 wins (M[1]), its seed stays."""
    wp, prog, mine = warp_and_tilec
    inputs = [np.array([1.0, 2.0, -2.0, 0.5, 1.0, 0.0]), np.array([0.0, 5.0])]
    seeds = [None, np.array([1.0, 1.0])]
    _, (gx_warp, _) = _warp_gradients(wp, prog.max_of_squares, 6, inputs, seeds)
    _, (gx_mine, gm_mine) = _tilec_gradients(mine.max_of_squares, 6, inputs, seeds)
    assert gx_warp[1:3].tolist() == [4.0, -4.0]
    assert sorted(gx_mine[1:3].tolist()) in ([-4.0, 0.0], [0.0, 4.0])
    assert gx_mine[3:].tolist() == [0.0, 0.0, 0.0] and gm_mine.tolist() == [0.0, 1.0]


def test_the_interpreter_routes_the_gradient_like_the_compiled_code(mod):
    """The numpy interpreter's extreme_take, on arrays as the forward left them (the final values)."""
    from harness import compile_ir
    from tilec.interp import Interpreter

    x = np.array([0.3, -1.2, 0.5, 1.0, 0.1, -0.4, 2.0, 2.0, -2.0])
    m = np.array([0.2, 5.0, -1.0])
    mod.max_of_squares.launch(dim=9, inputs=[x, m])
    adj_compiled = [np.zeros(9), np.array([1.0, 10.0, 100.0])]
    mod.max_of_squares.launch(dim=9, inputs=[x, m.copy()], adj_inputs=adj_compiled, adjoint=True, num_threads=1)
    interp = Interpreter(compile_ir(SOURCE, "extremes"))
    adj_interp = [np.zeros(9), np.array([1.0, 10.0, 100.0])]
    interp.launch("max_of_squares", 9, [x, m.copy()], tiled=False, adjoint=True, adj_inputs=adj_interp)
    for a, b in zip(adj_compiled, adj_interp):
        np.testing.assert_array_equal(a, b)
    assert adj_interp[0][6:].tolist() == [400.0, 0.0, 0.0]  # the tie x[6] = x[7] = 2: the first thread
