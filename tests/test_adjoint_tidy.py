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
