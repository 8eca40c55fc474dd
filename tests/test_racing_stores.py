"""A plain store every thread makes to the same element of a value that differs between threads
(`out[0] = x[i]`) is a race in the forward: which value lands depends on the order threads ran in,
and no adjoint is right. Its adjoint is refused with TC0506 at the store's line:col, printed by
`tilec check` as well as `tilec build`; the same store guarded by a thread test, of a value every
thread computes alike, or indexed by the thread keeps its adjoint.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import compile_ir
from tilec.codegen.sources import adjoint_warnings

F = "wp.array(dtype=wp.float64)"
SOURCE = f'''import warp as wp


@wp.kernel
def last_writer(X: {F}, out: {F}):
    i = wp.tid()
    out[0] = X[i] * 2.0


@wp.kernel
def last_writer_2d(X: {F}, out: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    v = wp.sin(X[i])
    out[1, 2] = v


@wp.kernel
def block_writer(X: {F}, out: {F}):
    i = wp.tid()
    t = wp.tile_load(X, shape=(4,), offset=(i * 4,))
    wp.tile_store(out, t * 2.0)


@wp.kernel
def lane_writer(X: {F}, out: {F}):
    i, j = wp.tid()
    t = wp.tile_load(X, shape=(4,))
    out[0] = X[j] + t[0]


@wp.kernel
def guarded(X: {F}, out: {F}):
    i = wp.tid()
    if i == 0:
        out[0] = X[i] * 2.0


@wp.kernel
def same_value(X: {F}, out: {F}, Y: {F}):
    i = wp.tid()
    out[0] = X[0] * 2.0
    Y[i] = X[i]


@wp.kernel
def per_thread(X: {F}, out: {F}):
    i = wp.tid()
    out[i] = X[i] * 2.0


@wp.kernel
def lanes_to_tile(X: {F}, out: {F}):
    blk, i = wp.tid()
    t = wp.tile(X[i] * 2.0)
    wp.tile_store(out, t)


@wp.kernel
def tile_at_block(X: {F}, out: {F}):
    i = wp.tid()
    t = wp.tile_load(X, shape=(4,), offset=(i * 4,))
    wp.tile_store(out, t * 2.0, offset=(i * 4,))
'''

REFUSED = {  # kernel -> (the store's text, the array)
    "last_writer": ("out[0] = X[i] * 2.0", "out"),
    "last_writer_2d": ("out[1, 2] = v", "out"),
    "block_writer": ("wp.tile_store(out, t * 2.0)", "out"),
    "lane_writer": ("out[0] = X[j] + t[0]", "out"),
}


def _position(text: str) -> tuple:
    lines = SOURCE.splitlines()
    n = next(k for k, s in enumerate(lines) if text in s)
    return n + 1, lines[n].index(text.split(" = ")[0] if " = " in text else text) + 1


def _warnings() -> dict:
    module = compile_ir(SOURCE, "racing")
    starts = sorted((k.span.line, k.name) for k in module.kernels)
    return {max(s for s in starts if s[0] <= d.span.line)[1]: d for d in adjoint_warnings(module)}


def test_a_store_every_thread_makes_of_a_thread_dependent_value_is_refused_at_its_line_and_column():
    found = _warnings()
    assert sorted(found) == sorted(REFUSED)
    for kernel, (text, array) in REFUSED.items():
        d = found[kernel]
        assert d.code == "TC0506" and d.severity == "warning", d
        assert (d.span.line, d.span.col) == _position(text), (kernel, d.span.line, d.span.col)
        assert f"`{array}`" in d.message and f"line {d.span.line}" in d.message


def test_check_prints_the_refusal_with_line_and_column(tmp_path):
    path = tmp_path / "racing.py"
    path.write_text(SOURCE)
    out = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, text=True)
    line, col = _position(REFUSED["last_writer"][0])
    assert f"racing.py:{line}:{col}: warning[TC0506]" in out.stdout + out.stderr


@pytest.mark.build
@needs_cxx
def test_the_refused_kernel_has_no_adjoint_and_the_others_are_exact():
    from harness import build
    from tilec.gradcheck import gradcheck

    mod = build(SOURCE, "racing")
    with pytest.raises(ValueError, match="TC0506|every thread stores"):
        mod.last_writer.launch(dim=4, inputs=[np.ones(4), np.zeros(1)], adj_inputs=[np.zeros(4), np.ones(1)],
                               adjoint=True)
    x = np.random.default_rng(0).uniform(0.5, 1.5, 8)
    for kernel, inputs in [(mod.guarded, [x, np.zeros(1)]), (mod.same_value, [x, np.zeros(1), np.zeros(8)]),
                           (mod.per_thread, [x, np.zeros(8)])]:
        report = gradcheck(kernel, 8, inputs)
        assert report.ok, str(report)
    report = gradcheck(mod.tile_at_block, 2, [x, np.zeros(8)])
    assert report.ok, str(report)
    # a tile gathered from every lane's value is one value per block, the same in every block here
    x = np.random.default_rng(1).uniform(0.5, 1.5, 256)
    report = gradcheck(mod.lanes_to_tile, 1, [x, np.zeros(256)], samples=12)
    assert report.ok, str(report)


@pytest.mark.build
@needs_cxx
def test_a_store_threads_share_gives_up_its_seed_once_atomically():
    """`out[0] = X[0] * 2.0` in every thread, and a block's lanes storing one element: the adjoint
    takes the element's seed with an atomic exchange (tl::array_take), so on a GPU, where threads
    interleave, one thread gets it and the others zero; a store at the thread's own element keeps
    the plain read-and-zero. Checked in the generated code and, with 4 CPU worker threads, by value."""
    from pathlib import Path

    from harness import build

    mod = build(SOURCE, "racing")
    cpp = (Path(mod.__file__).parent / "racing.cpp").read_text()

    def adjoint_of(kernel):
        start = cpp.index(f"static void k_{kernel}_backward(")
        return cpp[start:cpp.index("\n}\n", start)]

    assert "tl::array_take(" in adjoint_of("same_value")  # out[0] shared; Y[i] per thread
    assert adjoint_of("same_value").count("tl::array_take(") == 1
    assert "tl::array_take(" not in adjoint_of("per_thread")
    x = np.random.default_rng(2).uniform(0.5, 1.5, 4096)
    adj = [np.zeros(4096), np.array([1.5]), np.zeros(4096)]
    mod.same_value.launch(dim=4096, inputs=[x, np.zeros(1), np.zeros(4096)], adj_inputs=adj, adjoint=True,
                          num_threads=4)
    assert adj[0][0] == 3.0 and adj[1][0] == 0.0 and not adj[0][1:].any()
