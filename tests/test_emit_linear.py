"""Compiling a kernel costs the same work per statement whatever its length (issue #17: emit time
linear in program size; bench/emit_scaling.py times 2,000 and 20,000 statements).

Counted, not timed: the Python and builtin calls that check + generate (both targets, every file)
make, through a profile hook on the compile thread. A pass that walks the whole kernel per
statement, copies the body per rewrite or rescans a list per candidate makes each added statement
cost more than the last; linear work adds the same count for each one.
"""
from __future__ import annotations

import sys

import pytest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "bench"))
from emit_scaling import program  # noqa: E402
from harness import build_flags  # noqa: E402


def _calls(n: int, kind: str) -> int:
    """Calls made while checking and generating every file of the n-statement program."""
    from tilec.driver import generate
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    flags = build_flags(256, target="all", emit_only=True)
    src = program(n, kind)
    count = [0]

    def hook(frame, event, arg):
        if event == "call" or event == "c_call":
            count[0] += 1

    def run() -> int:
        sys.setprofile(hook)  # this thread only: run_deep's compile thread
        try:
            generate(normalize_module(compile_source(src, f"{kind}.py").module), src, flags)
        finally:
            sys.setprofile(None)
        return count[0]

    return run_deep(run)


# Calls per added statement, with a few percent of room: the tile program took 8,426 and the
# scalar one 4,651 before interned symbols and one_lane's skipped folds (7,442 and 4,268 after);
# the CPU emitter's analyses added in the same session (per-thread gradient sums, rows read and
# written in place, summed matmul loops) brought them to 7,996 and 4,708. Later front-end work left
# the scalar one at 4,904 (measured on 2fbaa13, over its old limit of 4,900 on a developer's machine,
# just under it in CI): 5,100 keeps the few percent of room.
CALLS_PER_STATEMENT = {"tiles": 8_300, "scalar": 5_100}


@pytest.mark.parametrize("kind", ["scalar", "tiles"])
def test_each_added_statement_costs_the_same_calls(kind):
    """40 -> 80 -> 160 statements: the second 80 added may cost at most 2.2x the calls the first 40
    added (linear: 2x; a pass quadratic in the statements: 4x), and each added statement at most
    CALLS_PER_STATEMENT[kind] (a constant factor that grew is caught too)."""
    _calls(8, kind)  # the first compile also loads templates and builds lazy tables
    small, middle, large = (_calls(n, kind) for n in (40, 80, 160))
    first, second = middle - small, large - middle
    assert first > 0 and second <= 2.2 * first, (small, middle, large)
    assert second / 80 <= CALLS_PER_STATEMENT[kind], (small, middle, large)


def _plans(source: str, name: str = "straight.py"):
    from tilec.codegen import sources
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    return sources.plan_kernels(normalize_module(compile_source(source, name).module))


def test_straight_line_adjoint_takes_one_sweep_of_each_rewrite(monkeypatch):
    """The CPU adjoint of a straight-line tile kernel: one sweep of adjoint_tidy's moves, one of
    its copies and one round of each of the two folds (fuse_tiles.py: the derivation's lane
    temporaries, lane_ops.fold_lane_temporaries, then tidy_one_lane's), whatever the kernel's
    length (a sweep that passed no candidate over before a rewrite leaves nothing for another;
    two full sweeps each were a quarter of the CPU adjoint's cost)."""
    from tilec.passes import adjoint_tidy, fuse_tiles

    sweeps, rounds = [0], [0]
    block, fuse = adjoint_tidy._Block, fuse_tiles.fuse_round

    class CountedBlock(block):
        def __init__(self, *args):
            sweeps[0] += 1
            super().__init__(*args)

    def counted_fuse(body, single, state, chains=False, foldable=None):
        rounds[0] += 1  # straight-line code: every call is a round over a whole body
        return fuse(body, single, state, chains, foldable)

    monkeypatch.setattr(adjoint_tidy, "_Block", CountedBlock)
    monkeypatch.setattr(fuse_tiles, "fuse_round", counted_fuse)
    for n in (20, 160):
        sweeps[0] = rounds[0] = 0
        plan, = _plans(program(n, "tiles"))
        assert plan.adjoint is not None and plan.adjoint is plan.lanes_adjoint  # one tidied form for both targets
        assert (sweeps[0], rounds[0]) == (2, 2), n  # moves: one sweep; copies: one; each fold: one round


def _tile_syms(*names):
    from tilec import ir
    from tilec.ir.types import FLOAT32, TileT

    return [ir.Sym(name, 0, TileT(FLOAT32, (4,))) for name in names]


def test_a_move_after_a_passed_over_take_sweeps_again(monkeypatch):
    """adjoint_tidy's moves: a take (`g = adj`) the sweep passed over, then a move further on,
    costs one more sweep (the move may have made the take movable); with nothing passed over the
    first sweep is the only one."""
    from tilec import ir
    from tilec.diagnostics import NO_SPAN
    from tilec.ops.build import call, zeros
    from tilec.passes import adjoint_tidy

    g1, adj1, g2, adj2, y, z, out = _tile_syms("g1", "adj1", "g2", "adj2", "y", "z", "out")
    var = lambda sym: ir.Var(sym, NO_SPAN)  # noqa: E731
    sweeps = [0]
    block = adjoint_tidy._Block

    class CountedBlock(block):
        def __init__(self, *args):
            sweeps[0] += 1
            super().__init__(*args)

    monkeypatch.setattr(adjoint_tidy, "_Block", CountedBlock)
    move = [ir.Assign(g2, var(adj2), NO_SPAN), ir.Assign(adj2, zeros(adj2.type, NO_SPAN), NO_SPAN),
            ir.Assign(out, call("add", var(g2), var(z), span=NO_SPAN), NO_SPAN)]
    moved = (ir.Assign(out, call("add", var(adj2), var(z), span=NO_SPAN), NO_SPAN), move[1])
    passed_over = [ir.Assign(g1, var(adj1), NO_SPAN), ir.Assign(y, var(z), NO_SPAN)]  # no zeroing: not a move
    for body, expected_sweeps in ((move, 1), (passed_over + move, 2), (move + passed_over, 1)):
        sweeps[0] = 0
        index = adjoint_tidy._Index()
        result = adjoint_tidy._moves(tuple(body), adjoint_tidy._Counts(tuple(body), (), index), index)
        assert moved[0] in result and move[0] not in result  # the take went, its reader reads adj2
        assert sweeps[0] == expected_sweeps, body


def test_a_fold_after_a_passed_over_candidate_fuses_again():
    """one_lane's fuse: a candidate it passed over, then a fold further on, asks for another round;
    folds with nothing passed over before them do not."""
    from tilec import ir
    from tilec.diagnostics import NO_SPAN
    from tilec.ops.build import call
    from tilec.passes import fuse_tiles

    a, b, c, d, x = _tile_syms("a", "b", "c", "d", "x")
    var = lambda sym: ir.Var(sym, NO_SPAN)  # noqa: E731
    fold = [ir.Assign(b, call("sin", var(x), span=NO_SPAN), NO_SPAN),
            ir.Assign(c, call("add", var(b), var(x), span=NO_SPAN), NO_SPAN)]
    kept = [ir.Assign(a, call("cos", var(x), span=NO_SPAN), NO_SPAN),
            ir.Assign(d, call("tile_sum", var(a), span=NO_SPAN), NO_SPAN)]  # its reader is no map: kept
    for body, again in ((fold, False), (kept + fold, True), (fold + kept, False)):
        rounds = fuse_tiles.Rounds()
        result = fuse_tiles.fuse_round(tuple(body), {a, b}, rounds)
        assert len(result) == len(body) - 1 and fold[0] not in result
        assert rounds.again is again, body


def test_splicing_reads_and_rewrites_like_a_list():
    """adjoint_tidy._Splicing, the statement list its sweeps rewrite: random splices at the
    sweep's position and advances give what the same edits of a Python list give."""
    import random

    from tilec.passes.adjoint_tidy import _Splicing

    rng = random.Random(5)
    for _ in range(200):
        reference = [object() for _ in range(rng.randrange(0, 12))]
        spliced = _Splicing(reference)
        position = 0
        for _ in range(rng.randrange(1, 15)):
            assert len(spliced) == len(reference)
            assert [spliced[k] for k in range(len(reference))] == reference
            a, b = sorted(rng.randrange(0, len(reference) + 1) for _ in range(2))
            assert spliced[a:b] == reference[a:b]
            if position < len(reference) and rng.random() < 0.4:
                spliced.advance()
                position += 1
                continue
            end = rng.randrange(position, len(reference) + 1)
            new = [object() for _ in range(rng.randrange(0, 4))]
            spliced.splice(position, end, new)
            reference[position:end] = new
        assert list(spliced.statements()) == reference


@pytest.mark.parametrize("kind", ["scalar", "tiles"])
def test_a_clean_check_computes_no_source_positions(monkeypatch, kind):
    """A clean `tilec check` derives every adjoint (for its warnings) but prints no position: the
    file's positions (frontend/positions.py, a walk of the whole libcst tree) stay uncomputed. The
    reverse sweep's memo of values once hashed expressions, spans included, which resolved them."""
    from tilec.codegen import sources
    from tilec.frontend import parse
    from tilec.pipeline import compile_source

    computed = []
    monkeypatch.setattr(parse, "node_positions", lambda tree: computed.append(tree) or {})
    module = compile_source(program(60, kind), f"{kind}.py").module
    assert sources.adjoint_warnings(module) == []
    assert computed == []


def test_gpu_forward_of_a_kernel_calling_no_func_is_the_kernel():
    """The CUDA backend's forward kernel is the CPU's own Function when no func is inlined into it
    (normalizing a normalized kernel again changes nothing), so the facts both backends ask of it
    (declarations, locals, ops) are computed once; a kernel calling a func is inlined anew."""
    from tilec.backend_cuda.emit import plan_cuda
    from tilec.codegen import sources
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    with_func = program(6, "tiles").replace(
        "@wp.kernel", "@wp.func\ndef twice(x: float):\n    return x * 2.0\n\n\n@wp.kernel").replace(
        "    wp.tile_store", "    t0 = wp.tile_map(twice, t0)\n    wp.tile_store")
    for source, same in ((program(6, "tiles"), True), (with_func, False)):
        module = normalize_module(compile_source(source, "straight.py").module)
        cuda, = plan_cuda(module, sources.plan_kernels(module))
        assert (cuda.forward is module.kernels[0]) is same


def test_an_adjoint_runs_each_op_rule_once_per_distinct_call(monkeypatch):
    """ops.build.call keeps the type each op's rule gave for the same argument types, constants
    and attributes: deriving the adjoint of 20 or of 160 straight-line tile statements runs the
    rules equally often (each statement builds the same calls), and the types are the rules'."""
    from tilec import ir
    from tilec.ops import build

    ran = []
    rule_type = build._rule_type

    def counted(op, args, attrs):
        ran.append(op)
        return rule_type(op, args, attrs)

    monkeypatch.setattr(build, "_rule_type", counted)
    for n in (20, 160):
        build._TYPES.clear()
        ran.clear()
        plan, = _plans(program(n, "tiles"))
        assert plan.adjoint is not None
        counts = len(ran)
        if n == 20:
            first = counts
    assert 0 < counts == first
    for s in ir.walk_stmts(plan.adjoint.body):  # every kept type is what the rule says
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if type(x) is ir.OpCall and x.op in ("add", "mul", "sin", "cos", "tile_zeros"):
                    assert rule_type(x.op, x.args, dict(x.attrs)) == x.type, x


def test_thread_varying_of_straight_line_code_counts_no_reads(monkeypatch):
    """effects.thread_varying counts the kernel's reads (use_counts) only for a block under a
    varying condition: a straight-line kernel needs none; one with `if i > 0:` still finds the
    value assigned there varying."""
    from tilec import ir
    from tilec.passes import effects
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    counted = []
    use_counts = ir.use_counts
    monkeypatch.setattr(ir, "use_counts", lambda body: counted.append(body) or use_counts(body))
    straight = normalize_module(compile_source(program(30, "scalar"), "s.py").module).kernels[0]
    assert effects._thread_varying(straight, False) == set() and counted == []
    branch = ("import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n    i = wp.tid()\n"
              "    x = A[0]\n    if i > 0:\n        y = x * 2.0\n        A[1] = y\n")
    fn = normalize_module(compile_source(branch, "b.py").module).kernels[0]
    assert {s.name for s in effects._thread_varying(fn, False)} == {"i"} and counted


def test_kernel_facts_are_computed_for_the_forward_kernel_only(monkeypatch):
    """Every file of both targets asks the kernel facts (analysis.py: each a walk of the body) of
    the forward kernel alone; the CPU adjoint's entry takes only its tiles' bytes of the adjoint,
    and the stack it asks for still grows with them."""
    import re

    from tilec import ir
    from tilec.codegen import sources
    from tilec.driver import generate
    from tilec.ir.types import TileT
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    computed = []
    facts = sources._kernel_facts
    monkeypatch.setattr(sources, "_kernel_facts", lambda fn, funcs: computed.append(fn.name) or facts(fn, funcs))
    flags = build_flags(256, target="all", emit_only=True)
    for n in (4, 40):
        computed.clear()
        src = program(n, "tiles")
        module = normalize_module(compile_source(src, "straight.py").module)
        cpp = generate(module, src, flags)["straight.cpp"]
        assert computed == ["k"]
        plan, = sources.plan_kernels(module)
        adjoint_tiles = {s.target for s in plan.adjoint.body if isinstance(getattr(s, "target", None), ir.Sym)
                         and isinstance(s.target.type, TileT)}
        stacks = re.findall(r"tl::launch_blocks\([^,]*, (?:true|false), (\d+),", cpp)
        assert [int(b) for b in stacks][1:] == [2 * sum(t.type.nbytes for t in adjoint_tiles) + 256 * 1024]


def test_symbols_are_interned():
    """ir.Sym: equal (name, id, type) give one object, so the passes' sets and dicts hash and compare
    symbols by identity; copies, pickles and dataclasses.replace keep that, and symbols differing
    in any field stay apart."""
    import copy
    import dataclasses
    import pickle

    from tilec import ir
    from tilec.ir.types import FLOAT32, INT32, TileT

    a = ir.Sym("t", 3, TileT(FLOAT32, (8,)))
    assert ir.Sym("t", 3, TileT(FLOAT32, (8,))) is a and hash(a) == hash(ir.Sym("t", 3, TileT(FLOAT32, (8,))))
    assert copy.copy(a) is a and copy.deepcopy(a) is a and pickle.loads(pickle.dumps(a)) is a
    assert dataclasses.replace(a, id=3) is a
    others = [ir.Sym("u", 3, a.type), ir.Sym("t", 4, a.type), ir.Sym("t", 3, TileT(FLOAT32, (4,))), ir.Sym("t", 3, INT32)]
    assert len({a, *others}) == 5 and all(o != a for o in others)
    assert {a: 1}[ir.Sym("t", 3, TileT(FLOAT32, (8,)))] == 1
    held = len(ir._SYMS)  # held weakly: a symbol nothing refers to leaves the table
    ir.Sym("gone", 7, INT32)
    assert len(ir._SYMS) == held and ir.Sym("gone", 7, INT32) is not None


def test_one_lane_skips_the_folds_of_ops_the_adjoint_lacks(monkeypatch):
    """one_lane's last rewrites fold assignments of tile_view_add (view_adds.py) and tile_matmul
    (_matmul_in_place), each after counting the whole adjoint's reads: they run only when the
    lanes adjoint assigns that op (bench/programs/mlp256.py: both), not for elementwise tile code."""
    from pathlib import Path

    from tilec.passes import one_lane

    ran = []
    fold, in_place = one_lane.fold_view_adds, one_lane._matmul_in_place
    monkeypatch.setattr(one_lane, "fold_view_adds", lambda fn: ran.append("view_add") or fold(fn))
    monkeypatch.setattr(one_lane, "_matmul_in_place", lambda body, products: ran.append("matmul") or in_place(body, products))
    plan, = _plans(program(40, "tiles"))
    assert plan.adjoint is plan.lanes_adjoint and ran == []  # no CPU rewrite: the GPU's tidied form as it is
    mlp = (Path(__file__).resolve().parents[1] / "bench/programs/mlp256.py").read_text()
    assert any(p.adjoint is not p.lanes_adjoint for p in _plans(mlp, "mlp256.py"))
    assert {"view_add", "matmul"} <= set(ran)


def test_renaming_many_reassigned_variables_is_linear():
    """rename_straight_line gives each reassignment a fresh symbol: finding which variable a
    renamed target stands for is a lookup, not a scan of every variable renamed so far (a kernel of
    n variables each reassigned took n^2 / 2 steps). Counted in Python lines executed (the scan made
    no call a profile hook would count): 2x the variables, at most 2.2x the lines."""
    from harness import compile_ir

    from tilec.passes.structure import rename_straight_line

    def lines(n: int) -> int:
        body = "".join(f"    x{i} = A[{i}]\n    x{i} = x{i} * 2.0\n    A[{i}] = x{i}\n" for i in range(n))
        kernel = compile_ir(f"import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n{body}",
                            "renames").kernels[0]
        count = [0]

        def trace(frame, event, arg):
            if event == "line":
                count[0] += 1
            return trace

        sys.settrace(trace)
        try:
            renamed = rename_straight_line(kernel)
        finally:
            sys.settrace(None)
        assert len({s.target for s in renamed.body if hasattr(s, "target")}) == 2 * n  # each reassignment its own symbol
        return count[0]

    small, large = lines(150), lines(300)
    assert large <= 2.2 * small, (small, large)
