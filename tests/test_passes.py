"""Unit tests of each pass: parse, resolve, check, normalize, verify, structure, autodiff."""
from __future__ import annotations

from dataclasses import replace

import pytest

from harness import compile_ir
from tilec import ir
from tilec.passes.autodiff import adjoint_kernel
from tilec.diagnostics import CompileError, Diagnostics
from tilec.frontend.parse import parse
from tilec.frontend.resolve import resolve
from tilec.passes.normalize import is_fusible, normalize_module
from tilec.ops import OPS
from tilec.pipeline import compile_source
from tilec.passes.structure import eliminate_jumps, inline_calls
from tilec.ir.types import FLOAT32, FLOAT64, INT32, TileT
from tilec.passes.verify import verify_module

HEADER = "import warp as wp\n\n"


def kernel_ir(body: str, params: str = "A: wp.array1d(dtype=float)", extra: str = ""):
    src = HEADER + extra + f"@wp.kernel\ndef k({params}):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    return compile_source(src, "t.py").module


# ---------------------------------------------------------------- parse


def test_parse_reports_syntax_errors_at_their_position():
    with pytest.raises(CompileError) as e:
        parse("x = 1\ny = (2 +\n", "p.py", "p")
    d = e.value.diagnostics[0]
    assert d.code == "TC0001" and (d.span.line, d.span.col) == (2, 5)


def test_parse_gives_one_based_spans():
    p = parse("import warp as wp\nN = 3\n", "p.py", "p")
    stmt = p.tree.body[1]
    assert (p.span(stmt).line, p.span(stmt).col) == (2, 1)


# ---------------------------------------------------------------- resolve


def test_resolve_imports_constants_and_decorators():
    src = """
import warp as w2
import tilec as tl
from warp import tile_load as tl_load
from typing import Any as Anything
try:
    import warp as wq
except ImportError:
    import tilec as wq
A = 4
B = w2.constant(A * 3)
C = (A, B)
D = some_host_call()
@tl.kernel(block_dim=128)
def k(x: int):
    pass
@w2.func
def f(x: int):
    return x
"""
    diags = Diagnostics()
    scope = resolve(parse(src, "r.py", "r"), diags)
    assert not diags.items
    assert {"w2", "tl", "wq"} <= scope.api_aliases
    assert scope.api_names == {"tl_load": "tile_load"}
    assert scope.any_names == {"Anything"}
    assert scope.constants["B"] == 12 and scope.constants["C"] == (4, 12) and "D" not in scope.constants
    assert scope.kernels["k"].block_dim == 128 and "f" in scope.funcs


# ---------------------------------------------------------------- check


def test_check_types_literals_and_storage():
    m = kernel_ir("t = wp.tile_load(A, shape=(2 * 4,), storage='shared')\nu = t * 2\ni = wp.tid()\nx = A[i] + 1",
                  params="A: wp.array1d(dtype=wp.float64)")
    k = m.kernels[0]
    syms = {s.target.name: s for s in ir.walk_stmts(k.body) if isinstance(s, ir.Assign)}
    assert syms["t"].target.type == TileT(FLOAT64, (8,))
    assert k.storage_of(syms["t"].target) == "shared"
    lit = syms["u"].value.args[1]
    assert isinstance(lit, ir.Const) and lit.type == FLOAT64 and lit.value == 2.0  # the literal adapted
    assert syms["x"].target.type == FLOAT64


def test_funcs_are_specialised_per_argument_types():
    extra = "from typing import Any\n\n@wp.func\ndef sq(x: Any):\n    return x * x\n\n\n"
    m = kernel_ir("a = sq(1.5)\nb = sq(3)\nc = sq(2.5)", extra=extra)
    assert [f.name for f in m.funcs] == ["sq", "sq%1"]
    assert [f.ret for f in m.funcs] == [FLOAT32, INT32]


# ---------------------------------------------------------------- normalize


def test_normalize_hoists_tile_ops_and_keeps_elementwise_trees():
    m = normalize_module(kernel_ir("t = wp.tile_load(A, shape=(4,))\nwp.tile_store(A, wp.tile_map(wp.exp, t * 2.0) + wp.tile_sum(t)[0])"))
    for s in ir.walk_stmts(m.kernels[0].body):
        for e in ir.stmt_exprs(s):
            top_fusible = is_fusible(e)
            for sub in ir.walk_expr(e):
                if sub is e or not isinstance(sub, ir.OpCall):
                    continue
                if isinstance(sub.type, TileT):
                    assert top_fusible and is_fusible(sub), f"nested non-elementwise tile op {sub.op}"
    assert verify_module(m) == []


# ---------------------------------------------------------------- verify


def test_verifier_finds_undefined_symbols_and_type_errors():
    m = kernel_ir("x = 1.0\nA[0] = x")
    k = m.kernels[0]
    ghost = ir.Sym("ghost", 0, FLOAT32)
    bad_read = replace(k, body=(ir.ExprStmt(ir.OpCall("array_store", (ir.Var(k.params[0], k.span), ir.Var(ghost, k.span), ir.Const(0, INT32, k.span)), (), None, k.span), k.span),))
    assert any("never defined" in p for p in verify_module(replace(m, kernels=(bad_read,))))
    x = k.body[0].target
    bad_type = replace(k, body=(ir.Assign(x, ir.Const(1, INT32, k.span), k.span),))
    assert any("assigns" in p for p in verify_module(replace(m, kernels=(bad_type,))))


# ---------------------------------------------------------------- structure


def test_inline_and_jump_elimination_leave_structured_code():
    extra = "@wp.func\ndef f(x: float):\n    if x > 0.0:\n        return x\n    return -x\n\n\n"
    body = "i = wp.tid()\ns = 0.0\nfor j in range(10):\n    if j == 3:\n        continue\n    if j == 7:\n        break\n    s += f(A[j])\nA[i] = s"
    m = normalize_module(kernel_ir(body, extra=extra))
    k = eliminate_jumps(inline_calls(m.kernels[0], {f.name: f for f in m.funcs}))
    calls = [e for s in ir.walk_stmts(k.body) for x in ir.stmt_exprs(s) for e in ir.walk_expr(x) if isinstance(e, ir.Call)]
    assert calls == []
    from tilec.passes.structure import _same_loop

    for s in ir.walk_stmts(k.body):
        if isinstance(s, (ir.For, ir.While)):  # only the closing `if brk: break` may leave a loop
            assert not any(isinstance(x, (ir.Break, ir.Continue)) for x in _same_loop(s.body[:-1]))
    assert not any(isinstance(s, (ir.Continue, ir.Return)) for s in ir.walk_stmts(k.body))


# ---------------------------------------------------------------- autodiff


def test_adjoint_tape_pushes_and_pops_balance():
    m = compile_ir(HEADER + "@wp.kernel\ndef k(A: wp.array1d(dtype=float), n: int):\n"
                   "    x = A[0]\n    for j in range(n):\n        if x > 1.0:\n            x = x * 0.5\n        x = x + 1.0\n"
                   "    A[1] = x\n", "t")
    adj = adjoint_kernel(m.kernels[0], m)
    ops = [e.op for s in ir.walk_stmts(adj.body) for x in ir.stmt_exprs(s) for e in ir.walk_expr(x)
           if isinstance(e, ir.OpCall)]
    assert ops.count("tape_push") == ops.count("tape_pop") > 0
    assert adj.params[len(m.kernels[0].params):][0].name == "adj:A"


def test_every_op_in_adjoint_ir_is_in_the_table():
    m = compile_ir((__import__("pathlib").Path(__file__).parent.parent / "samples/attention.py").read_text(), "attention")
    adj = adjoint_kernel(m.kernels[0], m)
    for s in ir.walk_stmts(adj.body):
        for x in ir.stmt_exprs(s):
            for e in ir.walk_expr(x):
                assert not isinstance(e, ir.OpCall) or e.op in OPS


def test_a_build_differentiates_each_kernel_once(monkeypatch):
    """--target all: every kernel is differentiated once, for cooperating lanes. A kernel the
    CPU runs as lanes shares that adjoint with the GPU; one the CPU runs one lane per block gets
    its one-lane form (passes/one_lane.py), without a second derivation."""
    from collections import Counter

    import tilec.backend_cuda.emit as cuda_emit
    import tilec.codegen.sources as sources
    from harness import compile_ir
    from tilec.cli import build_flags
    from tilec.driver import generate

    derived = Counter()

    def counting(real):
        def derivation(kernel, module, lanes=False, **kw):
            derived[kernel.name, lanes] += 1
            return real(kernel, module, lanes, **kw)
        return derivation

    # a SIMT kernel's adjoint comes from adjoint_kernel, a tile kernel's from derive (its GPU form
    # is made from the derivation before it is normalized)
    monkeypatch.setattr(sources, "adjoint_kernel", counting(sources.adjoint_kernel))
    monkeypatch.setattr(sources, "derive", counting(sources.derive))
    assert not hasattr(cuda_emit, "adjoint_kernel") and not hasattr(cuda_emit, "derive")  # the CUDA plan derives nothing of its own
    source = """
import warp as wp

@wp.kernel
def block(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 8), offset=(i * 4, 0))
    wp.tile_store(B, wp.tile_map(wp.sin, t), offset=(i * 4, 0))

@wp.kernel
def lanes(A: wp.array(dtype=float), B: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(A, shape=64, offset=i * 64)
    s = wp.tile_sum(t)
    wp.atomic_add(B, i, s[0] * A[i * 64 + lane])

@wp.kernel
def simt(A: wp.array(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    B[i] = wp.sin(A[i])
"""
    module = compile_ir(source, "modes", 64)
    generate(module, source, build_flags(64))
    assert derived == Counter({("block", True): 1, ("lanes", True): 1, ("simt", False): 1})  # no tiles: no lanes
    cpu = {p.forward.name: p for p in sources.plan_kernels(module)}
    for form in (cpu["block"].adjoint, cpu["block"].lanes_adjoint):  # the one-lane form (the GPU's too: no lane op left)
        ops = {x.op for s in ir.walk_stmts(form.body) for e in ir.stmt_exprs(s)
               for x in ir.walk_expr(e) if isinstance(x, ir.OpCall)}
        assert not ops & {"lane_sum", "leader_only"}
    assert "lane_sum" in _ops_of(cpu["lanes"].adjoint)  # launched as lanes: the lanes form on both


def _ops_of(fn) -> set:
    return {x.op for s in ir.walk_stmts(fn.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.OpCall)}


def test_one_lane_form_reads_an_element_seed_the_lanes_take():
    """A store at the thread's own element: the lanes' adjoint takes its seed atomically (every
    lane of the block would read it), the CPU's one-lane form reads and zeroes it; a store at an
    index every thread shares keeps the atomic take in both. (A seed that reaches a tile, as in
    `B[i] = s[0]`, keeps the lanes form on the CPU too: test_lane_adjoints.py.)"""
    from tilec.codegen.sources import plan_kernels

    source = HEADER + """
@wp.kernel
def own(A: wp.array2d(dtype=float), x: wp.array(dtype=float), B: wp.array(dtype=float), C: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 8), offset=(i * 4, 0))
    wp.tile_store(C, wp.tile_map(wp.sin, t), offset=(i * 4, 0))
    B[i] = x[i] * x[i]

@wp.kernel
def shared(A: wp.array2d(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 8), offset=(0, 0))
    s = wp.tile_sum(t)
    B[0] = s[0]
"""
    plans = {p.forward.name: p for p in plan_kernels(normalize_module(compile_ir(source, "takes", 64)))}
    assert "array_take" in _ops_of(plans["own"].lanes_adjoint)
    assert "array_take" not in _ops_of(plans["own"].adjoint) and "array_load" in _ops_of(plans["own"].adjoint)
    assert "array_take" in _ops_of(plans["shared"].adjoint) and "array_take" in _ops_of(plans["shared"].lanes_adjoint)


def test_simplify_is_done_in_one_call():
    """A loop left empty goes with its body, and then the trip count computed for it is dead too:
    simplify sweeps again until nothing more goes, so simplifying twice changes nothing (the GPU
    adjoint is simplified once; the CPU's one-lane form used to be simplified twice and differ)."""
    from pathlib import Path

    from tilec.passes.simplify import simplify_function

    path = Path(__file__).parent / "conformance" / "programs" / "funcs_custom_replay.py"
    module = compile_ir(path.read_text(), "funcs_custom_replay", 64)
    kernel = next(k for k in module.kernels if k.name == "replay_side_effect")
    once = adjoint_kernel(kernel, module, True, lane_takes=set())  # simplified by the derivation
    assert simplify_function(once) == once
    counts = [s.target.name for s in ir.walk_stmts(once.body) if isinstance(s, ir.Assign) and s.target.name == "_n"]
    assert counts == [], counts  # the empty replay loops' trip counts went with them
