"""The CPU adjoint carries no bookkeeping copies (passes/adjoint_tidy.py); values stay exact
(test_gradients.py and test_sample_gradients.py check them against finite differences)."""
from pathlib import Path

from tilec import ir
from tilec.passes.autodiff import adjoint_kernel
from tilec.pipeline import compile_source

BENCH = Path(__file__).resolve().parent.parent / "bench" / "programs"


def _adjoint(name: str, lanes: bool = False) -> ir.Function:
    path = BENCH / f"{name}.py"
    module = compile_source(path.read_text(), str(path)).module
    return adjoint_kernel(module.kernels[0], module, lanes)


def _calls(body, op):
    return [x for s in ir.walk_stmts(body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.OpCall) and x.op == op]


def _loops(fn):
    return [s for s in ir.walk_stmts(fn.body) if isinstance(s, ir.For) and s.body]


def test_gemm_adjoint_loop_is_two_fresh_products_and_two_atomic_adds():
    fn = _adjoint("gemm64")
    loop = _loops(fn)[-1]
    ops = [s.value.op if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) else
           s.expr.op if isinstance(s, ir.ExprStmt) else type(s).__name__ for s in loop.body]
    assert ops.count("tile_matmul") == 2 and ops.count("tile_atomic_add") == 2
    assert "tile_zeros" not in ops and "Assign" not in [type(s).__name__ for s in loop.body
                                                         if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)]
    assert all(len(m.args) == 2 for m in _calls(loop.body, "tile_matmul"))  # beta 0: no read of a zeroed tile


def test_lane_adjoint_is_left_alone():
    fn = _adjoint("gemm64", lanes=True)
    assert _calls(fn.body, "tile_matmul") and all(len(m.args) == 3 for m in _calls(fn.body, "tile_matmul"))


def test_softmax_adjoint_reuses_exp_and_copies_nothing():
    fn = _adjoint("softmax")
    assert len(_calls(fn.body, "exp")) == 1  # the forward replay's only
    copies = [s for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)]
    assert copies == []


def test_mlp_view_adjoint_adds_in_place():
    fn = _adjoint("mlp256")
    assert _calls(fn.body, "tile_view_add")
    assert not any(_calls(loop.body, "tile_zeros") for loop in _loops(fn))  # no zero tile per view


def _elementwise_tile_assigns(fn):
    from tilec.ir.types import TileT
    from tilec.ops import OPS

    return [s for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT)
            and isinstance(s.value, ir.OpCall) and OPS[s.value.op].elementwise]


def _elementwise_reads(e):
    """The symbols e reads through elementwise ops only (not inside a broadcast or a reduction)."""
    from tilec.ops import OPS

    out, stack = set(), [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Var):
            out.add(x.sym)
        elif isinstance(x, ir.OpCall) and OPS[x.op].elementwise:
            stack.extend(x.args)
    return out


def test_elementwise_value_read_once_is_put_back_into_its_reader():
    """Each elementwise tile statement is a loop of its own: a tile the tidied adjoint assigns once
    and reads once, in an elementwise position of the next statement, is computed there instead
    (softmax's `adj_e = v + s` into `(adj_e) * e`; the MLP's pre-activation into the ReLU mask)."""
    for name in ("softmax", "layernorm", "mlp256"):
        fn = _adjoint(name)
        reads, assigned = ir.use_counts(fn.body), ir.assign_counts(fn.body)
        body = [s for s in fn.body if not isinstance(s, ir.For)]
        for first, second in zip(body, body[1:]):
            if first in _elementwise_tile_assigns(fn) and isinstance(second, ir.Assign):
                t = first.target
                reader_is_elementwise = t in _elementwise_reads(second.value) and second in _elementwise_tile_assigns(fn)
                assert not (reader_is_elementwise and reads[t] == 1 and assigned[t] == 1), (name, t)


def test_update_chains_fold_into_one_statement():
    """layernorm's `xc * xc` gives its adjoint two updates of adj_xc in a row, `adj_xc = a + g*xc;
    adj_xc = adj_xc + g*xc`: one statement (one loop) computes both."""
    fn = _adjoint("layernorm")
    body = list(fn.body)
    for first, second in zip(body, body[1:]):
        if isinstance(first, ir.Assign) and isinstance(second, ir.Assign) and first.target is second.target:
            assert not (first in _elementwise_tile_assigns(fn) and second in _elementwise_tile_assigns(fn)
                        and ir.use_counts((second,)).get(first.target) == 1), first.target
    adj_xc = [s for s in _elementwise_tile_assigns(fn) if s.target.name == "adj_xc"]
    assert len(adj_xc) == 1
